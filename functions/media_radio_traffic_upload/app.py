"""POST /api/v1/external/media/radio-traffic (the SRT file as the body) and
POST /api/v1/external/media/radio-traffic/json (the same upload as JSON, the file base64)."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query

from psap.http.body import request_bytes
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.media import ingest
from psap.media.ingest import (
    RadioTrafficTarget,
    UploadOutcome,
)
from psap.media.openapi_text import (
    UPLOAD_DESCRIPTION,
    UPLOAD_JSON_DESCRIPTION,
    UPLOAD_JSON_RESPONSES,
    UPLOAD_RESPONSES,
)
from psap.models import INT64_MAX, StrictDateTime

app = create_resolver()


@app.post(
    "/api/v1/external/media/radio-traffic",
    summary="Upload a radio-traffic transcript (the SRT file)",
    description=UPLOAD_DESCRIPTION,
    operation_id="uploadRadioTraffic",
    tags=["Media"],
    responses=UPLOAD_RESPONSES,
)
def upload_radio_traffic(
    *,
    channel: Annotated[str, Query(description="The radio channel, 1-100 characters")],
    recording_started_at: Annotated[
        StrictDateTime,
        Query(alias="recordingStartedAt", description="ISO 8601 with an offset or Z"),
    ],
    event_id: Annotated[
        int | None,
        Query(alias="eventId", ge=0, le=INT64_MAX, description="The event (or incidentNumber)"),
    ] = None,
    incident_number: Annotated[
        str | None,
        Query(alias="incidentNumber", description="Or the incident, by its CAD number"),
    ] = None,
) -> Response[str]:
    principal = current_principal(app)
    request = app.current_event
    outcome = ingest.upload_radio_traffic(
        principal.tenant_id,
        RadioTrafficTarget(event_id, incident_number, channel, recording_started_at),
        body=request_bytes(request.body, request.is_base64_encoded),
    )
    return _answer(outcome)


@app.post(
    "/api/v1/external/media/radio-traffic/json",
    summary="Upload a radio-traffic transcript (JSON, the file base64-encoded)",
    description=UPLOAD_JSON_DESCRIPTION,
    operation_id="uploadRadioTrafficJson",
    tags=["Media"],
    responses=UPLOAD_JSON_RESPONSES,
)
def upload_radio_traffic_json() -> Response[str]:
    principal = current_principal(app)
    request = app.current_event
    # Query parameters are refused before this runs (Operation.no_query).
    outcome = ingest.upload_radio_traffic_json(
        principal.tenant_id,
        body=request_bytes(request.body, request.is_base64_encoded),
    )
    return _answer(outcome)


def _answer(outcome: UploadOutcome) -> Response[str]:
    body = outcome.media.model_dump_json(by_alias=True)
    return Response(201 if outcome.created else 200, "application/json", body)


handler = lambda_handler(app)
