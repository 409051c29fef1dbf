"""The Incident (mcp) shape of the spec, field for field.

Absent values are null; arrays are always arrays (empty when there is nothing).
"""

from pydantic import Field

from psap.models import Timestamp, WireModel


class IncidentNote(WireModel):
    note_id: str | None = None
    note: str | None = None
    note_by: str | None = None
    note_at: Timestamp | None = None


class IncidentResponder(WireModel):
    personnel_id: str | None = None
    personnel_first_name: str | None = None
    personnel_last_name: str | None = None
    unit_name: str | None = None
    dispatched_by: str | None = None
    dispatched_at: Timestamp | None = None
    enroute_at: Timestamp | None = None
    arrived_at: Timestamp | None = None
    cleared_at: Timestamp | None = None


class EventReference(WireModel):
    """The event an incident belongs to."""

    id: int | None = None
    number: str | None = None


class Incident(WireModel):
    """An incident. On writes through psap.incidents.store, `id` and `event` are the
    service's: the store assigns the id and keeps the event link (see that module)."""

    id: int | None = Field(default=None, description="The service's incident id")
    number: str | None = Field(default=None, description="The CAD's incident number")
    sys_id: str | None = None
    case_number: str | None = None
    priority: str | None = None
    incident_type: str | None = None
    initial_incident_type: str | None = None
    initial_location: str | None = None
    caller_number: str | None = None
    caller_name: str | None = None
    agency: str | None = None
    agency_type: str | None = None
    location: str | None = None
    response_area: str | None = None
    disposition: str | None = None
    additional_context: str | None = None
    latitude: str | None = None
    longitude: str | None = None
    call_position: str | None = None
    call_taker_id: str | None = None
    call_taker_name: str | None = None
    call_source: str | None = None
    radio_channel: str | None = None
    incident_date: Timestamp | None = None
    dispatch_queue_at: Timestamp | None = None
    call_received_time: Timestamp | None = None
    call_pickup_time: Timestamp | None = None
    call_hangup_time: Timestamp | None = None
    closed_at: Timestamp | None = None
    created_at: Timestamp | None = Field(
        default=None, description="As the source gave it; else when the service first stored it"
    )
    notes: list[IncidentNote] = Field(default_factory=list)
    responders: list[IncidentResponder] = Field(default_factory=list)
    event: EventReference | None = None
