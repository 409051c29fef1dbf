"""The local API gateway over real HTTP: routing, the missing-token short cut, open routes."""

import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.e2e

LIST = "/api/v1/external/knowledge"


def _request_line(log: str, request_id: str) -> str:
    lines = [line for line in log.splitlines() if f"requestId={request_id}" in line]
    assert len(lines) == 1, f"expected one request line for {request_id}"
    return lines[0]


@pytest.mark.spec("errors-error-info")
def test_unknown_path_is_404_error_info(stack: dict[str, Any]) -> None:
    answer = httpx.get(stack["baseUrl"] + "/api/v1/external/no-such-thing", timeout=30)
    assert answer.status_code == 404
    assert answer.json() == {"info": "No such operation", "reason": "NOT_FOUND"}


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PATCH", LIST, "GET, POST"),
        ("DELETE", LIST + "/123/versions", "POST"),
        ("PUT", "/cad/v1/incidents", "POST"),
        ("POST", "/api/v1/external/openapi.json", "GET"),
        ("HEAD", "/api/v1/external/user", "GET"),
    ],
)
@pytest.mark.parametrize("credential", ["none", "admin"])
def test_an_undeclared_method_on_a_known_resource_is_405_naming_the_allowed_methods(
    stack: dict[str, Any], method: str, path: str, allowed: str, credential: str
) -> None:
    # Given a resource of the template asked with a method it does not declare, with or
    # without a valid credential (the answer says nothing about the caller)
    headers = {}
    if credential == "admin":
        headers["Authorization"] = f"Bearer {stack['tenants'][0]['credentials']['admin']}"
    answer = httpx.request(method, stack["baseUrl"] + path, headers=headers, timeout=30)
    # Then it is 405 with the resource's methods in Allow (RFC 9110), as ErrorInfo
    assert answer.status_code == 405
    assert answer.headers["Allow"] == allowed
    if method != "HEAD":
        assert answer.json() == {
            "info": f"{method} is not a method of this resource; it has {allowed}",
            "reason": "METHOD_NOT_ALLOWED",
        }


def test_options_on_a_known_resource_names_its_methods(stack: dict[str, Any]) -> None:
    answer = httpx.request("OPTIONS", stack["baseUrl"] + LIST, timeout=30)
    assert answer.status_code == 204
    assert answer.headers["Allow"] == "GET, POST"
    assert answer.content == b""


@pytest.mark.spec("data-auth-rule-1", "errors-401-body")
def test_missing_authorization_is_401_without_calling_the_authorizer(
    stack: dict[str, Any], stack_log: Callable[[], str]
) -> None:
    # When the knowledge list is called without an Authorization header
    answer = httpx.get(stack["baseUrl"] + LIST, timeout=30)
    # Then the body is exactly the spec's ErrorInfo
    assert answer.status_code == 401
    assert answer.json() == {"info": "Authentication required", "reason": "UNAUTHENTICATED"}
    assert answer.headers["WWW-Authenticate"] == "Bearer"
    # And the gateway answered from the identity-source check, not from the authorizer
    line = _request_line(stack_log(), answer.headers["x-amzn-RequestId"])
    assert re.match(rf"GET {LIST} 401 \d+ms ", line)
    assert line.endswith("auth=missing-identity")


def test_openapi_document_is_served_without_authentication(
    stack: dict[str, Any], stack_log: Callable[[], str]
) -> None:
    answer = httpx.get(stack["baseUrl"] + "/api/v1/external/openapi.json", timeout=30)
    assert answer.status_code == 200
    assert answer.json()["openapi"].startswith("3.")
    line = _request_line(stack_log(), answer.headers["x-amzn-RequestId"])
    assert line.endswith("auth=none")


def test_state_file_names_the_template_resources(stack: dict[str, Any]) -> None:
    assert stack["baseUrl"].startswith("http://127.0.0.1:")
    assert stack["awsEndpointUrl"].startswith("http://127.0.0.1:")
    assert stack["region"] == "us-east-1"
    assert stack["resources"]["AuthTable"] == "psap-local-AuthTable"
    assert stack["resources"]["KnowledgeTable"] == "psap-local-KnowledgeTable"
