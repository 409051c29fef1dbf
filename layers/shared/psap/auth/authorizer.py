"""The Lambda REQUEST authorizer's decision: who is calling, for which tenant.

It authenticates only. Per-operation permissions are checked by the function behind the
route (psap.http.operations), because API Gateway caches this answer per token for
ReauthorizeEvery seconds and applies it to every route of the API.
"""

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from psap.auth.credentials import Credential, CredentialKind
from psap.auth.tokens import bearer_token, token_hash
from psap.budgets import (
    Budget,
    RateLimit,
    budget_for,
    exhausted_field,
    policy_field,
    usage_key_value,
)

# The paths each kind of credential may call. The policy is cached per token and evaluated
# by API Gateway against every later request, so it names the whole family of paths.
_ALLOWED_PATHS = {
    # The data interface and its MCP endpoint ({base_url}/mcp, psap.mcp).
    CredentialKind.PARTNER: ("*/api/v1/external/*", "*/mcp"),
    CredentialKind.CAD: ("POST/cad/v1/*",),
}


class Unauthorized(Exception):
    """Raised to make API Gateway answer 401 (its UNAUTHORIZED gateway response)."""

    def __init__(self, why: str) -> None:
        super().__init__("Unauthorized")
        self.why = why


def header(headers: Mapping[str, str] | None, name: str) -> str | None:
    for key, value in (headers or {}).items():
        if key.lower() == name.lower():
            return value
    return None


def authorize(
    event: Mapping[str, Any],
    kind: CredentialKind,
    find_credential: Callable[[str], Credential | None],
    now: datetime,
) -> tuple[Credential, dict[str, Any]]:
    """Returns the credential and the IAM policy answer, or raises Unauthorized."""
    token = bearer_token(header(event.get("headers"), "Authorization"))
    if token is None:
        raise Unauthorized("no bearer token")
    credential = find_credential(token_hash(token))
    if credential is None:
        raise Unauthorized("unknown token")
    if not credential.usable(kind, now):
        raise Unauthorized(_refusal(credential, kind))
    return credential, policy_answer(credential, str(event["methodArn"]))


def _refusal(credential: Credential, kind: CredentialKind) -> str:
    if credential.revoked:
        return "revoked credential"
    if credential.kind != kind:
        return f"a {credential.kind} credential cannot call the {kind} interface"
    return "expired credential"


def policy_answer(credential: Credential, method_arn: str) -> dict[str, Any]:
    # methodArn: arn:aws:execute-api:{region}:{account}:{apiId}/{stage}/{METHOD}/{path}
    api_arn, stage = method_arn.split("/")[:2]
    resources = [f"{api_arn}/{stage}/{path}" for path in _ALLOWED_PATHS[credential.kind]]
    return {
        "principalId": credential.credential_id,
        "policyDocument": {
            "Version": "2012-10-17",
            "Statement": [
                {"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": resources}
            ],
        },
        # Context values must be strings, numbers or booleans.
        "context": {
            "tenantId": str(credential.tenant_id),
            "credentialId": credential.credential_id,
            "kind": credential.kind.value,
            "permissions": ",".join(sorted(p.value for p in credential.permissions)),
            "label": credential.label,
        },
    }


def with_usage_plan(
    answer: dict[str, Any],
    event: Mapping[str, Any],
    tenant_id: int,
    limits: Mapping[Budget, RateLimit],
) -> dict[str, Any]:
    """The answer with the tenant's API key for its usage plan (API Gateway throttles the
    request with the plan's bucket for this method) and the fields the answers report: the
    budget, its RateLimit-Policy, and what THROTTLED's gateway response says when it is spent.

    Per operation: the authorizer's cache identity includes the method and resource path
    (template.yaml), so a cached answer never reports another operation's budget."""
    budget = budget_for(str(event.get("httpMethod", "")), str(event.get("resource", "")))
    limit = limits[budget]
    context = dict(answer.get("context") or {})
    context.update(
        {
            "budget": budget.value,
            # Spliced into THROTTLED's body: "RATE_LIMITED_READS", "... on the reads budget".
            "rateLimitSuffix": f"_{budget.value.upper()}",
            "rateLimitScope": f" on the tenant's {budget.value} budget",
            "rateLimitPolicy": policy_field(budget, limit),
            "rateLimitExhausted": exhausted_field(budget),
        }
    )
    return {**answer, "usageIdentifierKey": usage_key_value(tenant_id), "context": context}
