"""The Event (mcp) shape of the spec, field for field.

Absent values are null; arrays are always arrays (empty when there is nothing).
"""

from pydantic import Field

from psap.models import Timestamp, WireModel


class EventPersonnel(WireModel):
    id: int | None = None
    user_id: int | None = None
    first_name: str | None = None
    last_name: str | None = None
    personnel_id: str | None = None
    type: str | None = None


class IncidentReference(WireModel):
    """The incident an event belongs to."""

    id: int | None = None
    number: str | None = None


class EventMedia(WireModel):
    id: int | None = None
    type: str | None = None


class Event(WireModel):
    """An event. On writes through psap.events.store, `id` and `incident` are the
    service's: the store assigns the id and keeps the incident link (see that module)."""

    id: int | None = Field(default=None, description="The service's event id")
    number: str | None = Field(default=None, description="The source's event number")
    event_type: str | None = None
    summary: str | None = None
    location: str | None = None
    event_date: Timestamp | None = None
    created_at: Timestamp | None = Field(
        default=None, description="As the source gave it; else when the service first stored it"
    )
    personnel: list[EventPersonnel] = Field(default_factory=list)
    incident: IncidentReference | None = None
    media: list[EventMedia] = Field(default_factory=list)
