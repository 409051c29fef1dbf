"""The knowledge list over real HTTP through the local stack: gateway, authorizer (with its
signed DynamoDB client against moto's server), Gateway Responses and the function."""

from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.e2e

LIST = "/api/v1/external/knowledge"


def get(
    stack: dict[str, Any], path: str, token: str | None = None, **params: Any
) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return httpx.get(stack["baseUrl"] + path, headers=headers, params=params, timeout=30)


def credentials(stack: dict[str, Any], tenant_index: int = 0) -> dict[str, str]:
    tenant_credentials: dict[str, str] = stack["tenants"][tenant_index]["credentials"]
    return tenant_credentials


@pytest.mark.spec("data-auth-rule-1")
def test_demo_admin_credential_lists_its_tenants_knowledge(stack: dict[str, Any]) -> None:
    answer = get(stack, LIST, credentials(stack)["admin"])
    assert answer.status_code == 200
    body = answer.json()
    assert body["totalItems"] == len(stack["tenants"][0]["knowledgeIds"])
    assert [item["id"] for item in body["items"]] == sorted(stack["tenants"][0]["knowledgeIds"])


@pytest.mark.spec("service-tenant-from-credential")
def test_tenant_isolation_over_http(stack: dict[str, Any]) -> None:
    first = get(stack, LIST, credentials(stack, 0)["admin"]).json()
    second = get(stack, LIST, credentials(stack, 1)["admin"]).json()
    first_ids = {item["id"] for item in first["items"]}
    second_ids = {item["id"] for item in second["items"]}
    assert first_ids and second_ids and not first_ids & second_ids


@pytest.mark.spec("data-auth-rule-1", "errors-401-body")
def test_missing_token_is_401_with_the_exact_error_info(stack: dict[str, Any]) -> None:
    answer = get(stack, LIST)
    assert answer.status_code == 401
    assert answer.json() == {"info": "Authentication required", "reason": "UNAUTHENTICATED"}


@pytest.mark.parametrize(
    "authorization", ["Bearer not-a-real-token", "Bearer", "Basic dXNlcjpwYXNz", "not-a-token"]
)
@pytest.mark.spec("data-auth-rule-1", "errors-401-body")
def test_invalid_authorization_header_is_401(stack: dict[str, Any], authorization: str) -> None:
    answer = httpx.get(
        stack["baseUrl"] + LIST, headers={"Authorization": authorization}, timeout=30
    )
    assert answer.status_code == 401
    assert answer.json() == {"info": "Authentication required", "reason": "UNAUTHENTICATED"}


@pytest.mark.spec("auth-credential-per-direction")
def test_cad_credential_is_401_on_the_data_interface(stack: dict[str, Any]) -> None:
    answer = get(stack, LIST, credentials(stack)["cad"])
    assert answer.status_code == 401
    assert answer.json() == {"info": "Authentication required", "reason": "UNAUTHENTICATED"}


@pytest.mark.spec("endpoints-permission-knowledge-list")
def test_read_only_credential_may_list(stack: dict[str, Any]) -> None:
    assert get(stack, LIST, credentials(stack)["readOnly"]).status_code == 200


@pytest.mark.spec("errors-403-body", "data-auth-rule-2")
def test_credential_without_knowledge_permissions_is_403_with_the_exact_body(
    stack: dict[str, Any],
) -> None:
    answer = get(stack, LIST, credentials(stack)["noKnowledge"])
    assert answer.status_code == 403
    assert answer.content.decode("utf-8") == (
        '{"info": "Access denied — View Knowledge or Manage Knowledge permission required", '
        '"reason": "FORBIDDEN"}'
    )


@pytest.mark.spec("knowledge-list-rule-4")
def test_pagination_over_http(stack: dict[str, Any]) -> None:
    token = credentials(stack)["admin"]
    expected = sorted(stack["tenants"][0]["knowledgeIds"])
    pages = [get(stack, LIST, token, page=n, size=5).json() for n in range(3)]
    assert [item["id"] for page in pages for item in page["items"]] == expected[:15]
    assert pages[0]["totalPages"] == -(-len(expected) // 5)
    capped = get(stack, LIST, token, size=1000).json()
    assert capped["size"] == 200
    bad = get(stack, LIST, token, size=0)
    assert bad.status_code == 400 and "'size'" in bad.json()["info"]


@pytest.mark.spec("knowledge-list-rule-5")
def test_filters_over_http(stack: dict[str, Any]) -> None:
    token = credentials(stack)["admin"]
    body = get(stack, LIST, token, knowledgeType="INSTRUCTION_CARD").json()
    assert body["items"] and {item["knowledgeType"] for item in body["items"]} == {
        "INSTRUCTION_CARD"
    }
    assert get(stack, LIST, token, provider="nobody").json()["totalItems"] == 0


def test_openapi_document_and_swagger_ui_need_no_credential(stack: dict[str, Any]) -> None:
    document = get(stack, "/api/v1/external/openapi.json")
    assert document.status_code == 200
    assert "/api/v1/external/knowledge" in document.json()["paths"]
    page = get(stack, "/api/v1/external/docs")
    assert page.status_code == 200 and "swagger" in page.text.lower()
