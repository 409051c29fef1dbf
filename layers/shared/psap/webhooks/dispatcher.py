"""One attempt of one delivery, and the scheduler that re-enqueues what is due.

The dispatcher takes a lease on the delivery (so duplicate queue messages cannot send it
twice at once), signs the stored body with a fresh timestamp, sends it, and records the
attempt together with the delivery's next state. A wait of up to 15 minutes rides on an
SQS message delay; a longer one is left to the scheduler, which every minute enqueues the
deliveries whose `nextAttemptAt` has come (and any whose message seems lost).
"""

import math
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from aws_lambda_powertools.metrics import MetricUnit

from psap import clock
from psap.config import webhook_local_dev_allowed, webhook_queue_url
from psap.observability import logger, metrics
from psap.storage.sqs import MAX_DELAY_SECONDS, send_messages
from psap.webhooks import secrets as vault
from psap.webhooks import store
from psap.webhooks.deliveries import DispatchMessage, enqueue
from psap.webhooks.models import (
    Attempt,
    Connector,
    Delivery,
    DeliveryStatus,
)
from psap.webhooks.schedule import AttemptOutcome, ErrorClass, Verdict, next_step
from psap.webhooks.signing import signature_headers
from psap.webhooks.transport import OutboundClient, outbound_client

_EARLY_TOLERANCE = timedelta(seconds=1)  # SQS delays are not exact
_CONNECTOR_CACHE_SECONDS = 10.0
# An enqueued delivery this late is presumed to have lost its message.
LOST_MESSAGE_GRACE = timedelta(minutes=5)
SCHEDULER_BATCH = 500  # due deliveries per tenant per run
GONE_REASON = "the endpoint answered 410 Gone: enable the connector once it is back"


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


def _connector(table: str, tenant_id: int, connector_id: str) -> Connector:
    key = (tenant_id, connector_id)
    cached = _connectors.get(key)
    if cached is not None and time.monotonic() - cached.read_at < _CONNECTOR_CACHE_SECONDS:
        return cached.connector
    connector = store.get_connector(table, tenant_id, connector_id)
    _connectors[key] = _CachedConnector(connector, time.monotonic())
    return connector


def forget_connectors() -> None:
    _connectors.clear()


def dispatch(
    table: str, message: DispatchMessage, client: OutboundClient | None = None
) -> DispatchResult:
    now = clock.utc_now()
    tenant_id = message.tenant_id
    # The common case costs one conditional write: the claim succeeds. Why it did not
    # (finished, attempted already, early, leased) is read only when it fails.
    claimed = store.claim(
        table, tenant_id, message.delivery_id, message.attempt_count, now + _EARLY_TOLERANCE, now
    )
    if claimed is None:
        return _not_claimed(table, message, now)
    delivery = claimed.delivery
    connector = _connector(table, tenant_id, delivery.connector_id)
    if not connector.active:
        if store.hold(table, tenant_id, claimed, now):
            logger.info("delivery held: connector not active", extra=_log(delivery.delivery_id))
            return DispatchResult.HELD
        forget_connectors()  # enabled meanwhile: send it, with what the connector says now
        connector = _connector(table, tenant_id, delivery.connector_id)
    started = clock.utc_now()
    timestamp = int(started.timestamp())
    outcome = _send(connector, delivery, timestamp, client or outbound_client())
    finished = clock.utc_now()
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
    )
    store.record_attempt(
        table,
        tenant_id,
        claimed,
        store.AttemptResult(attempt, status, step.next_attempt_at, enqueued),
        finished,
    )
    if step.verdict is Verdict.GONE:
        store.disable_connector(table, tenant_id, connector.connector_id, GONE_REASON, finished)
        forget_connectors()
    if enqueued:
        try:
            enqueue(DispatchMessage.of(tenant_id, delivery.delivery_id, attempt.number), wait)
        except Exception:  # the scheduler re-enqueues it after LOST_MESSAGE_GRACE
            logger.exception("retry could not be enqueued", extra=_log(delivery.delivery_id))
    logger.info(
        "delivery attempt",
        extra={
            **_log(delivery.delivery_id),
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


def _send(
    connector: Connector, delivery: Delivery, timestamp: int, client: OutboundClient
) -> AttemptOutcome:
    """Signs the stored body for this attempt (a new timestamp, every active secret) and
    sends it with the CAD's bearer credential."""
    secrets = vault.read_secret(connector.secret_name)
    if connector.local_dev and not webhook_local_dev_allowed():
        return AttemptOutcome(
            None, ErrorClass.BLOCKED, 0, error_detail="local-dev connectors are not allowed here"
        )
    headers = signature_headers(
        connector.profile,
        secrets.active_signing(clock.utc_now()),
        delivery.delivery_id,
        timestamp,
        delivery.body,
        delivery.event_type,
    )
    headers["Content-Type"] = "application/json"
    if secrets.bearer_credential:
        headers["Authorization"] = f"Bearer {secrets.bearer_credential}"
    return client.post(connector.url, headers, delivery.body, local_dev=connector.local_dev)


def _not_claimed(table: str, message: DispatchMessage, now: datetime) -> DispatchResult:
    delivery = store.find_delivery(table, message.tenant_id, message.delivery_id)
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
    return DispatchResult.BUSY


def _log(delivery_id: str) -> dict[str, str]:
    return {"delivery_id": delivery_id}


def enqueue_due(table: str, now: datetime | None = None) -> int:
    """The scheduler: enqueues every delivery that is due and has no message on its way."""
    now = now or clock.utc_now()
    sent = 0
    for tenant_id in store.webhook_tenants(table):
        due = store.due_deliveries(table, tenant_id, now, SCHEDULER_BATCH)
        messages = [
            DispatchMessage.of(tenant_id, item.delivery_id, item.attempt_count).body()
            for item in due
            if not item.enqueued or item.due_at <= now - LOST_MESSAGE_GRACE
        ]
        if messages:
            send_messages(webhook_queue_url(), messages)
            sent += len(messages)
    return sent
