"""The updates we send to a CAD (catalogue version 1) and their payloads.

Every delivery body is a CloudEvents 1.0 structured JSON event:

    {"specversion": "1.0", "id": "evt-...", "source": "urn:psap:tenant:7",
     "type": "incident.accepted", "time": "<ts>", "subject": "<CAD incident number>",
     "datacontenttype": "application/json",
     "dataschema": "urn:psap:webhooks:v1:incident.accepted", "tenantid": 7, "data": {...}}

`dataschema` carries the catalogue version; a change that is not backward compatible gets a
new version (and a new dataschema), additions of optional fields do not. Kinds:

- incident.accepted: the submission was applied (or recognised as older than what is stored)
- incident.rejected: the submission could not be applied; `reasons` say why
- connector.test: sent by `tools.admin connector test` to check an endpoint end to end
- incident.updated: an incident upload (psap.incidents.upload) changed an existing incident
"""

import uuid
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import Field

from psap.models import Timestamp, WireModel

CATALOGUE_VERSION = 1


class UpdateKind(StrEnum):
    INCIDENT_ACCEPTED = "incident.accepted"
    INCIDENT_REJECTED = "incident.rejected"
    CONNECTOR_TEST = "connector.test"
    INCIDENT_UPDATED = "incident.updated"


class IncidentOutcome(StrEnum):
    CREATED = "CREATED"
    UPDATED = "UPDATED"
    CLOSED = "CLOSED"
    # The submission was older (by event time) than what the incident already holds: kept
    # for the record, not applied, so an out-of-order update never overwrites newer data.
    STALE_IGNORED = "STALE_IGNORED"


class SubmissionReference(WireModel):
    """Which submission an update answers: the CAD's own identifiers, echoed."""

    receipt_id: str
    cad_event_id: str  # the submission's CloudEvents id
    cad_source: str
    cad_event_type: str
    cad_incident_number: str | None


class IncidentAccepted(SubmissionReference):
    incident_id: int  # the service's id: GET /api/v1/external/mcp/resources/incidents/{id}
    event_id: int | None  # the service's event record, when the submission carried a call
    outcome: IncidentOutcome


class RejectionReason(WireModel):
    code: str
    message: str
    path: str | None = None  # JSON path into the submission, when one field is to blame


class IncidentRejected(SubmissionReference):
    reasons: list[RejectionReason]


class ConnectorTest(WireModel):
    connector_id: str
    message: str


class IncidentUpdated(WireModel):
    """An incident upload changed an incident the service already held (read it again with
    GET /api/v1/external/mcp/resources/incidents/{incidentId})."""

    incident_id: int
    number: str  # the incident number (also the event's subject)
    source: Literal["UPLOAD"] = "UPLOAD"
    upload_id: str
    line: int  # the line of the uploaded file that changed it


type UpdateData = IncidentAccepted | IncidentRejected | ConnectorTest | IncidentUpdated


class WebhookEvent(WireModel):
    specversion: Literal["1.0"] = "1.0"
    id: str
    source: str
    type: UpdateKind
    time: Timestamp
    subject: str | None
    datacontenttype: Literal["application/json"] = "application/json"
    dataschema: str
    tenantid: int = Field(description="The tenant, as the CAD's own submissions name it")
    data: UpdateData


@dataclass(frozen=True)
class WebhookUpdate:
    """One update for the CADs: its kind, its data, and the CAD incident it is about."""

    kind: UpdateKind
    data: UpdateData
    subject: str | None = None


def build_event(tenant_id: int, update: WebhookUpdate, *, now: datetime) -> WebhookEvent:
    kind, data, subject = update.kind, update.data, update.subject
    return WebhookEvent(
        id=f"evt-{uuid.uuid4().hex}",
        source=f"urn:psap:tenant:{tenant_id}",
        type=kind,
        time=now,
        subject=subject,
        dataschema=f"urn:psap:webhooks:v{CATALOGUE_VERSION}:{kind.value}",
        tenantid=tenant_id,
        data=data,
    )


def serialize(event: WebhookEvent) -> bytes:
    """The one serialization of a delivery body; stored and sent as these exact bytes."""
    return event.model_dump_json(by_alias=True).encode("utf-8")
