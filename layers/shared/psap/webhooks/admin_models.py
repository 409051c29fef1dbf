"""Request and response shapes of the tenant admin API's connector and delivery-log
operations. No response shape has a field for a secret except the two that create one
(`signingSecret` of create, rotate and a profile change), which show it once."""

from datetime import timedelta

from pydantic import ConfigDict, Field, StrictBool, field_validator
from pydantic.config import JsonDict

from psap.models import Timestamp, WireModel
from psap.webhooks.catalogue import UpdateKind
from psap.webhooks.connectors import DEFAULT_OVERLAP, MAX_BEARER, MAX_NAME, MAX_OVERLAP, MAX_URL
from psap.webhooks.models import (
    Attempt,
    Connector,
    ConnectorStatus,
    Delivery,
    DeliveryJob,
    DeliveryJobKind,
    DeliveryJobPhase,
    DeliveryJobState,
    DeliveryStatus,
)
from psap.webhooks.retry_policy import ErrorClass
from psap.webhooks.signing import SigningProfile

RESPONSE_EXCERPT_CHARS = 1024  # of what the receiver answered, as the log shows it
_STRICT = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
# A name holds at least one character that is not white space (names are stored stripped).
NAME_PATTERN = r"\S"
_PORT = r"(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})"
_LABEL = r"[a-z]([a-z0-9-]{0,61}[a-z0-9])?"
# The form psap.webhooks.addresses accepts, documented (the logic checks it, in its words):
# https, a host name (an IP literal must be public: a rule no pattern states), no
# credentials, no fragment. A local-dev connector may also use http on loopback.
URL_PATTERN = rf"^https://{_LABEL}(\.{_LABEL})*(:{_PORT})?(/[^\s?#]*)?(\?[^\s#]*)?$"
_URL_DOCUMENTED: JsonDict = {"pattern": URL_PATTERN}
_BEARER_DOCUMENTED: JsonDict = {"pattern": NAME_PATTERN}  # one line, not blank
# The baseline profile (the default) signs with the bearer credential the CAD issued.
_BASELINE_NEEDS_BEARER: JsonDict = {
    "anyOf": [
        {
            "required": ["bearerCredential"],
            "properties": {"bearerCredential": {"type": "string", "pattern": NAME_PATTERN}},
        },
        {"required": ["profile"], "properties": {"profile": {"not": {"const": "baseline"}}}},
    ]
}


class DeliveryJobView(WireModel):
    """A release (enabling a connector sends what it held) or a recovery of a connector's
    deliveries, run in steps after the request that started it: its progress."""

    job_id: str
    kind: DeliveryJobKind
    state: DeliveryJobState
    phase: DeliveryJobPhase = Field(description="DEAD: dead-letter deliveries; HELD: held ones")
    since: Timestamp | None = None
    released: int = Field(description="Deliveries queued again so far, oldest first")
    expired: int = Field(description="Held longer than the retention: EXPIRED, not sent")
    started_at: Timestamp
    updated_at: Timestamp
    finished_at: Timestamp | None = None

    @classmethod
    def of(cls, job: DeliveryJob) -> "DeliveryJobView":
        return cls(
            job_id=job.job_id,
            kind=job.kind,
            state=job.state,
            phase=job.phase,
            since=job.since,
            released=job.released,
            expired=job.expired,
            started_at=job.started_at,
            updated_at=job.updated_at,
            finished_at=job.finished_at,
        )


class ConnectorView(WireModel):
    """A connector as the tenant's admin sees it: where, how and what; never a secret."""

    connector_id: str
    name: str
    url: str
    profile: SigningProfile
    event_types: list[str] | None = Field(description="null: every kind of update")
    status: ConnectorStatus
    local_dev: bool
    created_at: Timestamp
    updated_at: Timestamp
    flagged_at: Timestamp | None = None
    flag_reason: str | None = None
    delivery_job: DeliveryJobView | None = Field(
        None, description="Its latest release or recovery of deliveries, with the progress"
    )

    @classmethod
    def of(cls, connector: Connector, job: DeliveryJob | None = None) -> "ConnectorView":
        return cls(
            connector_id=connector.connector_id,
            name=connector.name,
            url=connector.url,
            profile=connector.profile,
            event_types=connector.event_types,
            status=connector.status,
            local_dev=connector.local_dev,
            created_at=connector.created_at,
            updated_at=connector.updated_at,
            flagged_at=connector.flagged_at,
            flag_reason=connector.flag_reason,
            delivery_job=DeliveryJobView.of(job) if job is not None else None,
        )


class ConnectorList(WireModel):
    items: list[ConnectorView]


class CreateConnectorBody(WireModel):
    model_config = ConfigDict(**_STRICT, json_schema_extra=_BASELINE_NEEDS_BEARER)

    name: str = Field(min_length=1, max_length=MAX_NAME, pattern=NAME_PATTERN)
    url: str = Field(
        max_length=MAX_URL,
        description="https; public addresses only",
        json_schema_extra=_URL_DOCUMENTED,
    )
    profile: SigningProfile = SigningProfile.BASELINE
    event_types: list[UpdateKind] | None = Field(
        default=None, max_length=len(UpdateKind), description="null: every kind of update"
    )
    bearer_credential: str | None = Field(
        default=None,
        max_length=MAX_BEARER,
        description="The credential the CAD issued to us (write-only: never returned); "
        "required by the baseline profile",
        json_schema_extra=_BEARER_DOCUMENTED,
    )
    local_dev: StrictBool = Field(
        default=False, description="http on loopback; only where the deployment allows it"
    )


class UpdateConnectorBody(WireModel):
    """Only the fields given change. `eventTypes: null` means every kind of update."""

    model_config = _STRICT

    name: str | None = Field(default=None, min_length=1, max_length=MAX_NAME, pattern=NAME_PATTERN)
    url: str | None = Field(default=None, max_length=MAX_URL, json_schema_extra=_URL_DOCUMENTED)
    profile: SigningProfile | None = Field(
        default=None, description="A new profile issues a new signing secret (shown once)"
    )
    event_types: list[UpdateKind] | None = Field(default=None, max_length=len(UpdateKind))
    bearer_credential: str | None = Field(
        default=None, max_length=MAX_BEARER, json_schema_extra=_BEARER_DOCUMENTED
    )
    local_dev: StrictBool | None = None


class ConnectorWithSecretView(WireModel):
    connector: ConnectorView
    signing_secret: str | None = Field(
        description="Shown once, in this response; give it to the CAD now. null when the "
        "change made no new secret"
    )


class RotateSecretBody(WireModel):
    model_config = _STRICT

    overlap_hours: float = Field(
        default=DEFAULT_OVERLAP.total_seconds() / 3600,
        ge=0,
        le=MAX_OVERLAP.total_seconds() / 3600,
        description="How long the previous secrets stay valid",
    )

    @field_validator("overlap_hours", mode="before")
    @classmethod
    def _a_number(cls, value: object) -> object:
        if isinstance(value, bool):  # JSON true/false is not a number of hours
            raise ValueError("a number of hours is expected")
        return value

    @property
    def overlap(self) -> timedelta:
        return timedelta(hours=self.overlap_hours)


class RotatedSecretView(WireModel):
    connector: ConnectorView
    signing_secret: str = Field(description="Shown once, in this response")
    previous_secrets_retire_at: Timestamp = Field(
        description="Until then the CAD should accept the previous secret as well as this one"
    )


class TestSentView(WireModel):
    delivery_id: str = Field(description="Follow it in the delivery log")


class DeliveryView(WireModel):
    delivery_id: str
    connector_id: str
    # Not `eventId`: that is an event's integer id everywhere else in the API.
    cloud_event_id: str = Field(
        description="The CloudEvents `id` of the update (evt-...), the same in every attempt's"
        " body: what a CAD receiver deduplicates on"
    )
    event_type: str
    status: DeliveryStatus
    attempt_count: int
    next_attempt_at: Timestamp | None
    created_at: Timestamp
    updated_at: Timestamp
    delivered_at: Timestamp | None
    last_status_code: int | None
    last_error_class: ErrorClass | None

    @classmethod
    def of(cls, delivery: Delivery) -> "DeliveryView":
        return cls(
            delivery_id=delivery.delivery_id,
            connector_id=delivery.connector_id,
            cloud_event_id=delivery.event_id,
            event_type=delivery.event_type,
            status=delivery.status,
            attempt_count=delivery.attempt_count,
            next_attempt_at=delivery.next_attempt_at,
            created_at=delivery.created_at,
            updated_at=delivery.updated_at,
            delivered_at=delivery.delivered_at,
            last_status_code=delivery.last_status_code,
            last_error_class=delivery.last_error_class,
        )


class DeliveryPage(WireModel):
    items: list[DeliveryView]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for older deliveries; a page can be short (filters)"
    )


class AttemptView(WireModel):
    number: int
    started_at: Timestamp
    status_code: int | None
    latency_ms: int
    error_class: ErrorClass | None
    error_detail: str | None
    response_excerpt: str | None = Field(
        description=f"The first {RESPONSE_EXCERPT_CHARS} characters of the receiver's answer"
    )
    signature_headers: dict[str, str] | None = Field(
        None,
        description="The signature headers sent with this attempt, by name (never the "
        "bearer credential); absent for attempts recorded before they were kept",
    )

    @classmethod
    def of(cls, attempt: Attempt) -> "AttemptView":
        return cls(
            number=attempt.number,
            started_at=attempt.started_at,
            status_code=attempt.status_code,
            latency_ms=attempt.latency_ms,
            error_class=attempt.error_class,
            error_detail=attempt.error_detail,
            response_excerpt=attempt.response_excerpt,
            signature_headers=attempt.signature_headers,
        )


class DeliveryDetail(DeliveryView):
    body: str = Field(description="The exact body sent on every attempt")
    attempts: list[AttemptView] = Field(description="The latest attempts, newest first")

    @classmethod
    def with_attempts(cls, delivery: Delivery, attempts: list[Attempt]) -> "DeliveryDetail":
        return cls(
            **DeliveryView.of(delivery).model_dump(),
            body=delivery.body.decode("utf-8", errors="replace"),
            attempts=[AttemptView.of(attempt) for attempt in attempts],
        )


class RecoverBody(WireModel):
    model_config = _STRICT

    since: Timestamp = Field(description="Dead-letter deliveries that died at or after this")
