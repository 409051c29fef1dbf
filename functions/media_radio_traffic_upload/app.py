"""POST /api/v1/external/media/radio-traffic: an SRT radio-traffic transcript for an event."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query

from psap.http.body import request_bytes
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.media.ingest import RadioTrafficTarget, upload_radio_traffic
from psap.media.openapi_text import UPLOAD_DESCRIPTION, UPLOAD_RESPONSES
from psap.models import INT64_MAX, StrictDateTime

app = create_resolver()


@app.post(
    "/api/v1/external/media/radio-traffic",
    summary="Upload a radio-traffic transcript (SRT)",
    description=UPLOAD_DESCRIPTION,
    operation_id="uploadRadioTraffic",
    tags=["Media"],
    responses=UPLOAD_RESPONSES,
)
def upload(
    *,
    event_id: Annotated[
        int | None, Query(alias="eventId", ge=0, le=INT64_MAX, description="Raw form: the event")
    ] = None,
    incident_number: Annotated[
        str | None, Query(alias="incidentNumber", description="Raw form: or the incident")
    ] = None,
    channel: Annotated[str | None, Query(description="Raw form: the radio channel")] = None,
    recording_started_at: Annotated[
        StrictDateTime | None,
        Query(alias="recordingStartedAt", description="Raw form: ISO 8601 with offset or Z"),
    ] = None,
) -> Response[str]:
    principal = current_principal(app)
    request = app.current_event
    outcome = upload_radio_traffic(
        principal.tenant_id,
        request.headers.get("content-type"),
        RadioTrafficTarget(event_id, incident_number, channel, recording_started_at),
        body=request_bytes(request.body, request.is_base64_encoded),
    )
    body = outcome.media.model_dump_json(by_alias=True)
    return Response(201 if outcome.created else 200, "application/json", body)


handler = lambda_handler(app)
