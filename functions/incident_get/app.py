"""GET /api/v1/external/mcp/resources/incidents/{incidentId}: one incident."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.incidents import reading
from psap.incidents.models import Incident
from psap.models import INT64_MAX

app = create_resolver()


@app.get(
    "/api/v1/external/mcp/resources/incidents/<incidentId>",
    summary="Get an incident",
    description="One incident with its notes, responders and event reference. An unknown "
    "id, or one of another tenant, is 404.",
    operation_id="getIncident",
    tags=["Incidents and events"],
)
def get_incident(
    incident_id: Annotated[
        int, Path(alias="incidentId", ge=0, le=INT64_MAX, description="The incident's id")
    ],
) -> Incident:
    return reading.get_incident(current_principal(app).tenant_id, incident_id)


handler = lambda_handler(app)
