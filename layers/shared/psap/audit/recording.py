"""The audit record of one API call: the model of the record psap.audit.lines builds.

The audit writer validates each queued record with it, and the audit store keeps its JSON. The
request path builds the same JSON without pydantic (psap.audit.lines.audit_record).
"""

from pydantic import Field

from psap.audit.changes import Change
from psap.audit.lines import AUDIT_VERSION, audit_text

# What the entrypoints call, here too for the callers that know this module (tools.bench_audit).
from psap.audit.lines import audit_record as audit_record  # noqa: PLC0414
from psap.audit.sending import emit as emit  # noqa: PLC0414
from psap.models import Timestamp, WireModel


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


def audit_line(record: AuditRecord) -> str:
    return audit_text(record.model_dump(mode="json", by_alias=True))
