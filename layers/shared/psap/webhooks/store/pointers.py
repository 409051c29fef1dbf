"""Filing a delivery in the due index: its pointer, and the minute's marker written first.

A pointer lives under `DUE#{minute}#{shard}`; the scheduler learns which shards of a minute
hold any from one small item per minute, `DUEMINUTES#{day}` / `{minute}`, whose `shards`
set names them. A writer ADDs its shard to that set before the transaction that puts the
pointer (a marker without a pointer costs the scheduler one empty Query; a pointer without
a marker would never be read), once per warm container and (minute, shard): the marker's
key takes a few writes per container and minute, not one per delivery (docs/design.md,
"Capacity of the CAD and webhook keys").
"""

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, Final

from psap.clock import format_timestamp, parse_timestamp
from psap.storage.attributes import to_item
from psap.storage.aws import translated
from psap.storage.dynamodb import dynamodb
from psap.webhooks.store.keys import (
    DELIVERY_RETENTION,
    LOST_MESSAGE_GRACE,
    _key,
    _legacy_due_pk,
    _table,
    due_key,
    due_minutes_key,
)

# The (minute, shard) markers this warm container wrote. Bounded; forgetting only costs a
# write that finds its shard in the set already.
_MARKED_MAX: Final = 10_000
_marked: set[tuple[str, int]] = set()


def forget_marked_shards() -> None:
    """For tests: a fresh table needs its markers written again."""
    _marked.clear()


def _mark_shard(pointer_pk: str) -> None:
    """Names the pointer's shard in its minute's marker, before the pointer is written."""
    bucket, shard_text = pointer_pk.removeprefix("DUE#").rsplit("#", 1)
    shard = int(shard_text)
    if (bucket, shard) in _marked:
        return
    # Kept as long as a delivery filed under it could matter (its record's retention), so
    # a scheduler that was stopped for days still finds the minute's work; then it expires.
    expires = parse_timestamp(bucket + ":00Z") + timedelta(minutes=1) + DELIVERY_RETENTION
    with translated("due index marker"):
        dynamodb().update_item(
            TableName=_table(),
            Key=due_minutes_key(bucket),
            UpdateExpression="ADD shards :shard SET expiresAtEpoch = :expires",
            ExpressionAttributeValues={
                ":shard": {"NS": [str(shard)]},
                ":expires": {"N": str(int(expires.timestamp()))},
            },
        )
    if len(_marked) >= _MARKED_MAX:
        _marked.clear()
    _marked.add((bucket, shard))


def pointer_put(pointer: Mapping[str, Any]) -> dict[str, Any]:
    """The transaction item that files `pointer` (from `due_item`), its shard marked first."""
    _mark_shard(str(pointer["pk"]))
    return {"Put": {"TableName": _table(), "Item": to_item(dict(pointer))}}


def due_pointer(
    tenant_id: int, delivery_id: str, attempt_count: int, *, due_at: datetime, enqueued: bool
) -> dict[str, Any]:
    """The delivery's entry in the due index. When an SQS message (delay <= 15 min) carries
    the attempt, the scheduler need only look LOST_MESSAGE_GRACE after it is due (when that
    message seems lost); otherwise when it is due."""
    look_at = due_at + LOST_MESSAGE_GRACE if enqueued else due_at
    return due_item(tenant_id, delivery_id, attempt_count, due_at=due_at, look_at=look_at)


def due_item(
    tenant_id: int, delivery_id: str, attempt_count: int, *, due_at: datetime, look_at: datetime
) -> dict[str, Any]:
    """A due pointer filed under `look_at`. No TTL: it must not vanish unsent."""
    pk, sk = due_key(tenant_id, delivery_id, look_at)
    return {
        "pk": pk,
        "sk": sk,
        "tenantId": tenant_id,
        "deliveryId": delivery_id,
        # The attempt the due delivery waits for: a dispatch message names it.
        "attemptCount": attempt_count,
        "dueAt": format_timestamp(due_at),
    }


def due_key_of(tenant_id: int, item: Mapping[str, Any]) -> dict[str, dict[str, str]] | None:
    """The key of the due pointer a delivery item names (None: it has none)."""
    if not item.get("dueSk"):
        return None
    pk = str(item.get("duePk") or _legacy_due_pk(tenant_id))
    return _key(pk, str(item["dueSk"]))
