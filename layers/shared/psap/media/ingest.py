"""Radio-traffic uploads: an SRT transcript of a radio channel, for an event.

Two operations, one upload:
- POST /api/v1/external/media/radio-traffic (raw): Content-Type application/x-subrip, the
  file as the body, the fields as query parameters (eventId or incidentNumber, channel,
  recordingStartedAt);
- POST /api/v1/external/media/radio-traffic/json: Content-Type application/json,
  {eventId | incidentNumber, channel, recordingStartedAt, contentBase64}, no query parameters.
Two paths rather than one with two media types, so that each form's parameters and body are
stated by the contract instead of by a rule only the description can say. The other form's
media type is 415 naming the operation that takes it (psap.http.operations).

Checks, all before anything is written: the form (415, 400), the file's size (413), the
file itself (400, psap.media.subrip), then the event (404; an incident without an event is
409). A file already stored for the event (same SHA-256) answers its existing record
(created False: 200, same id), whatever the other fields say; the first upload's channel
and start time stand.
"""

import base64
import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import ValidationError

from psap.audit.changes import note_change
from psap.clock import utc_now
from psap.config import media_bucket
from psap.errors import Conflict, InvalidInput, NotFound, PayloadTooLarge
from psap.events import store as events_store
from psap.events.models import Event
from psap.incidents import store as incidents_store
from psap.limits import MAX_SRT_BYTES
from psap.media import store, subrip
from psap.media.models import RadioTrafficMedia, RadioTrafficUpload, TranscriptSegment
from psap.observability import logger

_MAX_CHANNEL_CHARS = 100


@dataclass(frozen=True)
class RadioTrafficTarget:
    """Where a recording belongs and what it is: the fields of either form."""

    event_id: int | None = None
    incident_number: str | None = None
    channel: str | None = None
    recording_started_at: datetime | None = None


@dataclass(frozen=True)
class Transcript:
    """A parsed SRT file: the channel it was recorded on, when, and its cues."""

    channel: str
    started: datetime
    cues: list[subrip.Cue]


@dataclass(frozen=True)
class StoredContent:
    """The uploaded bytes as the media record describes them."""

    sha256: str
    size_bytes: int


@dataclass(frozen=True)
class UploadOutcome:
    media: RadioTrafficMedia
    created: bool  # False: this content was already stored for the event (idempotent replay)


def upload_radio_traffic(
    tenant_id: int, target: RadioTrafficTarget, *, body: bytes, now: datetime | None = None
) -> UploadOutcome:
    """The raw form: the file as the body, the fields as query parameters (the body rule of
    the operation has admitted application/x-subrip only)."""
    return ingest(tenant_id, target, body, now=now)


def upload_radio_traffic_json(
    tenant_id: int, *, body: bytes, now: datetime | None = None
) -> UploadOutcome:
    """The JSON form: the fields and the file (contentBase64) in one JSON body."""
    target, content = _json_upload(body)
    return ingest(tenant_id, target, content, now=now)


def ingest(
    tenant_id: int, target: RadioTrafficTarget, content: bytes, *, now: datetime | None = None
) -> UploadOutcome:
    if len(content) > MAX_SRT_BYTES:
        raise PayloadTooLarge(
            f"The SRT file is {len(content)} bytes; at most {MAX_SRT_BYTES} are accepted"
        )
    channel, started = _checked_fields(target)
    cues = subrip.parse(subrip.decode(content))
    bucket = media_bucket()
    event = _resolve_event(tenant_id, target)
    event_id = int(event.id or 0)
    sha = hashlib.sha256(content).hexdigest()
    existing = store.find_media_by_content(tenant_id, event_id, sha)
    if existing is not None:
        return _replay(tenant_id, existing)
    media = radio_traffic_media(
        store.next_media_id(),
        event,
        Transcript(channel, started, cues),
        content=StoredContent(sha, len(content)),
        now=now or utc_now(),
    )
    try:
        store.create_radio_traffic(bucket, tenant_id, media, original=content)
    except store.DuplicateContent:
        found = store.find_media_by_content(tenant_id, event_id, sha)
        if found is None:
            raise
        return _replay(tenant_id, found)
    note_change("media", media.id, "CREATED")
    logger.info(
        "radio traffic stored",
        extra={"media_id": media.id, "event_id": event_id, "cues": media.cue_count},
    )
    return UploadOutcome(media, created=True)


def radio_traffic_media(
    media_id: int, event: Event, transcript: Transcript, *, content: StoredContent, now: datetime
) -> RadioTrafficMedia:
    started, cues = transcript.started, transcript.cues
    segments = [
        TranscriptSegment(
            cue=cue.number,
            start_seconds=round(cue.start.total_seconds(), 3),
            end_seconds=round(cue.end.total_seconds(), 3),
            start_at=started + cue.start,
            end_at=started + cue.end,
            speaker=cue.speaker,
            text=cue.text,
        )
        for cue in cues
    ]
    incident = event.incident
    return RadioTrafficMedia(
        id=media_id,
        event_id=int(event.id or 0),
        incident_id=incident.id if incident else None,
        incident_number=incident.number if incident else None,
        channel=transcript.channel,
        recording_started_at=started,
        duration_seconds=round(max(cue.end for cue in cues).total_seconds(), 3),
        cue_count=len(cues),
        content_sha256=content.sha256,
        size_bytes=content.size_bytes,
        created_at=now,
        segments=segments,
    )


def _replay(tenant_id: int, media_id: int) -> UploadOutcome:
    media = store.get_radio_traffic(media_bucket(), tenant_id, media_id)
    if media is None:
        raise NotFound(f"media {media_id} not found")
    note_change("media", media.id, "UNCHANGED")
    return UploadOutcome(media, created=False)


def _checked_fields(target: RadioTrafficTarget) -> tuple[str, datetime]:
    number = (target.incident_number or "").strip()
    if (target.event_id is None) == (not number):
        raise InvalidInput("Give exactly one of eventId and incidentNumber")
    channel = (target.channel or "").strip()
    if not channel or len(channel) > _MAX_CHANNEL_CHARS:
        raise InvalidInput(
            f"Invalid parameter 'channel': the radio channel's name, 1-{_MAX_CHANNEL_CHARS} "
            "characters, is required"
        )
    started = target.recording_started_at
    if started is None:
        raise InvalidInput("Invalid parameter 'recordingStartedAt': it is required")
    if started.tzinfo is None:
        raise InvalidInput(
            "Invalid parameter 'recordingStartedAt': give an offset or Z "
            "(e.g. 2026-01-05T14:00:00Z)"
        )
    return channel, started.astimezone(UTC)


def _json_upload(body: bytes) -> tuple[RadioTrafficTarget, bytes]:
    try:
        upload = RadioTrafficUpload.model_validate_json(body)
    except ValidationError as error:
        raise InvalidInput(_describe(error)) from error
    try:
        content = base64.b64decode(upload.content_base64, validate=True)
    except ValueError as error:  # binascii.Error, or a character that is not ASCII
        raise InvalidInput("Invalid field 'contentBase64': it is not valid base64") from error
    target = RadioTrafficTarget(
        upload.event_id, upload.incident_number, upload.channel, upload.recording_started_at
    )
    return target, content


def _describe(error: ValidationError) -> str:
    problems = []
    for detail in error.errors():
        if detail.get("type") == "json_invalid":
            problems.append("The request body is not valid JSON")
            continue
        field = ".".join(str(part) for part in detail.get("loc", ())) or "body"
        problems.append(f"Invalid field '{field}': {detail.get('msg', 'is not valid')}")
    return "; ".join(problems)


def _resolve_event(tenant_id: int, target: RadioTrafficTarget) -> Event:
    if target.event_id is not None:
        event = events_store.get_event(tenant_id, target.event_id)
        if event is None:
            raise NotFound(f"event {target.event_id} not found")
        return event
    number = (target.incident_number or "").strip()
    incident_id = incidents_store.find_incident_id(tenant_id, number)
    incident = incidents_store.get_incident(tenant_id, incident_id) if incident_id else None
    if incident is None:
        raise NotFound(f"incident number '{number}' not found")
    if incident.event is None or incident.event.id is None:
        raise Conflict(
            f"incident '{number}' has no event yet: upload with eventId, or once the "
            "incident is linked to its event"
        )
    event = events_store.get_event(tenant_id, incident.event.id)
    if event is None:
        raise NotFound(f"event {incident.event.id} of incident '{number}' not found")
    return event
