"""Lambda REQUEST authorizer for both directions; CREDENTIAL_KIND says which one.

Kept light on purpose (it sits on every request): no resolver, no pydantic, no X-Ray SDK
and no boto3 — one signed GetItem over the standard library. Not even Powertools Metrics:
a refusal's metric is the embedded-metric-format keys of its one log line.
"""

import os
import time
from typing import Any

from psap.audit.refusals import audit_refusal
from psap.auth.authorizer import Unauthorized, authorize, with_usage_plan
from psap.auth.credentials import (
    Credential,
    CredentialKind,
    credential_from_attributes,
    lookup_key,
    tenant_limits_key,
)
from psap.auth.refusals import RefusalGuard
from psap.auth.tenant_limits import TenantLimits
from psap.clock import utc_now
from psap.config import auth_table, settings
from psap.observability import logger
from psap.storage.attributes import from_item
from psap.storage.signed_http import SignedDynamoDB

KIND = CredentialKind(settings().credential_kind)
TABLE = auth_table()
store = SignedDynamoDB()
# Refusals this warm container remembers, and its per-source budget (psap.auth.refusals).
guard = RefusalGuard.for_container(settings().legacy_tokens_accepted)
METRICS_NAMESPACE = os.environ.get("POWERTOOLS_METRICS_NAMESPACE", "Psap")
# The last lookup (token hash, credential): a refusal's audit record names the credential the
# token matched without reading it again.
last_lookup: tuple[str, Credential | None] = ("", None)


def find_credential(hashed_token: str) -> Credential | None:
    global last_lookup  # noqa: PLW0603 - one request at a time per Lambda environment
    # Strongly consistent: a token used the instant it is issued must not be refused, and
    # that refusal remembered, because a replica had not seen it yet.
    item = store.get_item(TABLE, lookup_key(hashed_token), consistent=True)
    last_lookup = (hashed_token, credential_from_attributes(from_item(item)) if item else None)
    return last_lookup[1]


def own_limits(tenant_id: int) -> str:
    item = store.get_item(TABLE, tenant_limits_key(tenant_id))
    return str(from_item(item).get("limits", "")) if item else ""


# The tenant's budgets for the answer's RateLimit-Policy (read once per 10 s per container).
tenant_limits = TenantLimits(own_limits).of


def refusal_line(refusal: Unauthorized) -> dict[str, Any]:
    """The refusal's log keys, its CloudWatch metric (embedded metric format) included:
    never the token nor its hash."""
    return {
        "why": refusal.why,
        "reason": refusal.reason.value,
        "interface": KIND.value,
        "credential_id": refusal.credential_id,
        "CredentialRefused": 1,
        "CredentialReads": int(refusal.read),
        "_aws": {
            "Timestamp": int(time.time() * 1000),
            "CloudWatchMetrics": [
                {
                    "Namespace": METRICS_NAMESPACE,
                    "Dimensions": [["interface", "reason"]],
                    "Metrics": [
                        {"Name": "CredentialRefused", "Unit": "Count"},
                        {"Name": "CredentialReads", "Unit": "Count"},
                    ],
                }
            ],
        },
    }


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    try:
        credential, answer = authorize(event, KIND, find_credential, now=utc_now(), guard=guard)
    except Unauthorized as refusal:
        logger.info("credential refused", extra=refusal_line(refusal))
        if refusal.read:
            # A refusal that read the credential table is audited: in the credential's tenant
            # when the token matched one (revoked, expired, the other interface), else in the
            # platform's trail. A malformed, mis-checksummed or remembered token is counted by
            # the log line's metric instead, so a flood costs no message per request.
            audit_refusal(event, KIND.value, last_lookup, now=utc_now())
        raise
    logger.append_keys(tenant_id=credential.tenant_id, credential_id=credential.credential_id)
    logger.info("credential accepted", extra={"interface": KIND.value})
    return with_usage_plan(
        answer, event, credential.tenant_id, limits=tenant_limits(credential.tenant_id)
    )
