"""GET /api/v1/external/mcp/resources/media/{mediaId}: one media record with its segments."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.media import reading
from psap.media.models import RadioTrafficMedia
from psap.models import INT64_MAX

app = create_resolver()


@app.get(
    "/api/v1/external/mcp/resources/media/<mediaId>",
    summary="Get a media record",
    description="A radio-traffic transcript uploaded for an event (its id is in the event's "
    "media array): channel, recording start, duration, content hash and the transcript "
    "segments (cue number, start/end seconds from the recording start, absolute times, "
    "speaker, text). An unknown id, or one of another tenant, is 404. Media that came with "
    "an imported event document (ids the service did not assign) have no record here.",
    operation_id="getMedia",
    tags=["Media"],
)
def get_media(
    media_id: Annotated[int, Path(alias="mediaId", ge=0, le=INT64_MAX, description="The media id")],
) -> RadioTrafficMedia:
    return reading.get_media(current_principal(app).tenant_id, media_id)


handler = lambda_handler(app)
