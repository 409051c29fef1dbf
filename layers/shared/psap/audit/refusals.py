"""Audit records of refused authentications, sent by the authorizers themselves.

The authorizer sits on every request's cold path: this module imports no boto3 and no
pydantic; it builds the record as psap.audit.lines does and sends it with the signed
standard-library client (psap.storage.signed_http). The record names the credential when
the token matched one (revoked, expired, of the other interface), in that credential's
tenant; a token that matches none has no tenant and goes to the platform's own chains
(tenant PLATFORM_TENANT), which no tenant's export reads. Never the token itself.
"""

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from psap.audit.lines import AuditCaller, AuditedCall, audit_record, audit_text
from psap.auth.authorizer import header
from psap.auth.credentials import Credential
from psap.auth.tokens import bearer_token, token_hash
from psap.config import ConfigurationError, audit_queue_url
from psap.errors import StoreUnavailable
from psap.observability import logger
from psap.storage.signed_http import SignedQueue

# Tenant ids start at 1: 0 is the platform's, for what belongs to no tenant.
PLATFORM_TENANT: Final = 0
REFUSED_OPERATION: Final = "authenticate"
REFUSED_STATUS: Final = 401

_queue: SignedQueue | None = None


def refusal_record(
    event: Mapping[str, Any], kind: str, credential: Credential | None, *, now: datetime
) -> dict[str, Any]:
    return audit_record(
        event,
        AuditCaller(
            tenant_id=credential.tenant_id if credential else PLATFORM_TENANT,
            credential_id=credential.credential_id if credential else "",
            principal=credential.label if credential else "",
            credential_kind=kind,
        ),
        AuditedCall(
            operation=REFUSED_OPERATION,
            status=REFUSED_STATUS,
            started=now,
            finished=now,
        ),
    )


def audit_refusal(
    event: Mapping[str, Any],
    kind: str,
    last_lookup: tuple[str, Credential | None],
    *,
    now: datetime,
) -> None:
    """Sends the refusal's record. `last_lookup` is the authorizer's last credential lookup
    (token hash, credential): it names the credential when it was this request's token.
    A failure is logged (with the record), never raised: the caller is refused either way."""
    global _queue  # noqa: PLW0603 - one client per warm container, made on the first refusal
    token = bearer_token(header(event.get("headers"), "Authorization"))
    hashed, found = last_lookup
    credential = found if token is not None and token_hash(token) == hashed else None
    entry = refusal_record(event, kind, credential, now=now)
    try:
        if _queue is None:
            _queue = SignedQueue()
        _queue.send_message(audit_queue_url(), audit_text(entry))
    except (StoreUnavailable, ConfigurationError) as error:
        logger.error(
            "audit record not delivered", extra={"auditUndelivered": entry, "error": str(error)}
        )
