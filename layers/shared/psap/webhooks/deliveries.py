"""Creating deliveries for an update, and the operator's replay and recovery.

An update for a tenant becomes one delivery per active connector that wants its event type.
Delivery ids are derived from what the update answers (the seed, e.g. a submission's receipt
id) and the connector, so a worker that runs twice for the same submission finds its
deliveries already there instead of sending the CAD a second copy with a new id.
"""

import hashlib
from datetime import datetime

from pydantic import Field

from psap.config import webhook_queue_url
from psap.errors import InvalidField, NotFound
from psap.models import WireModel
from psap.observability import logger
from psap.storage.sqs import send_message, send_messages
from psap.webhooks import store
from psap.webhooks.catalogue import UpdateData, UpdateKind, build_event, serialize
from psap.webhooks.models import Attempt, Connector, Delivery

RECOVER_LIMIT = 1000  # deliveries per recover command; run it again for more


class DispatchMessage(WireModel):
    """What the webhook queue carries: which delivery, for which attempt."""

    tenant_id: int
    delivery_id: str
    attempt_count: int = Field(ge=0)

    @classmethod
    def of(cls, tenant_id: int, delivery_id: str, attempt_count: int) -> "DispatchMessage":
        return cls(tenant_id=tenant_id, delivery_id=delivery_id, attempt_count=attempt_count)

    @classmethod
    def from_body(cls, body: str) -> "DispatchMessage":
        return cls.model_validate_json(body)

    def body(self) -> dict[str, object]:
        return self.model_dump(mode="json", by_alias=True)


def _digest(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(str(part) for part in parts).encode()).hexdigest()[:32]


def emit_update(
    table: str,
    tenant_id: int,
    kind: UpdateKind,
    data: UpdateData,
    *,
    seed: str,
    subject: str | None,
    now: datetime,
    only_connector: Connector | None = None,
) -> list[str]:
    """Creates and enqueues the deliveries of one update; returns their ids."""
    connectors = (
        [only_connector]
        if only_connector is not None
        else [c for c in store.list_connectors(table, tenant_id) if c.wants(kind.value)]
    )
    if not connectors:
        return []
    event = build_event(tenant_id, kind, data, now, subject).model_copy(
        update={"id": f"evt-{_digest(tenant_id, seed, kind.value)}"}
    )
    body = serialize(event)
    delivery_ids: list[str] = []
    for connector in connectors:
        delivery_id = f"dlv-{_digest(tenant_id, seed, kind.value, connector.connector_id)}"
        created = store.create_delivery(
            table,
            tenant_id,
            store.NewDelivery(delivery_id, connector.connector_id, event.id, kind.value, body),
            now,
        )
        if not created:
            logger.info("delivery already existed", extra={"delivery_id": delivery_id})
        delivery_ids.append(delivery_id)
    # Also for deliveries that existed: the run that created them may have died before this.
    # A message for an attempt already made is dropped by the dispatcher.
    send_messages(
        webhook_queue_url(),
        [DispatchMessage.of(tenant_id, delivery_id, 0).body() for delivery_id in delivery_ids],
    )
    return delivery_ids


def enqueue(message: DispatchMessage, delay_seconds: int = 0) -> None:
    send_message(webhook_queue_url(), message.body(), delay_seconds)


def replay(table: str, tenant_id: int, delivery_id: str, now: datetime) -> Delivery:
    """Sends a delivery again (whatever its state) with a fresh schedule: same id, same body."""
    delivery = store.rearm(table, tenant_id, delivery_id, now)
    enqueue(DispatchMessage.of(tenant_id, delivery_id, delivery.attempt_count))
    return delivery


def recover(
    table: str,
    tenant_id: int,
    connector_id: str,
    since: datetime,
    now: datetime,
    limit: int = RECOVER_LIMIT,
) -> list[str]:
    """Re-arms every dead-letter delivery of a connector that died at or after `since`, at
    most `limit` of them (a recovered one leaves the dead-letter list: call again for more)."""
    if since > now:
        raise InvalidField("since", "is in the future")
    store.get_connector(table, tenant_id, connector_id)
    recovered: list[str] = []
    for delivery_id in store.dead_since(table, tenant_id, connector_id, since):
        if len(recovered) >= limit:
            break
        try:
            replay(table, tenant_id, delivery_id, now)
        except NotFound:
            continue
        recovered.append(delivery_id)
    return recovered


def delivery_with_attempts(
    table: str, tenant_id: int, delivery_id: str
) -> tuple[Delivery, list[Attempt]]:
    return store.get_delivery(table, tenant_id, delivery_id), store.list_attempts(
        table, tenant_id, delivery_id
    )
