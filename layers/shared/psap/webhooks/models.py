"""Connectors, deliveries and attempts as the admin CLI shows them (camelCase JSON)."""

from enum import StrEnum

from pydantic import Field

from psap.models import Timestamp, WireModel
from psap.webhooks.retry_policy import ErrorClass
from psap.webhooks.signing import SigningProfile


class Lane(StrEnum):
    """Which queue (and time budget) a delivery attempt goes through (docs/webhooks.md)."""

    MAIN = "main"  # every connector, short timeouts
    SLOW = "slow"  # connectors whose endpoint recently timed out: their own queue


class ConnectorStatus(StrEnum):
    ACTIVE = "ACTIVE"
    # By an operator, or by a 410 Gone answer (flagReason says which). Updates are held.
    DISABLED = "DISABLED"
    GONE = "GONE"  # older records: flagged by a 410; treated exactly as DISABLED


class Connector(WireModel):
    """A tenant's CAD endpoint. Its secrets are in Secrets Manager under `secret_name`."""

    connector_id: str
    tenant_id: int
    name: str
    url: str
    profile: SigningProfile
    # None: every kind of update; otherwise only these event types are delivered.
    event_types: list[str] | None
    status: ConnectorStatus
    local_dev: bool = Field(
        description="http and loopback allowed (only where the deployment allows local-dev)"
    )
    secret_name: str
    created_at: Timestamp
    updated_at: Timestamp
    flagged_at: Timestamp | None = None
    flag_reason: str | None = None
    # Set after an attempt timed out: its deliveries go through the slow lane until then.
    slow_until: Timestamp | None = None

    @property
    def active(self) -> bool:
        return self.status is ConnectorStatus.ACTIVE

    def wants(self, event_type: str) -> bool:
        """Whether updates of this type are for this connector (held while it is disabled)."""
        return self.event_types is None or event_type in self.event_types


class DeliveryStatus(StrEnum):
    PENDING = "PENDING"  # waiting for its next attempt (nextAttemptAt)
    HELD = "HELD"  # its connector is disabled: sent, in order, when it is enabled
    DELIVERED = "DELIVERED"
    FAILED = "FAILED"  # every attempt of the schedule failed: dead-letter state
    STOPPED = "STOPPED"  # the CAD answered 410 Gone
    EXPIRED = "EXPIRED"  # held longer than the retention: dead-letter state, never dropped
    CANCELLED = "CANCELLED"  # older records only (a disabled connector now holds)

    @property
    def dead(self) -> bool:
        return self in {
            DeliveryStatus.FAILED,
            DeliveryStatus.STOPPED,
            DeliveryStatus.EXPIRED,
            DeliveryStatus.CANCELLED,
        }


class Delivery(WireModel):
    """One update for one connector. The body is serialized once and sent byte-identical on
    every attempt and replay; the delivery id never changes."""

    delivery_id: str
    tenant_id: int
    connector_id: str
    event_id: str
    event_type: str
    status: DeliveryStatus
    attempt_count: int  # every attempt ever made, replays included
    run_attempts: int  # attempts since the delivery was (re-)armed; drives the schedule
    next_attempt_at: Timestamp | None
    created_at: Timestamp
    updated_at: Timestamp
    delivered_at: Timestamp | None = None
    last_status_code: int | None = None
    last_error_class: ErrorClass | None = None
    body: bytes = Field(exclude=True, repr=False)


class Attempt(WireModel):
    """One HTTP attempt as recorded: never a secret, never the bearer credential."""

    delivery_id: str
    number: int
    started_at: Timestamp
    signed_timestamp: int | None = None  # X-SVC-Timestamp / webhook-timestamp, unix seconds
    status_code: int | None = None
    latency_ms: int
    error_class: ErrorClass | None = None
    error_detail: str | None = None
    response_excerpt: str | None = None  # the first 4 KB of the answer
    # The signing headers sent (names and values), never Authorization nor a secret.
    signature_headers: dict[str, str] | None = None


class DeliveryJobKind(StrEnum):
    RELEASE = "RELEASE"  # enabling a connector sends what it held, in creation order
    RECOVER = "RECOVER"  # dead-letter, then held, deliveries since a time, sent again


class DeliveryJobState(StrEnum):
    RUNNING = "RUNNING"
    DONE = "DONE"
    STOPPED = "STOPPED"  # the connector was disabled again: what is left stays held


class DeliveryJobPhase(StrEnum):
    DEAD = "DEAD"  # a recovery's dead-letter deliveries
    HELD = "HELD"  # held deliveries (a release has only this phase)


class DeliveryJob(WireModel):
    """A release or recovery of a connector's deliveries, run as bounded steps through a
    queue (psap.webhooks.jobs): its progress, as the admin API shows it."""

    job_id: str
    tenant_id: int
    connector_id: str
    kind: DeliveryJobKind
    state: DeliveryJobState
    phase: DeliveryJobPhase
    since: Timestamp | None = None
    step: int = Field(0, description="Steps recorded so far")
    released: int = Field(0, description="Deliveries queued again so far")
    expired: int = Field(0, description="Held longer than the retention: EXPIRED, not sent")
    started_at: Timestamp
    updated_at: Timestamp
    finished_at: Timestamp | None = None
