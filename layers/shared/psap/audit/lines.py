"""The audit line of one API call, built and written without pydantic.

The shared entrypoint (psap.http.resolver) and the MCP endpoint build the record once per
request that has a tenant, after the route answered, and hand it to the audit queue
(psap.audit.sending); the authorizers build theirs for refused credentials
(psap.audit.refusals). The audit writer appends them to the audit table's chains.

A line holds ids, never payloads or tokens: the credential id (not the secret), the path
parameters, and for writes the ids and versions the operation noted (psap.audit.changes).
Its JSON is exactly AuditRecord's (psap.audit.recording, the contract the writer validates);
it is built as a plain dict so that light functions import no pydantic (a unit test holds the
two together).
"""

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Final

from psap.audit.changes import Change
from psap.clock import format_timestamp

AUDIT_VERSION: Final = 1
# User agents are client-chosen text: bounded, so a record stays small.
_MAX_AGENT_CHARS: Final = 256


@dataclass(frozen=True)
class AuditCaller:
    """Who made the call: the credential, as the record names it."""

    tenant_id: int
    credential_id: str
    principal: str  # the credential's label, as the tenant's admin gave it
    credential_kind: str


@dataclass(frozen=True)
class AuditedCall:
    """What the call was and how it ended."""

    operation: str
    status: int
    started: datetime
    finished: datetime
    changes: Sequence[Change] = ()


def audit_record(
    event: Mapping[str, Any], caller: AuditCaller, call: AuditedCall
) -> dict[str, Any]:
    """The record as its JSON object, keys in AuditRecord's field order."""
    request_context: Mapping[str, Any] = event.get("requestContext") or {}
    identity: Mapping[str, Any] = request_context.get("identity") or {}
    agent = identity.get("userAgent") or _header(event, "user-agent")
    source_ip = identity.get("sourceIp")
    return {
        "auditVersion": AUDIT_VERSION,
        "time": format_timestamp(call.started),
        "tenantId": caller.tenant_id,
        "credentialId": caller.credential_id,
        "principal": caller.principal,
        "credentialKind": caller.credential_kind,
        "operation": call.operation,
        "method": str(event.get("httpMethod", "")),
        "path": str(event.get("path", "")),
        "resourceIds": {
            str(name): str(value) for name, value in (event.get("pathParameters") or {}).items()
        },
        "status": call.status,
        "requestId": str(request_context.get("requestId") or ""),
        "sourceIp": None if source_ip is None else str(source_ip),
        "userAgent": str(agent)[:_MAX_AGENT_CHARS] if agent else None,
        "changes": [asdict(change) for change in call.changes],
        "durationMs": max(0, int((call.finished - call.started).total_seconds() * 1000)),
    }


def audit_text(entry: Mapping[str, Any]) -> str:
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":"))


def _header(event: Mapping[str, Any], name: str) -> str | None:
    for key, value in (event.get("headers") or {}).items():
        if str(key).lower() == name:
            return str(value)
    return None
