"""GET /api/v1/external/mcp/resources/events/{eventId}: one event."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from psap.events import reading
from psap.events.models import Event
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.models import INT64_MAX

app = create_resolver()


@app.get(
    "/api/v1/external/mcp/resources/events/<eventId>",
    summary="Get an event",
    description="One event with its personnel, incident reference and media. An unknown "
    "id, or one of another tenant, is 404.",
    operation_id="getEvent",
    tags=["Incidents and events"],
)
def get_event(
    event_id: Annotated[
        int, Path(alias="eventId", ge=0, le=INT64_MAX, description="The event's id")
    ],
) -> Event:
    return reading.get_event(current_principal(app).tenant_id, event_id)


handler = lambda_handler(app)
