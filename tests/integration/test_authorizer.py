"""The Lambda authorizer against a real moto server on loopback: it reads the auth table with
its own signed HTTP client, so in-process mocking could not see its calls. Spec:
"Authentication" (data interface 1, CAD to the service 1-2) and per-direction credentials."""

from collections.abc import Callable
from datetime import timedelta
from types import ModuleType
from typing import Any

import pytest

from psap.auth import store
from psap.auth.authorizer import Unauthorized, authorize
from psap.auth.credentials import OPERATOR, CredentialKind
from psap.auth.permissions import Permission
from psap.clock import utc_now
from psap.config import auth_table

P = Permission


@pytest.fixture
def tenant(aws_server: str) -> int:
    return store.create_tenant("Riverside County 911").tenant_id


@pytest.fixture
def authorizer(
    aws_server: str, import_function: Callable[[str], ModuleType], monkeypatch: pytest.MonkeyPatch
) -> Callable[[str], ModuleType]:
    def load(kind: str) -> ModuleType:
        monkeypatch.setenv("CREDENTIAL_KIND", kind)
        return import_function("authorizer")

    return load


def request(load_event: Any, authorization: str | None) -> dict[str, Any]:
    event: dict[str, Any] = load_event("authorizer_request")
    if authorization is None:
        event["headers"].pop("Authorization")
    else:
        event["headers"]["Authorization"] = authorization
    return event


def issue(tenant: int, kind: CredentialKind, *permissions: Permission, **extra: Any) -> str:
    lifetime = {"expires_at": utc_now() + timedelta(days=30), "issued_by": OPERATOR, **extra}
    issued = store.issue_credential(tenant, kind, frozenset(permissions), "test", **lifetime)
    return issued.token


def test_valid_partner_token_is_allowed_with_tenant_and_permissions_in_context(
    tenant: int, authorizer: Any, load_event: Any, lambda_context: Any
) -> None:
    token = issue(tenant, CredentialKind.PARTNER, P.VIEW_KNOWLEDGE, P.MANAGE_USERS)
    answer = authorizer("partner").handler(request(load_event, f"Bearer {token}"), lambda_context)
    assert answer["context"]["tenantId"] == str(tenant)
    assert answer["context"]["permissions"] == "MANAGE_USERS,VIEW_KNOWLEDGE"
    (statement,) = answer["policyDocument"]["Statement"]
    assert statement["Effect"] == "Allow"
    # Cached per token for every route: the policy names the data interface and its MCP
    # endpoint only.
    assert statement["Resource"] == [
        "arn:aws:execute-api:us-east-1:123456789012:abcdef1234/prod/*/api/v1/external/*",
        "arn:aws:execute-api:us-east-1:123456789012:abcdef1234/prod/*/mcp",
    ]
    assert token not in str(answer)


@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Bearer unknown-token", "token"],
)
def test_missing_or_invalid_token_is_unauthorized(
    tenant: int, authorizer: Any, load_event: Any, lambda_context: Any, authorization: str | None
) -> None:
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        authorizer("partner").handler(request(load_event, authorization), lambda_context)


def test_revoked_token_is_unauthorized(
    tenant: int, authorizer: Any, load_event: Any, lambda_context: Any
) -> None:
    token = issue(tenant, CredentialKind.PARTNER, P.VIEW_KNOWLEDGE)
    (credential,) = store.list_credentials(tenant)
    store.revoke_credential(tenant, credential.credential_id)
    with pytest.raises(Unauthorized):
        authorizer("partner").handler(request(load_event, f"Bearer {token}"), lambda_context)


def test_expired_token_is_unauthorized(tenant: int, load_event: Any) -> None:
    # Given a credential that expires in an hour, when it is used two hours later
    token = issue(
        tenant, CredentialKind.PARTNER, P.VIEW_KNOWLEDGE, expires_at=utc_now() + timedelta(hours=1)
    )
    from psap.auth.credentials import credential_from_attributes, lookup_key
    from psap.storage.attributes import from_item
    from psap.storage.signed_http import SignedDynamoDB

    client = SignedDynamoDB()

    def find(hashed: str) -> Any:
        item = client.get_item(auth_table(), lookup_key(hashed))
        return credential_from_attributes(from_item(item)) if item else None

    event = request(load_event, f"Bearer {token}")
    authorize(event, CredentialKind.PARTNER, find, utc_now())  # still valid now
    with pytest.raises(Unauthorized) as refusal:
        authorize(event, CredentialKind.PARTNER, find, utc_now() + timedelta(hours=2))
    assert refusal.value.why == "expired credential"


def test_cad_credential_never_passes_the_data_interface(
    tenant: int, authorizer: Any, load_event: Any, lambda_context: Any
) -> None:
    token = issue(tenant, CredentialKind.CAD)
    with pytest.raises(Unauthorized):
        authorizer("partner").handler(request(load_event, f"Bearer {token}"), lambda_context)


def test_partner_credential_never_passes_cad_intake(
    tenant: int, authorizer: Any, load_event: Any, lambda_context: Any
) -> None:
    token = issue(tenant, CredentialKind.PARTNER, *Permission)
    event = request(load_event, f"Bearer {token}")
    event["methodArn"] = (
        "arn:aws:execute-api:us-east-1:123456789012:abcdef1234/prod/POST/cad/v1/incidents"
    )
    with pytest.raises(Unauthorized):
        authorizer("cad").handler(event, lambda_context)


def test_cad_credential_passes_cad_intake_for_its_own_tenant_only(
    tenant: int, authorizer: Any, load_event: Any, lambda_context: Any
) -> None:
    token = issue(tenant, CredentialKind.CAD)
    event = request(load_event, f"Bearer {token}")
    event["methodArn"] = (
        "arn:aws:execute-api:us-east-1:123456789012:abcdef1234/prod/POST/cad/v1/incidents"
    )
    answer = authorizer("cad").handler(event, lambda_context)
    assert answer["context"]["tenantId"] == str(tenant)
    assert answer["policyDocument"]["Statement"][0]["Resource"] == [
        "arn:aws:execute-api:us-east-1:123456789012:abcdef1234/prod/POST/cad/v1/*"
    ]


def test_tokens_are_stored_only_as_hashes(tenant: int) -> None:
    from psap.storage.dynamodb import dynamodb

    token = issue(tenant, CredentialKind.PARTNER, P.VIEW_KNOWLEDGE)
    assert len(token) >= 43  # 256 random bits, base64url, after the prefix
    items = dynamodb().scan(TableName=auth_table())["Items"]
    assert token not in str(items)


def test_an_unreachable_table_is_an_error_not_a_401(
    tenant: int,
    authorizer: Any,
    load_event: Any,
    lambda_context: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A store failure must surface as an authorizer failure (5xx), not as "bad token".
    token = issue(tenant, CredentialKind.PARTNER, P.VIEW_KNOWLEDGE)
    monkeypatch.setenv("AUTH_TABLE", "no-such-table")
    with pytest.raises(Exception) as failure:
        authorizer("partner").handler(request(load_event, f"Bearer {token}"), lambda_context)
    assert not isinstance(failure.value, Unauthorized)
