"""The OpenAPI description of the radio-traffic upload (kept out of the function's app.py)."""

from typing import Any

from psap.limits import MAX_SRT_BYTES
from psap.media.models import RadioTrafficMedia
from psap.models import ErrorInfo

_COMMON = f"""\
Exactly one of `eventId` and `incidentNumber` (the CAD's incident number; the media goes \
to the incident's event, 409 if the incident has none yet). `channel`: 1-100 characters. \
`recordingStartedAt`: ISO 8601 with an offset or Z; each segment's `startAt`/`endAt` is it \
plus the cue's times.

The file: UTF-8 (a byte-order mark is allowed), at most {MAX_SRT_BYTES} bytes (413), at \
least one cue. Every cue must parse, end after it starts, and start at or after the \
previous cue's end (one channel carries one transmission at a time); cue numbers out of \
sequence are accepted (file order is kept). Any failure is 400 naming the cue number and \
line; nothing is stored.

Speaker convention: a cue whose text begins with an uppercase label of at most 32 letters, \
digits, spaces, `-` or `/`, followed by `:` and a space (`ENGINE 5: on scene`, `DISPATCH: \
copy`, `BATTALION 2: command`) has `speaker` = the label and `text` without it; otherwise \
`speaker` is null.

Idempotent: the same file (same SHA-256) for the same event answers 200 with the record \
already stored (same id; the first upload's channel and start time stand). A new upload \
answers 201."""

_STORES = """\
Stores an SRT (SubRip) transcript of a radio channel for an event: the original file, a \
media record (type RADIO_TRAFFIC) that appears in the event's `media` array, and its \
transcript segments, readable with GET /api/v1/external/mcp/resources/media/{mediaId}."""

UPLOAD_DESCRIPTION = f"""\
{_STORES}

This is the raw form: `Content-Type: application/x-subrip`, the file as the body, the \
fields as query parameters. The same upload as one JSON document (the file in \
`contentBase64`) is POST /api/v1/external/media/radio-traffic/json.

{_COMMON}"""

UPLOAD_JSON_DESCRIPTION = f"""\
{_STORES}

This is the JSON form: `Content-Type: application/json`, body `{{"eventId" | \
"incidentNumber", "channel", "recordingStartedAt", "contentBase64"}}`, no query parameters. \
The file itself as the body is POST /api/v1/external/media/radio-traffic.

{_COMMON}"""


def _responses(media_type: str) -> dict[int, Any]:
    return {
        200: {
            "description": "This file was already stored for the event: the existing record",
            "content": {"application/json": {"model": RadioTrafficMedia}},
        },
        201: {
            "description": "Stored: the new media record with its segments",
            "content": {"application/json": {"model": RadioTrafficMedia}},
        },
        **{
            status: {"description": text, "content": {"application/json": {"model": ErrorInfo}}}
            for status, text in {
                409: "The incident has no event yet",
                413: f"The file is over {MAX_SRT_BYTES} bytes",
                415: f"Content-Type is not {media_type}",
            }.items()
        },
    }


UPLOAD_RESPONSES = _responses("application/x-subrip")
UPLOAD_JSON_RESPONSES = _responses("application/json")
