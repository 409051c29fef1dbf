"""The audit record of one API call, written as one structured log line.

The shared entrypoint (psap.http.resolver) calls `record_request` once per request that has
a tenant, after the route answered. Nothing is written to a store on the request path: the
line goes to the function's log (stdout), and the log group's subscription filter
(template.yaml, `{ $.auditVersion = 1 }`) hands the lines to the audit writer function,
which appends them to the audit table. Printing costs microseconds; a DynamoDB write would
cost a round trip on every read.

A record holds ids, never payloads or tokens: the credential id (not the secret), the path
parameters, and for writes the ids and versions the operation noted (psap.audit.changes).
"""

import json
import sys
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from pydantic import Field

from psap.audit.changes import Change
from psap.models import Timestamp, WireModel

AUDIT_VERSION: Final = 1
# User agents are client-chosen text: bounded, so a record stays small.
_MAX_AGENT_CHARS: Final = 256


class AuditRecord(WireModel):
    audit_version: int = AUDIT_VERSION
    time: Timestamp
    tenant_id: int
    credential_id: str
    principal: str = Field(description="The credential's label")
    credential_kind: str
    operation: str = Field(description="The operationId, e.g. getIncident")
    method: str
    path: str = Field(description="The path as called")
    resource_ids: dict[str, str] = Field(description="The path parameters")
    status: int
    request_id: str
    source_ip: str | None
    user_agent: str | None
    changes: list[Change] = Field(default_factory=list)
    duration_ms: int


def audit_record(
    event: Mapping[str, Any],
    *,
    tenant_id: int,
    credential_id: str,
    principal: str,
    credential_kind: str,
    operation: str,
    status: int,
    started: datetime,
    finished: datetime,
    changes: list[Change],
) -> AuditRecord:
    request_context: Mapping[str, Any] = event.get("requestContext") or {}
    identity: Mapping[str, Any] = request_context.get("identity") or {}
    agent = identity.get("userAgent") or _header(event, "user-agent")
    return AuditRecord(
        time=started,
        tenant_id=tenant_id,
        credential_id=credential_id,
        principal=principal,
        credential_kind=credential_kind,
        operation=operation,
        method=str(event.get("httpMethod", "")),
        path=str(event.get("path", "")),
        resource_ids={
            str(name): str(value) for name, value in (event.get("pathParameters") or {}).items()
        },
        status=status,
        request_id=str(request_context.get("requestId") or ""),
        source_ip=identity.get("sourceIp"),
        user_agent=str(agent)[:_MAX_AGENT_CHARS] if agent else None,
        changes=changes,
        duration_ms=max(0, int((finished - started).total_seconds() * 1000)),
    )


def audit_line(record: AuditRecord) -> str:
    return json.dumps(
        record.model_dump(mode="json", by_alias=True), ensure_ascii=False, separators=(",", ":")
    )


def emit(record: AuditRecord) -> None:
    """One line on stdout, written whole (Lambda sends each stdout line as one log event)."""
    sys.stdout.write(audit_line(record) + "\n")
    sys.stdout.flush()


def _header(event: Mapping[str, Any], name: str) -> str | None:
    for key, value in (event.get("headers") or {}).items():
        if str(key).lower() == name:
            return str(value)
    return None
