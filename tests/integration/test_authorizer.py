"""The Lambda authorizer against a real moto server on loopback: it reads the auth table with
its own signed HTTP client, so in-process mocking could not see its calls. Spec:
"Authentication" (data interface 1, CAD to the service 1-2) and per-direction credentials."""

from collections.abc import Callable, Iterator
from datetime import timedelta
from secrets import token_urlsafe
from types import ModuleType
from typing import Any

import pytest

from local import iam_enforcement
from psap.auth import store
from psap.auth.authorizer import Unauthorized, authorize
from psap.auth.credentials import OPERATOR, CredentialKind, tenant_limits_key
from psap.auth.permissions import Permission
from psap.auth.refusals import REFUSALS_PER_SOURCE
from psap.auth.tokens import new_token
from psap.budgets import usage_key_value
from psap.clock import utc_now
from psap.config import auth_table
from psap.storage.dynamodb import dynamodb

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
    event: dict[str, Any] = load_event("partner_authorizer")
    if authorization is None:
        event["headers"].pop("Authorization")
    else:
        event["headers"]["Authorization"] = authorization
    return event


def issue(tenant: int, kind: CredentialKind, *permissions: Permission, **extra: Any) -> str:
    lifetime = {"expires_at": utc_now() + timedelta(days=30), "issued_by": OPERATOR, **extra}
    issued = store.issue_credential(tenant, kind, frozenset(permissions), label="test", **lifetime)
    return issued.token


@pytest.mark.spec("data-auth-rule-1", "service-tenant-from-credential")
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
@pytest.mark.spec("data-auth-rule-1")
def test_missing_or_invalid_token_is_unauthorized(
    tenant: int, authorizer: Any, load_event: Any, lambda_context: Any, authorization: str | None
) -> None:
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        authorizer("partner").handler(request(load_event, authorization), lambda_context)


@pytest.mark.spec("data-auth-rule-1")
def test_revoked_token_is_unauthorized(
    tenant: int, authorizer: Any, load_event: Any, lambda_context: Any
) -> None:
    token = issue(tenant, CredentialKind.PARTNER, P.VIEW_KNOWLEDGE)
    (credential,) = store.list_credentials(tenant)
    store.revoke_credential(tenant, credential.credential_id)
    with pytest.raises(Unauthorized):
        authorizer("partner").handler(request(load_event, f"Bearer {token}"), lambda_context)


@pytest.mark.spec("data-auth-rule-1")
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
    authorize(event, CredentialKind.PARTNER, find, now=utc_now())  # still valid now
    with pytest.raises(Unauthorized) as refusal:
        authorize(event, CredentialKind.PARTNER, find, now=utc_now() + timedelta(hours=2))
    assert refusal.value.why == "expired credential"


@pytest.mark.spec("auth-credential-per-direction")
def test_cad_credential_never_passes_the_data_interface(
    tenant: int, authorizer: Any, load_event: Any, lambda_context: Any
) -> None:
    token = issue(tenant, CredentialKind.CAD)
    with pytest.raises(Unauthorized):
        authorizer("partner").handler(request(load_event, f"Bearer {token}"), lambda_context)


@pytest.mark.spec("auth-credential-per-direction", "cad-auth-rule-1")
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


@pytest.mark.spec("cad-auth-rule-1", "cad-auth-rule-2")
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


# ---------------------------------------------------------------------------- request budgets


def test_the_answer_names_the_tenants_usage_plan_key_and_the_operations_budget(
    tenant: int, authorizer: Any, load_event: Any, lambda_context: Any
) -> None:
    token = issue(tenant, CredentialKind.PARTNER, P.VIEW_KNOWLEDGE)
    app = authorizer("partner")
    answer = app.handler(request(load_event, f"Bearer {token}"), lambda_context)
    # API Gateway throttles the request with this key's usage plan (ApiKeySourceType AUTHORIZER)
    assert answer["usageIdentifierKey"] == usage_key_value(tenant)
    # GET /knowledge is a read: the template's default reads budget, named for the answers
    assert answer["context"]["budget"] == "reads"
    assert answer["context"]["rateLimitPolicy"] == '"reads";q=100;w=1;burst=200'
    assert answer["context"]["rateLimitExhausted"] == '"reads";r=0;t=1'
    assert answer["context"]["rateLimitSuffix"] == "_READS"
    search = request(load_event, f"Bearer {token}")
    search["httpMethod"] = "GET"
    search["resource"] = "/api/v1/external/mcp/resources/resource-center/search"
    assert app.handler(search, lambda_context)["context"]["budget"] == "search"


def test_a_tenants_own_limits_are_the_policy_its_answers_name(
    tenant: int, authorizer: Any, load_event: Any, lambda_context: Any
) -> None:
    # Given the operator gave the tenant its own reads budget (psap-admin tenant limits set)
    dynamodb().put_item(
        TableName=auth_table(), Item={**tenant_limits_key(tenant), "limits": {"S": "reads=7/9"}}
    )
    token = issue(tenant, CredentialKind.PARTNER, P.VIEW_KNOWLEDGE)
    answer = authorizer("partner").handler(request(load_event, f"Bearer {token}"), lambda_context)
    assert answer["context"]["rateLimitPolicy"] == '"reads";q=7;w=1;burst=9'


# ------------------------------------------------- the cheap refusal path, counted at the AWS


@pytest.fixture
def credential_reads(aws_server: str) -> Iterator[list[str]]:
    """Every GetItem of the credential table the embedded AWS serves to an authorizer's role
    from now on (IAM checks each request, so it sees each one)."""
    reads: list[str] = []

    def record(caller: str, action: str, resource: str, allowed: bool) -> None:
        by_authorizer = "AuthorizerFunction" in caller
        if by_authorizer and action == "dynamodb:GetItem" and resource.endswith(auth_table()):
            reads.append(caller)

    stop = iam_enforcement.listen(record)
    yield reads
    stop()


def refused_by(handler: Callable[..., Any], event: dict[str, Any], context: Any) -> None:
    with pytest.raises(Unauthorized):
        handler(event, context)


def from_source(event: dict[str, Any], source_ip: str) -> dict[str, Any]:
    event["requestContext"]["identity"]["sourceIp"] = source_ip
    return event


def test_a_flood_of_bad_tokens_costs_no_read_after_the_first(
    tenant: int,
    authorizer: Any,
    load_event: Any,
    lambda_context: Any,
    credential_reads: list[str],
) -> None:
    # Given a warm partner authorizer and a valid token
    app = authorizer("partner")
    handler = app.handler
    # (the tenant's limits are read once per 10 s per container: read now, so that only
    # credential reads are counted below)
    app.tenant_limits(tenant)
    credential_reads.clear()
    valid = issue(tenant, CredentialKind.PARTNER, P.VIEW_KNOWLEDGE)
    unknown = new_token("partner")  # well-formed, checksum right, never issued
    # When malformed and bad-checksum tokens flood in from one source and from many
    for number in range(60):
        source = "198.51.100.7" if number % 2 else f"10.0.0.{number}"
        typo = valid[:-1] + ("A" if valid[-1] != "A" else "B")
        for token in (f"psap_partner_{number}", typo):
            event = from_source(request(load_event, f"Bearer {token}"), source)
            refused_by(handler, event, lambda_context)
    # Then not one credential was read
    assert credential_reads == []
    # When one unknown well-formed token is replayed from many sources
    for number in range(60):
        event = from_source(request(load_event, f"Bearer {unknown}"), f"10.0.1.{number}")
        refused_by(handler, event, lambda_context)
    # Then only the first one was read
    assert len(credential_reads) == 1
    # And the valid token still works, from the flooding source too
    event = from_source(request(load_event, f"Bearer {valid}"), "198.51.100.7")
    assert handler(event, lambda_context)["context"]["tenantId"] == str(tenant)
    assert len(credential_reads) == 2


def test_a_legacy_token_still_works_and_a_legacy_shaped_flood_is_bounded(
    tenant: int,
    authorizer: Any,
    load_event: Any,
    lambda_context: Any,
    credential_reads: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a token issued before the checksum
    monkeypatch.setattr(store, "new_token", lambda kind: f"psap_{kind}_{token_urlsafe(32)}")
    legacy = issue(tenant, CredentialKind.PARTNER, P.VIEW_KNOWLEDGE)
    assert len(legacy) == len("psap_partner_") + 43
    app = authorizer("partner")
    handler = app.handler
    # (the tenant's limits are read once per 10 s per container: read now, so that only
    # credential reads are counted below)
    app.tenant_limits(tenant)
    credential_reads.clear()
    # Then it works
    assert handler(request(load_event, f"Bearer {legacy}"), lambda_context)["context"]
    assert len(credential_reads) == 1
    # When random tokens of its shape flood in from one source
    for _ in range(100):
        flood = f"Bearer psap_partner_{token_urlsafe(32)}"
        refused_by(handler, from_source(request(load_event, flood), "198.51.100.7"), lambda_context)
    # Then the source's refusal budget bounds the reads
    assert len(credential_reads) == 1 + REFUSALS_PER_SOURCE
    # And the legacy token still works from any other source
    assert handler(request(load_event, f"Bearer {legacy}"), lambda_context)["context"]


def test_a_revoked_token_refused_once_stays_refused_without_a_read(
    tenant: int,
    authorizer: Any,
    load_event: Any,
    lambda_context: Any,
    credential_reads: list[str],
) -> None:
    token = issue(tenant, CredentialKind.PARTNER, P.VIEW_KNOWLEDGE)
    app = authorizer("partner")
    handler = app.handler
    # (the tenant's limits are read once per 10 s per container: read now, so that only
    # credential reads are counted below)
    app.tenant_limits(tenant)
    credential_reads.clear()
    handler(request(load_event, f"Bearer {token}"), lambda_context)
    handler(request(load_event, f"Bearer {token}"), lambda_context)
    assert len(credential_reads) == 2  # an accepted token is read every time
    (credential,) = store.list_credentials(tenant)
    store.revoke_credential(tenant, credential.credential_id)
    for _ in range(5):
        refused_by(handler, request(load_event, f"Bearer {token}"), lambda_context)
    assert len(credential_reads) == 3
