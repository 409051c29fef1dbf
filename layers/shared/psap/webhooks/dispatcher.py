"""One attempt of one delivery.

The dispatcher takes a lease on the delivery (so duplicate queue messages cannot send it
twice at once), signs the stored body with a fresh timestamp, sends it, and records the
attempt together with the delivery's next state. A wait of up to 15 minutes rides on an
SQS message delay; a longer one is left to the scheduler (psap/webhooks/scheduler.py,
`enqueue_due`, also importable from here), which every minute enqueues the deliveries
whose `nextAttemptAt` has come (and any whose message seems lost).

Isolation (docs/webhooks.md, "Isolation"): the tenants of a batch are sent side by side,
each tenant's messages in order; the main lane gives an attempt 5 s; a connector whose
attempt timed out goes to the slow lane (its own queue, its own concurrency, 10 s per
attempt) for SLOW_LANE_PERIOD, so its deliveries stop taking the main lane's time.
"""

import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from aws_lambda_powertools.metrics import MetricUnit

from psap import clock
from psap.config import webhook_local_dev_allowed
from psap.faults import fault_point
from psap.observability import logger, metrics
from psap.storage.sqs import MAX_DELAY_SECONDS
from psap.webhooks import secrets as vault
from psap.webhooks import store
from psap.webhooks.deliveries import DispatchMessage, enqueue, to_slow_lane
from psap.webhooks.models import (
    Attempt,
    Connector,
    Delivery,
    DeliveryStatus,
    Lane,
)
from psap.webhooks.retry_policy import AttemptOutcome, ErrorClass, Verdict, next_step
from psap.webhooks.scheduler import enqueue_due
from psap.webhooks.signing import SignedMessage, signature_headers
from psap.webhooks.transport import LANE_TIMEOUTS, OutboundClient, outbound_client

_EARLY_TOLERANCE = timedelta(seconds=1)  # SQS delays are not exact
# Short: a connector moved to the slow lane by one container is seen by the others soon.
_CONNECTOR_CACHE_SECONDS = 2.0
SLOW_LANE_PERIOD = timedelta(minutes=15)
# At most one message per tenant of a batch in flight at a time; tenants side by side.
BATCH_PARALLELISM = 10
# How long a message that found its delivery leased waits before it looks again.
BUSY_RECHECK_SECONDS = 10
GONE_REASON = "the endpoint answered 410 Gone: enable the connector once it is back"

__all__ = [
    "BATCH_PARALLELISM",
    "BUSY_RECHECK_SECONDS",
    "GONE_REASON",
    "SLOW_LANE_PERIOD",
    "DispatchResult",
    "dispatch",
    "dispatch_batch",
    "enqueue_due",
    "forget_connectors",
]


class DispatchResult(StrEnum):
    DELIVERED = "DELIVERED"
    RETRY_SCHEDULED = "RETRY_SCHEDULED"
    FAILED = "FAILED"  # exhausted: dead-letter state
    STOPPED = "STOPPED"  # 410 Gone
    HELD = "HELD"  # the connector is disabled: kept, sent in order when it is enabled
    STALE = "STALE"  # the message names an attempt already made, or a finished delivery
    BUSY = "BUSY"  # another dispatcher holds the lease
    REQUEUED = "REQUEUED"  # not due yet: sent back with the remaining delay
    DEFERRED = "DEFERRED"  # not due for more than 15 minutes: the scheduler will enqueue it
    DIVERTED = "DIVERTED"  # its connector is in the slow lane: passed there, not attempted


_VERDICT_STATUS = {
    Verdict.DELIVERED: (DeliveryStatus.DELIVERED, DispatchResult.DELIVERED),
    Verdict.RETRY: (DeliveryStatus.PENDING, DispatchResult.RETRY_SCHEDULED),
    Verdict.EXHAUSTED: (DeliveryStatus.FAILED, DispatchResult.FAILED),
    Verdict.GONE: (DeliveryStatus.STOPPED, DispatchResult.STOPPED),
}


_METRIC_NAMES = {
    result: "Delivery" + result.value.title().replace("_", "") for result in DispatchResult
}


@dataclass
class _CachedConnector:
    connector: Connector
    read_at: float


_connectors: dict[tuple[int, str], _CachedConnector] = {}


def _connector(tenant_id: int, connector_id: str) -> Connector:
    key = (tenant_id, connector_id)
    cached = _connectors.get(key)
    if cached is not None and time.monotonic() - cached.read_at < _CONNECTOR_CACHE_SECONDS:
        return cached.connector
    connector = store.get_connector(tenant_id, connector_id)
    _connectors[key] = _CachedConnector(connector, time.monotonic())
    return connector


def forget_connectors() -> None:
    _connectors.clear()


def _remember(connector: Connector) -> None:
    _connectors[(connector.tenant_id, connector.connector_id)] = _CachedConnector(
        connector, time.monotonic()
    )


def _in_slow_lane(connector: Connector, now: datetime) -> bool:
    return connector.slow_until is not None and connector.slow_until > now


# The running invocation's remaining time (milliseconds), set by dispatch_batch.
type RemainingTime = Callable[[], int]
_remaining: list[RemainingTime] = []


def dispatch_batch(
    messages: Sequence[tuple[str, DispatchMessage]], remaining_ms: RemainingTime | None = None
) -> list[str]:
    """Dispatches a queue batch; returns the ids of the messages that failed (to retry).

    Tenants are sent side by side, so a hanging endpoint holds back only its own tenant's
    messages; one tenant's messages go one after another, in the batch's order.
    `remaining_ms` is the invocation's time left: no lease outlives the invocation."""
    _remaining[:] = [remaining_ms] if remaining_ms is not None else []
    by_tenant: dict[int, list[tuple[str, DispatchMessage]]] = {}
    for message_id, message in messages:
        by_tenant.setdefault(message.tenant_id, []).append((message_id, message))
    groups = list(by_tenant.values())
    if len(groups) == 1:
        return _dispatch_in_order(groups[0])
    failed: list[str] = []
    for result in _executor().map(_dispatch_in_order, groups):
        failed += result
    return failed


def _dispatch_in_order(messages: list[tuple[str, DispatchMessage]]) -> list[str]:
    failed: list[str] = []
    diverted: list[tuple[str, DispatchMessage]] = []
    for message_id, message in messages:
        try:
            if _for_slow_lane(message):
                diverted.append((message_id, message))  # no claim, no attempt: passed on
                continue
            dispatch(message, lease_seconds=_lease_seconds())
        except Exception:  # reported as a batch item failure: SQS retries it, then the DLQ
            logger.exception("dispatch failed", extra=_log(message.tenant_id, message.delivery_id))
            failed.append(message_id)
    if diverted:
        try:
            to_slow_lane([message for _, message in diverted])
        except Exception:
            logger.exception("could not pass messages to the slow lane")
            failed += [message_id for message_id, _ in diverted]
        metrics.add_metric(
            name=_METRIC_NAMES[DispatchResult.DIVERTED], unit=MetricUnit.Count, value=len(diverted)
        )
    return failed


def _for_slow_lane(message: DispatchMessage) -> bool:
    """A main-lane message whose connector (named in the message) is in the slow lane."""
    if message.lane is not Lane.MAIN or message.connector_id is None:
        return False
    connector = _connector(message.tenant_id, message.connector_id)
    return connector.active and _in_slow_lane(connector, clock.utc_now())


_pool: list[ThreadPoolExecutor] = []


def _executor() -> ThreadPoolExecutor:
    """One pool per warm container."""
    if not _pool:
        _pool.append(ThreadPoolExecutor(BATCH_PARALLELISM, thread_name_prefix="dispatch"))
    return _pool[0]


def _lease_seconds() -> int:
    """A lease long enough for an attempt, never longer than the invocation that holds it:
    a dispatcher ended at its timeout cannot record the attempt, so its lease would only
    hold the delivery back (docs/faults.md)."""
    if not _remaining:
        return store.LEASE_SECONDS
    left = math.ceil(_remaining[0]() / 1000) + 1
    return max(1, min(store.LEASE_SECONDS, left))


def dispatch(
    message: DispatchMessage,
    client: OutboundClient | None = None,
    *,
    lease_seconds: int = store.LEASE_SECONDS,
) -> DispatchResult:
    now = clock.utc_now()
    tenant_id = message.tenant_id
    # The common case costs one conditional write: the claim succeeds. Why it did not
    # (finished, attempted already, early, leased) is read only when it fails.
    claimed = store.claim(
        tenant_id,
        message.delivery_id,
        message.attempt_count,
        due_by=now + _EARLY_TOLERANCE,
        now=now,
        lease_seconds=lease_seconds,
    )
    if claimed is None:
        return _not_claimed(message, now)
    fault_point("webhook.after_claim")
    delivery = claimed.delivery
    connector = _connector(tenant_id, delivery.connector_id)
    if not connector.active:
        if store.hold(tenant_id, claimed, now):
            logger.info(
                "delivery held: connector not active", extra=_log(tenant_id, delivery.delivery_id)
            )
            _tally(
                tenant_id,
                delivery,
                tally=store.AttemptTally.HELD,
                latency_ms=None,
                now=now,
            )
            return DispatchResult.HELD
        forget_connectors()  # enabled meanwhile: send it, with what the connector says now
        connector = _connector(tenant_id, delivery.connector_id)
    if message.lane is Lane.MAIN and _in_slow_lane(connector, now):
        store.release(tenant_id, claimed)
        enqueue(message.model_copy(update={"lane": Lane.SLOW}))
        return DispatchResult.DIVERTED
    started = clock.utc_now()
    timestamp = int(started.timestamp())
    outcome, signed_with = _send(
        connector, delivery, timestamp, client=client or outbound_client(message.lane)
    )
    finished = clock.utc_now()
    fault_point("webhook.after_send")
    slow = _track_lane(connector, outcome, finished)
    step = next_step(outcome, delivery.run_attempts + 1, finished)
    status, result = _VERDICT_STATUS[step.verdict]
    enqueued = False
    wait = 0
    if step.next_attempt_at is not None:
        wait = math.ceil((step.next_attempt_at - finished).total_seconds())
        enqueued = wait <= MAX_DELAY_SECONDS
    attempt = Attempt(
        delivery_id=delivery.delivery_id,
        number=delivery.attempt_count + 1,
        started_at=started,
        signed_timestamp=timestamp,
        status_code=outcome.status_code,
        latency_ms=outcome.latency_ms,
        error_class=outcome.error_class,
        error_detail=outcome.error_detail or None,
        response_excerpt=outcome.response_excerpt or None,
        signature_headers=signed_with or None,
    )
    store.record_attempt(
        tenant_id,
        claimed,
        store.AttemptResult(attempt, status, step.next_attempt_at, enqueued),
        now=finished,
    )
    fault_point("webhook.after_attempt_recorded")
    _tally(
        tenant_id,
        delivery,
        tally=_tally_of(status),
        latency_ms=outcome.latency_ms,
        now=finished,
    )
    if step.verdict is Verdict.GONE:
        store.disable_connector(tenant_id, connector.connector_id, GONE_REASON, now=finished)
        forget_connectors()
    if enqueued:
        try:
            lane = Lane.SLOW if slow else Lane.MAIN
            enqueue(
                DispatchMessage.of(
                    tenant_id,
                    delivery.delivery_id,
                    attempt.number,
                    lane=lane,
                    connector_id=connector.connector_id,
                ),
                wait,
            )
        except Exception:  # the scheduler re-enqueues it after store.LOST_MESSAGE_GRACE
            logger.exception(
                "retry could not be enqueued", extra=_log(tenant_id, delivery.delivery_id)
            )
    logger.info(
        "delivery attempt",
        extra={
            **_log(tenant_id, delivery.delivery_id),
            "connector_id": connector.connector_id,
            "attempt": attempt.number,
            "status_code": outcome.status_code,
            "error_class": outcome.error_class,
            "latency_ms": outcome.latency_ms,
            "result": result.value,
        },
    )
    metrics.add_metric(name=_METRIC_NAMES[result], unit=MetricUnit.Count, value=1)
    return result


def _tally_of(status: DeliveryStatus) -> store.AttemptTally:
    if status is DeliveryStatus.DELIVERED:
        return store.AttemptTally.DELIVERED
    return store.AttemptTally.DEAD if status.dead else store.AttemptTally.RETRYING


def _tally(
    tenant_id: int,
    delivery: Delivery,
    *,
    tally: store.AttemptTally,
    latency_ms: int | None,
    now: datetime,
) -> None:
    """Adds the step to the connector's hourly rollup, after the attempt is recorded and
    outside its transaction: a transaction on the busy stats item would conflict with the
    connector's other attempts. A failed add costs one point of a chart, never a delivery."""
    try:
        store.add_to_stats(
            tenant_id,
            delivery.connector_id,
            delivery_id=delivery.delivery_id,
            tally=tally,
            latency_ms=latency_ms,
            now=now,
        )
    except Exception:
        logger.exception(
            "connector stats not updated", extra={"connector_id": delivery.connector_id}
        )


def _track_lane(connector: Connector, outcome: AttemptOutcome, now: datetime) -> bool:
    """Moves a connector to the slow lane after a timeout, and back after a quick success;
    returns whether it is in the slow lane now."""
    slow = _in_slow_lane(connector, now)
    until: datetime | None
    if outcome.error_class is ErrorClass.TIMEOUT:
        until = now + SLOW_LANE_PERIOD
        # One write per connector per half period, however many attempts time out.
        if (
            slow
            and connector.slow_until is not None
            and connector.slow_until - now > (SLOW_LANE_PERIOD / 2)
        ):
            return True
    elif slow and outcome.succeeded and outcome.latency_ms < _main_lane_budget_ms():
        until = None
    else:
        return slow
    store.mark_connector_slow(connector.tenant_id, connector.connector_id, until)
    _remember(connector.model_copy(update={"slow_until": until}))
    logger.info(
        "connector lane changed",
        extra={"connector_id": connector.connector_id, "slow_until": str(until)},
    )
    return until is not None


def _main_lane_budget_ms() -> float:
    return LANE_TIMEOUTS[Lane.MAIN][1] * 1000


def _send(
    connector: Connector, delivery: Delivery, timestamp: int, *, client: OutboundClient
) -> tuple[AttemptOutcome, dict[str, str]]:
    """Signs the stored body for this attempt (a new timestamp, every active secret) and
    sends it with the CAD's bearer credential; answers the signature headers sent (never
    the bearer credential), which the attempt record keeps."""
    secrets = vault.read_secret(connector.secret_name)
    if not secrets.sends_bearer_to(connector.url):
        # Our cached secret may predate a URL change: read it again before deciding.
        secrets = vault.read_secret(connector.secret_name, fresh=True)
    if connector.local_dev and not webhook_local_dev_allowed():
        return AttemptOutcome(
            None, ErrorClass.BLOCKED, 0, error_detail="local-dev connectors are not allowed here"
        ), {}
    if secrets.bearer_credential and not secrets.sends_bearer_to(connector.url):
        # The connector we hold is older than its secret (a URL change is under way): the
        # CAD's credential never goes to an origin it was not given for; a retry will see
        # the new URL.
        return AttemptOutcome(
            None,
            ErrorClass.BLOCKED,
            0,
            error_detail="the bearer credential was given for another origin (the connector "
            "is being changed)",
        ), {}
    signed_with = signature_headers(
        connector.profile,
        secrets.active_signing(clock.utc_now()),
        SignedMessage(
            delivery.delivery_id,
            timestamp=timestamp,
            body=delivery.body,
            event_type=delivery.event_type,
        ),
    )
    headers = {**signed_with, "Content-Type": "application/json"}
    if secrets.bearer_credential:
        headers["Authorization"] = f"Bearer {secrets.bearer_credential}"
    outcome = client.post(connector.url, headers, delivery.body, local_dev=connector.local_dev)
    return outcome, signed_with


def _not_claimed(message: DispatchMessage, now: datetime) -> DispatchResult:
    delivery = store.find_delivery(message.tenant_id, message.delivery_id)
    if (
        delivery is None
        or delivery.status is not DeliveryStatus.PENDING
        or delivery.attempt_count != message.attempt_count
        or delivery.next_attempt_at is None
    ):
        return DispatchResult.STALE
    if delivery.next_attempt_at > now + _EARLY_TOLERANCE:
        wait = math.ceil((delivery.next_attempt_at - now).total_seconds())
        if wait > MAX_DELAY_SECONDS:
            return DispatchResult.DEFERRED
        enqueue(message, wait)
        return DispatchResult.REQUEUED
    # Leased by another dispatcher, alive or dead: look again when a lease may have ended,
    # so a dispatcher that died holding it delays the delivery by a lease, not by the
    # scheduler's LOST_MESSAGE_GRACE. A live holder's attempt makes this message STALE.
    enqueue(message, BUSY_RECHECK_SECONDS)
    return DispatchResult.BUSY


def _log(tenant_id: int, delivery_id: str) -> dict[str, object]:
    # Passed per line: the batch's tenants are dispatched on several threads at once.
    return {"tenant_id": tenant_id, "delivery_id": delivery_id}
