"""Pointers under the first design's per-tenant key (`T#{t}#DUE`), moved into the minute index.

No scheduler has read that key since the minute index: a delivery that waited there (a
retry wait over 15 minutes, or a message presumed lost) would never be sent. The
scheduler moves them in resumable steps, tenant by tenant along the tenant directory,
until the directory is done (docs/design.md, "Upgrading a table that has pointers without
markers"). A step run twice moves nothing twice: a moved pointer has left the old key.
"""

import time
from datetime import datetime
from typing import Any

from psap.clock import parse_timestamp
from psap.storage.aws_errors import TransactionCancelled, translated
from psap.storage.dynamodb import dynamodb, read_item, transact_write
from psap.storage.queries import partition_request, query_all, query_pages
from psap.webhooks.models import DeliveryStatus
from psap.webhooks.store.keys import (
    TENANT_DIRECTORY,
    _delivery_key,
    _key,
    _legacy_due_pk,
    _table,
)
from psap.webhooks.store.pointers import due_item, due_pointer, pointer_put


def move_legacy_pointers(after: str, *, now: datetime, until: float) -> str | None:
    """Moves the legacy pointers of the directory's tenants that come after `after` (a
    directory sort key; "" for the first) into the minute index, until `time.monotonic()`
    passes `until`; answers where the next step starts (None: every tenant is done)."""
    request = partition_request(_table(), TENANT_DIRECTORY)
    if after:
        request["KeyConditionExpression"] += " AND sk > :after"
        request["ExpressionAttributeValues"][":after"] = {"S": after}
    for page in query_pages(request, "tenant directory"):
        for raw in page:
            tenant_id = int(raw["tenantId"]["N"])
            for pointer in query_all(
                partition_request(_table(), _legacy_due_pk(tenant_id)), "legacy due pointers"
            ):
                _move(tenant_id, pointer, now)
            after = str(raw["sk"]["S"])
            if time.monotonic() > until:
                return after
    return None


def _move(tenant_id: int, pointer: dict[str, Any], now: datetime) -> None:
    """Re-files one legacy pointer where the scheduler will look at it (when it is due, or
    when its message seems lost, and not before now), if its delivery still names it."""
    delivery_id = str(pointer["deliveryId"])
    old_key = _key(str(pointer["pk"]), str(pointer["sk"]))
    due_at = parse_timestamp(str(pointer["sk"]).split("#", 1)[0])
    attempt_count = int(pointer.get("attemptCount", 0))
    enqueued = bool(pointer.get("enqueued", True))
    moved = due_pointer(tenant_id, delivery_id, attempt_count, due_at=due_at, enqueued=enqueued)
    now_item = due_item(tenant_id, delivery_id, attempt_count, due_at=due_at, look_at=now)
    if moved["sk"] < now_item["sk"]:
        moved = now_item  # overdue: looked at in this very run
    epoch = int(now.timestamp())
    try:
        transact_write(
            [
                {
                    "Update": {
                        "TableName": _table(),
                        "Key": _delivery_key(tenant_id, delivery_id),
                        "UpdateExpression": "SET duePk = :new_pk, dueSk = :new_sk",
                        # Not while an attempt is under way: its record moves the pointer.
                        "ConditionExpression": (
                            "attribute_not_exists(duePk) AND dueSk = :sk AND #s = :pending "
                            "AND (attribute_not_exists(leaseUntil) OR leaseUntil < :epoch)"
                        ),
                        "ExpressionAttributeNames": {"#s": "status"},
                        "ExpressionAttributeValues": {
                            ":new_pk": {"S": moved["pk"]},
                            ":new_sk": {"S": moved["sk"]},
                            ":sk": old_key["sk"],
                            ":pending": {"S": DeliveryStatus.PENDING.value},
                            ":epoch": {"N": str(epoch)},
                        },
                    }
                },
                {"Delete": {"TableName": _table(), "Key": old_key}},
                pointer_put(moved),
            ]
        )
    except TransactionCancelled:
        delivery = read_item(
            _table(), _delivery_key(tenant_id, delivery_id), "legacy due pointer", consistent=True
        )
        if (
            delivery is not None
            and not delivery.get("duePk")
            and delivery.get("dueSk") == old_key["sk"]["S"]
        ):
            return  # leased: the attempt under way records its next pointer itself
        with translated("legacy due pointer"):
            dynamodb().delete_item(TableName=_table(), Key=old_key)  # its delivery moved on
