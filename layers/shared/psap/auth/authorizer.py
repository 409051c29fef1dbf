"""The Lambda REQUEST authorizer's decision: who is calling, for which tenant.

It authenticates only. Per-operation permissions are checked by the function behind the
route (psap.http.operations), because API Gateway caches this answer per token for
ReauthorizeEvery seconds and applies it to every route of the API.
"""

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from psap.auth.credentials import Credential, CredentialKind
from psap.auth.refusals import RefusalGuard, RefusalReason
from psap.auth.tokens import TokenForm, bearer_token, token_form, token_hash
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

    def __init__(
        self,
        why: str,
        reason: RefusalReason,
        *,
        credential_id: str | None = None,
        read: bool = False,
    ) -> None:
        super().__init__("Unauthorized")
        self.why = why
        self.reason = reason
        self.credential_id = credential_id
        self.read = read  # whether this refusal cost a credential read


def header(headers: Mapping[str, str] | None, name: str) -> str | None:
    for key, value in (headers or {}).items():
        if key.lower() == name.lower():
            return value
    return None


def source_ip(event: Mapping[str, Any]) -> str | None:
    identity = (event.get("requestContext") or {}).get("identity") or {}
    found = identity.get("sourceIp")
    return str(found) if found else None


# What a token's form alone decides, before any read.
_FORM_REFUSALS = {
    TokenForm.MALFORMED: ("malformed token", RefusalReason.MALFORMED),
    TokenForm.BAD_CHECKSUM: ("token checksum mismatch", RefusalReason.BAD_CHECKSUM),
}


def authorize(
    event: Mapping[str, Any],
    kind: CredentialKind,
    find_credential: Callable[[str], Credential | None],
    *,
    now: datetime,
    guard: RefusalGuard | None = None,
) -> tuple[Credential, dict[str, Any]]:
    """Returns the credential and the IAM policy answer, or raises Unauthorized.

    The cheap refusal path (docs/design.md): a token's form is checked offline, a token
    refused moments ago is refused again from the container's memory, and a source that keeps
    presenting bad tokens gets no read for one whose form cannot be checked offline. Only
    refusals are remembered: an accepted token is read every time.
    """
    guard = guard or RefusalGuard.for_container()
    source = source_ip(event)
    seconds = now.timestamp()
    try:
        return _authorize(event, kind, find_credential, now=now, guard=guard, source=source)
    except Unauthorized:
        guard.budget.spend(source, seconds)
        raise


def _authorize(
    event: Mapping[str, Any],
    kind: CredentialKind,
    find_credential: Callable[[str], Credential | None],
    *,
    now: datetime,
    guard: RefusalGuard,
    source: str | None,
) -> tuple[Credential, dict[str, Any]]:
    token = bearer_token(header(event.get("headers"), "Authorization"))
    if token is None:
        raise Unauthorized("no bearer token", RefusalReason.MISSING)
    form = token_form(token, kind.value)
    if form in _FORM_REFUSALS:
        raise Unauthorized(*_FORM_REFUSALS[form])
    if form is TokenForm.OTHER_KIND:
        # The prefix names the kind the token was issued for; the record always agrees.
        why = f"a token of another kind cannot call the {kind} interface"
        raise Unauthorized(why, RefusalReason.OTHER_KIND)
    if form is TokenForm.LEGACY and not guard.legacy_tokens_accepted:
        raise Unauthorized("retired token form (no checksum)", RefusalReason.RETIRED_FORM)
    seconds = now.timestamp()
    hashed = token_hash(token)
    remembered = guard.memory.recall(hashed, seconds)
    if remembered is not None:
        raise Unauthorized(
            remembered.why, RefusalReason.REMEMBERED, credential_id=remembered.credential_id
        )
    if form is TokenForm.LEGACY and guard.budget.exhausted(source, seconds):
        # Only a read tells a legacy token from a random one: refused unread while its source
        # floods; a checksummed token from the same source is still read.
        raise Unauthorized("refusal budget of the source exhausted", RefusalReason.OVER_BUDGET)
    credential = find_credential(hashed)
    if credential is None:
        guard.memory.remember(hashed, seconds, "unknown token", credential_id=None)
        raise Unauthorized("unknown token", RefusalReason.UNKNOWN, read=True)
    if not credential.usable(kind, now):
        why, reason = _refusal(credential, kind)
        guard.memory.remember(hashed, seconds, why, credential_id=credential.credential_id)
        raise Unauthorized(why, reason, credential_id=credential.credential_id, read=True)
    return credential, policy_answer(credential, str(event["methodArn"]))


def _refusal(credential: Credential, kind: CredentialKind) -> tuple[str, RefusalReason]:
    if credential.revoked:
        return "revoked credential", RefusalReason.REVOKED
    if credential.kind != kind:
        why = f"a {credential.kind} credential cannot call the {kind} interface"
        return why, RefusalReason.OTHER_KIND
    return "expired credential", RefusalReason.EXPIRED


def policy_answer(
    credential: Credential, method_arn: str, paths: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """`paths`: the family of paths allowed, the credential kind's unless given (the
    console's session authorizer allows the console's paths only)."""
    # methodArn: arn:aws:execute-api:{region}:{account}:{apiId}/{stage}/{METHOD}/{path}
    api_arn, stage = method_arn.split("/")[:2]
    allowed = _ALLOWED_PATHS[credential.kind] if paths is None else paths
    resources = [f"{api_arn}/{stage}/{path}" for path in allowed]
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
    *,
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
