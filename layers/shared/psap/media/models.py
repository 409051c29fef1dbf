"""Wire shapes of media ingest: the radio-traffic media record and its transcript segments.

Absent values are null; arrays are always arrays.
"""

from enum import StrEnum

from pydantic import Field

from psap.models import RequestModel, StrictDateTime, Timestamp, WireModel


class MediaRecordType(StrEnum):
    """The kind of a media record (not the knowledge MediaType of a card's media items)."""

    RADIO_TRAFFIC = "RADIO_TRAFFIC"


class TranscriptSegment(WireModel):
    """One SRT cue: where it sits in the recording and what was said."""

    cue: int = Field(description="The cue's number as written in the file (its position if none)")
    start_seconds: float = Field(description="Seconds from the recording start (ms precision)")
    end_seconds: float
    start_at: Timestamp = Field(description="recordingStartedAt + startSeconds")
    end_at: Timestamp = Field(description="recordingStartedAt + endSeconds")
    speaker: str | None = Field(
        default=None,
        description="The unit or speaker the cue names with a leading `LABEL: ` "
        "(e.g. `ENGINE 5`, `DISPATCH`); null when it names none",
    )
    text: str = Field(description="The cue's text, without the speaker label")


class RadioTrafficMedia(WireModel):
    """A radio-traffic transcript (SRT) stored for an event."""

    id: int = Field(description="The service's media id; it appears in the event's media array")
    type: MediaRecordType = MediaRecordType.RADIO_TRAFFIC
    event_id: int
    incident_id: int | None = Field(default=None, description="The event's incident, if any")
    incident_number: str | None = None
    channel: str = Field(description="The radio channel or talkgroup recorded")
    recording_started_at: Timestamp
    duration_seconds: float = Field(description="End of the last cue, in seconds")
    cue_count: int
    content_sha256: str = Field(description="SHA-256 (hex) of the SRT file as uploaded")
    size_bytes: int = Field(description="Bytes of the SRT file as uploaded")
    created_at: Timestamp
    segments: list[TranscriptSegment] = Field(default_factory=list)


class RadioTrafficUpload(RequestModel):
    """The JSON form of an upload (the raw form carries the same fields as query parameters).

    Exactly one of eventId and incidentNumber."""

    event_id: int | None = Field(default=None, description="The event the recording belongs to")
    incident_number: str | None = Field(
        default=None, description="Or the incident (its CAD number) whose event it belongs to"
    )
    channel: str = Field(min_length=1, max_length=100)
    recording_started_at: StrictDateTime = Field(
        description="When the recording started: ISO 8601 with an offset or Z"
    )
    content_base64: str = Field(description="The SRT file, base64-encoded (UTF-8 text)")
