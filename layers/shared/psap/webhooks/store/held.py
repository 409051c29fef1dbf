"""Held deliveries: kept, in creation order, while their connector is not active."""

from dataclasses import dataclass
from datetime import datetime

from psap.clock import format_timestamp, parse_timestamp
from psap.errors import Conflict
from psap.storage.aws_errors import TransactionCancelled
from psap.storage.dynamodb import transact_write
from psap.webhooks.models import DeliveryStatus
from psap.webhooks.store.deliveries import Claim
from psap.webhooks.store.keys import (
    _connector_not_active,
    _delivery_key,
    _held_pk,
    _key,
    _table,
    expires_at_epoch,
)
from psap.webhooks.store.pointers import pointers_removed
from psap.webhooks.store.reads import _get, _query_page
from psap.webhooks.store.records import _dead_pointer_put, _delivery, _held_pointer_put


def hold(tenant_id: int, claimed: Claim, now: datetime) -> bool:
    """Holds a pending delivery whose connector is not active: no attempt, no dead letter;
    it waits, in creation order, for the connector to be enabled. False when the connector
    was enabled meanwhile (then the delivery is still ours to send)."""
    delivery = claimed.delivery
    held_sk = f"{format_timestamp(delivery.created_at)}#{delivery.delivery_id}"
    unfiled = (
        [{"Delete": {"TableName": _table(), "Key": claimed.due_key}}]
        if claimed.due_key is not None
        else []
    )
    try:
        transact_write(
            [
                {
                    "Update": {
                        "TableName": _table(),
                        "Key": _delivery_key(tenant_id, delivery.delivery_id),
                        "UpdateExpression": (
                            "SET #s = :held, updatedAt = :now, heldSk = :held_sk, "
                            "expiresAtEpoch = :expires "
                            "REMOVE leaseId, leaseUntil, nextAttemptAt, duePk, dueSk"
                        ),
                        "ConditionExpression": "leaseId = :lease",
                        "ExpressionAttributeNames": {"#s": "status"},
                        "ExpressionAttributeValues": {
                            ":held": {"S": DeliveryStatus.HELD.value},
                            ":now": {"S": format_timestamp(now)},
                            ":held_sk": {"S": held_sk},
                            ":lease": {"S": claimed.lease_id},
                            ":expires": {"N": str(expires_at_epoch(now))},
                        },
                    }
                },
                _held_pointer_put(tenant_id, delivery.connector_id, held_sk, now=now),
                *unfiled,
                _connector_not_active(tenant_id, delivery.connector_id),
            ]
        )
    except TransactionCancelled as cancelled:
        if cancelled.codes[-1:] == ["ConditionalCheckFailed"]:
            return False  # the connector is active
        raise Conflict("the delivery's lease was lost") from cancelled
    pointers_removed([claimed.due_key])
    return True


@dataclass(frozen=True)
class HeldDelivery:
    delivery_id: str
    created_at: datetime


def held_deliveries(
    tenant_id: int, connector_id: str, since: datetime | None, *, limit: int
) -> list[HeldDelivery]:
    """A connector's held deliveries created at or after `since`, oldest first."""
    condition, values = "pk = :p", {":p": {"S": _held_pk(tenant_id, connector_id)}}
    if since is not None:
        condition += " AND sk >= :since"
        values[":since"] = {"S": format_timestamp(since)}
    items, _ = _query_page(condition, values, limit=limit)
    return [
        HeldDelivery(str(item["deliveryId"]), parse_timestamp(str(item["sk"]).split("#", 1)[0]))
        for item in items
    ]


def expire_held(tenant_id: int, delivery_id: str, now: datetime) -> None:
    """A delivery held past the retention: dead-letter state (listed, replayable), not sent."""
    item = _get(_delivery_key(tenant_id, delivery_id), consistent=True)
    if item is None or item.get("status") != DeliveryStatus.HELD.value:
        return
    delivery = _delivery(item)
    stamp = format_timestamp(now)
    transact_write(
        [
            {
                "Update": {
                    "TableName": _table(),
                    "Key": _delivery_key(tenant_id, delivery_id),
                    "UpdateExpression": (
                        "SET #s = :expired, updatedAt = :now, deadSk = :dead, "
                        "expiresAtEpoch = :expires REMOVE heldSk"
                    ),
                    "ConditionExpression": "#s = :held",
                    "ExpressionAttributeNames": {"#s": "status"},
                    "ExpressionAttributeValues": {
                        ":expired": {"S": DeliveryStatus.EXPIRED.value},
                        ":held": {"S": DeliveryStatus.HELD.value},
                        ":now": {"S": stamp},
                        ":dead": {"S": f"{stamp}#{delivery_id}"},
                        ":expires": {"N": str(expires_at_epoch(now))},
                    },
                }
            },
            {
                "Delete": {
                    "TableName": _table(),
                    "Key": _key(_held_pk(tenant_id, delivery.connector_id), str(item["heldSk"])),
                }
            },
            _dead_pointer_put(tenant_id, delivery, stamp),
        ],
        on_cancel=lambda codes: Conflict(f"Delivery {delivery_id} changed meanwhile"),
    )
