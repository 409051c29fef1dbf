"""Creating deliveries for an update, and the operator's replay, release and recovery.

An update for a tenant becomes one delivery per connector that wants its event type: due
now for an active connector, held (stored, listed, not sent) for a disabled one. Enabling
the connector releases its held deliveries in creation order, with their ids and bodies, in
a job of bounded steps (psap.webhooks.jobs);
one held longer than HELD_RETENTION is not sent but becomes EXPIRED (dead-letter state,
still listed and replayable): an update that old is history, not news, for a CAD.
Delivery ids are derived from what the update answers (the seed, e.g. a submission's receipt
id) and the connector, so a worker that runs twice for the same submission finds its
deliveries already there instead of sending the CAD a second copy with a new id.
"""

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from pydantic import Field

from psap.config import webhook_queue_url, webhook_slow_queue_url
from psap.errors import Conflict, InvalidField, NotFound
from psap.models import WireModel
from psap.observability import logger
from psap.storage.sqs import send_message, send_messages
from psap.webhooks import store
from psap.webhooks.catalogue import WebhookUpdate, build_event, serialize
from psap.webhooks.models import Attempt, Connector, Delivery, DeliveryStatus, Lane

RECOVER_LIMIT = 1000  # deliveries per recover command; run it again for more
HELD_RETENTION = timedelta(days=30)  # a held delivery older than this is EXPIRED, not sent
_RELEASE_PAGE = 100


class DispatchMessage(WireModel):
    """What the webhook queues carry: which delivery, for which attempt, in which lane."""

    tenant_id: int
    delivery_id: str
    attempt_count: int = Field(ge=0)
    lane: Lane = Lane.MAIN
    # Lets the dispatcher pass a slow connector's message to the slow lane without first
    # claiming the delivery (absent from the scheduler's messages: they claim first).
    connector_id: str | None = None

    @classmethod
    def of(
        cls,
        tenant_id: int,
        delivery_id: str,
        attempt_count: int,
        *,
        lane: Lane = Lane.MAIN,
        connector_id: str | None = None,
    ) -> "DispatchMessage":
        return cls(
            tenant_id=tenant_id,
            delivery_id=delivery_id,
            attempt_count=attempt_count,
            lane=lane,
            connector_id=connector_id,
        )

    @classmethod
    def from_body(cls, body: str) -> "DispatchMessage":
        return cls.model_validate_json(body)

    def body(self) -> dict[str, object]:
        # The main lane is the default: its messages stay as every sender writes them.
        return self.model_dump(mode="json", by_alias=True, exclude_defaults=True)


def _digest(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(str(part) for part in parts).encode()).hexdigest()[:32]


def emit_update(
    tenant_id: int,
    update: WebhookUpdate,
    *,
    seed: str,
    now: datetime,
    only_connector: Connector | None = None,
) -> list[str]:
    """Creates the deliveries of one update and enqueues those not held; returns their ids."""
    kind = update.kind
    connectors = (
        [only_connector]
        if only_connector is not None
        else [c for c in store.list_connectors(tenant_id) if c.wants(kind.value)]
    )
    if not connectors:
        return []
    event_id, body = _event(tenant_id, update, seed=seed, now=now)
    delivery_ids: list[str] = []
    to_send: list[DispatchMessage] = []
    for connector in connectors:
        new = _new_delivery(
            tenant_id, update, seed, connector_id=connector.connector_id, event=(event_id, body)
        )
        delivery_id = new.delivery_id
        status = store.create_delivery(tenant_id, new, now, held=not connector.active)
        if status is None:
            logger.info("delivery already existed", extra={"delivery_id": delivery_id})
        delivery_ids.append(delivery_id)
        # Also for deliveries that existed: the run that created them may have died before
        # this. A message for an attempt already made (or a held delivery) is dropped.
        if status is not DeliveryStatus.HELD:
            to_send.append(
                DispatchMessage.of(tenant_id, delivery_id, 0, connector_id=connector.connector_id)
            )
    if to_send:
        send_messages(webhook_queue_url(), [message.body() for message in to_send])
    return delivery_ids


def _event(tenant_id: int, update: WebhookUpdate, *, seed: str, now: datetime) -> tuple[str, bytes]:
    """The update's event id (derived from its seed) and body, the same for every connector."""
    event = build_event(tenant_id, update, now=now).model_copy(
        update={"id": f"evt-{_digest(tenant_id, seed, update.kind.value)}"}
    )
    return event.id, serialize(event)


def _new_delivery(
    tenant_id: int, update: WebhookUpdate, seed: str, *, connector_id: str, event: tuple[str, bytes]
) -> store.NewDelivery:
    kind = update.kind.value
    delivery_id = f"dlv-{_digest(tenant_id, seed, kind, connector_id)}"
    return store.NewDelivery(delivery_id, connector_id, event[0], kind, event[1])


@dataclass(frozen=True)
class PastUpdate:
    """An update produced at `at` while its connector was disabled, as `emit_update` would
    have been given it."""

    update: WebhookUpdate
    seed: str
    at: datetime


def hold_backlog(tenant_id: int, connector_id: str, updates: Sequence[PastUpdate]) -> list[str]:
    """Stores an outage's updates for one disabled connector as the held deliveries that
    `emit_update` would have made of them one by one (same ids, bodies and items), written
    in bulk; returns their ids. For loading a backlog (a test or bench of a release): the
    service holds each update as it comes, in a transaction that checks the connector."""
    connector = store.get_connector(tenant_id, connector_id)
    if connector.active:
        raise Conflict(f"Connector {connector_id} is active: nothing it is sent is held")
    held = [
        store.NewHeldDelivery(
            _new_delivery(
                tenant_id,
                past.update,
                past.seed,
                connector_id=connector_id,
                event=_event(tenant_id, past.update, seed=past.seed, now=past.at),
            ),
            past.at,
        )
        for past in updates
        if connector.wants(past.update.kind.value)
    ]
    store.create_held_in_bulk(tenant_id, held)
    return [one.delivery.delivery_id for one in held]


def enqueue(message: DispatchMessage, delay_seconds: int = 0) -> None:
    queue = webhook_slow_queue_url() if message.lane is Lane.SLOW else webhook_queue_url()
    send_message(queue, message.body(), delay_seconds)


def to_slow_lane(messages: list[DispatchMessage]) -> None:
    """Passes main-lane messages to the slow lane's queue as they are (one call per 10)."""
    send_messages(
        webhook_slow_queue_url(),
        [message.model_copy(update={"lane": Lane.SLOW}).body() for message in messages],
    )


def replay(tenant_id: int, delivery_id: str, now: datetime) -> Delivery:
    """Sends a delivery again (whatever its state) with a fresh schedule: same id, same body."""
    delivery = store.rearm(tenant_id, delivery_id, now)
    enqueue(
        DispatchMessage.of(
            tenant_id, delivery_id, delivery.attempt_count, connector_id=delivery.connector_id
        )
    )
    return delivery


def rearm_held(tenant_id: int, held: list[store.HeldDelivery], now: datetime) -> list[Delivery]:
    """Re-arms these held deliveries, in the order given, except those held longer than
    HELD_RETENTION, which become EXPIRED; returns the re-armed ones."""
    rearmed: list[Delivery] = []
    for delivery in held:
        if now - delivery.created_at > HELD_RETENTION:
            store.expire_held(tenant_id, delivery.delivery_id, now)
        else:
            rearmed.append(store.rearm(tenant_id, delivery.delivery_id, now))
    return rearmed


def enqueue_in_order(tenant_id: int, deliveries: list[Delivery]) -> None:
    """One message per delivery, in the order given (creation order)."""
    if deliveries:
        send_messages(
            webhook_queue_url(),
            [
                DispatchMessage.of(
                    tenant_id, d.delivery_id, d.attempt_count, connector_id=d.connector_id
                ).body()
                for d in deliveries
            ],
        )


def recover(
    tenant_id: int,
    connector_id: str,
    since: datetime,
    *,
    now: datetime,
    limit: int = RECOVER_LIMIT,
) -> list[str]:
    """Sends again every dead-letter delivery of a connector that died at or after `since`,
    and every held one created since then, oldest first, at most `limit` of them (a
    recovered one leaves its list: call again for more). The connector must be active."""
    if since > now:
        raise InvalidField("since", "is in the future")
    connector = store.get_connector(tenant_id, connector_id)
    if not connector.active:
        raise Conflict(f"Connector {connector_id} is disabled; enable it first")
    rearmed: list[Delivery] = []
    for delivery_id in store.dead_since(tenant_id, connector_id, since):
        if len(rearmed) >= limit:
            break
        try:
            rearmed.append(store.rearm(tenant_id, delivery_id, now))
        except NotFound:
            continue
    while len(rearmed) < limit:
        held = store.held_deliveries(
            tenant_id, connector_id, since, limit=min(_RELEASE_PAGE, limit - len(rearmed))
        )
        if not held:
            break
        rearmed += rearm_held(tenant_id, held, now)
    rearmed.sort(key=lambda delivery: (delivery.created_at, delivery.delivery_id))
    enqueue_in_order(tenant_id, rearmed)
    return [delivery.delivery_id for delivery in rearmed]


def delivery_with_attempts(tenant_id: int, delivery_id: str) -> tuple[Delivery, list[Attempt]]:
    return store.get_delivery(tenant_id, delivery_id), store.list_attempts(tenant_id, delivery_id)
