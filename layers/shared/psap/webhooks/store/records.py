"""A delivery's records: the typed models read from its items, and the list entries
(held, dead-letter) written beside it."""

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from psap.clock import parse_timestamp
from psap.storage.attributes import to_item
from psap.webhooks.models import Attempt, Delivery, DeliveryStatus
from psap.webhooks.retry_policy import ErrorClass
from psap.webhooks.store.keys import _dead_pk, _held_pk, _table, expires_at_epoch


def _held_pointer_put(
    tenant_id: int, connector_id: str, held_sk: str, *, now: datetime
) -> dict[str, Any]:
    return {
        "Put": {
            "TableName": _table(),
            "Item": to_item(
                {
                    "pk": _held_pk(tenant_id, connector_id),
                    "sk": held_sk,
                    "deliveryId": held_sk.split("#", 1)[1],
                    "expiresAtEpoch": expires_at_epoch(now),
                }
            ),
        }
    }


def _dead_pointer_put(tenant_id: int, delivery: Delivery, stamp: str) -> dict[str, Any]:
    return {
        "Put": {
            "TableName": _table(),
            "Item": to_item(
                {
                    "pk": _dead_pk(tenant_id, delivery.connector_id),
                    "sk": f"{stamp}#{delivery.delivery_id}",
                    "deliveryId": delivery.delivery_id,
                    "expiresAtEpoch": expires_at_epoch(parse_timestamp(stamp)),
                }
            ),
        }
    }


def _delivery(item: Mapping[str, Any]) -> Delivery:
    body = item["body"]
    return Delivery(
        delivery_id=item["deliveryId"],
        tenant_id=int(item["tenantId"]),
        connector_id=item["connectorId"],
        event_id=item["eventId"],
        event_type=item["eventType"],
        status=DeliveryStatus(item["status"]),
        attempt_count=int(item["attemptCount"]),
        run_attempts=int(item["runAttempts"]),
        next_attempt_at=parse_timestamp(item["nextAttemptAt"])
        if item.get("nextAttemptAt")
        else None,
        created_at=parse_timestamp(item["createdAt"]),
        updated_at=parse_timestamp(item["updatedAt"]),
        delivered_at=parse_timestamp(item["deliveredAt"]) if item.get("deliveredAt") else None,
        last_status_code=int(item["lastStatusCode"])
        if item.get("lastStatusCode") is not None
        else None,
        last_error_class=ErrorClass(item["lastErrorClass"]) if item.get("lastErrorClass") else None,
        body=bytes(body.value if hasattr(body, "value") else body),
    )


def _attempt(item: Mapping[str, Any]) -> Attempt:
    return Attempt.model_validate(
        {key: value for key, value in item.items() if key not in {"pk", "sk"}}
    )


def _attribute(value: Any) -> dict[str, Any]:
    return to_item({"v": value}).get("v", {"NULL": True})
