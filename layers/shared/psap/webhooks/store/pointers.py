"""Filing a delivery in the due index: its pointer, and what tells the scheduler where to look.

A pointer lives under `DUE#{minute}#{shard}`. Two small items let the scheduler read only
the shards that hold pointers now, not every shard of every minute it covers:

- the minute's marker, `DUEMINUTES#{day}` / `{minute}`, whose `shards` set names every
  shard of the minute that was ever filed in. A writer ADDs its shard before its first
  pointer there, once per warm container and (minute, shard): the day's key takes a few
  writes per container and minute, not one per delivery;
- the shard's count, `DUECOUNT#{minute}#{shard}` / `COUNT`: ADD 1 before a pointer is put,
  ADD -1 after the transaction that removed one has committed. Never below the pointers
  there (a write that fails between leaves it above: one Query too many, nothing missed),
  so a shard counted 0 is empty; most pointers (the net for a lost message) leave with
  their attempt long before their minute comes, and their shard then costs no Query.

Both are written before the pointer: a marker or a count without a pointer costs the
scheduler one read; a pointer without them would never be read (docs/design.md,
"Capacity of the CAD and webhook keys").
"""

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any, Final

from psap.clock import format_timestamp, parse_timestamp
from psap.observability import logger
from psap.storage.attributes import to_item
from psap.storage.aws_errors import translated
from psap.storage.dynamodb import dynamodb
from psap.webhooks.store.keys import (
    DELIVERY_RETENTION,
    LOST_MESSAGE_GRACE,
    _key,
    _legacy_due_pk,
    _table,
    due_count_key,
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


def _slot(pointer_pk: str) -> tuple[str, int] | None:
    """(minute, shard) of a pointer in the minute index (None: an older per-tenant key)."""
    if not pointer_pk.startswith("DUE#"):
        return None
    bucket, shard = pointer_pk.removeprefix("DUE#").rsplit("#", 1)
    return bucket, int(shard)


def _expires(bucket: str) -> str:
    # Kept as long as a delivery filed under the minute could matter (its record's
    # retention), so a scheduler stopped for days still finds the minute's work.
    moment = parse_timestamp(bucket + ":00Z") + timedelta(minutes=1) + DELIVERY_RETENTION
    return str(int(moment.timestamp()))


def _mark_shard(bucket: str, shard: int) -> None:
    if (bucket, shard) in _marked:
        return
    with translated("due index marker"):
        dynamodb().update_item(
            TableName=_table(),
            Key=due_minutes_key(bucket),
            UpdateExpression="ADD shards :shard SET expiresAtEpoch = :expires",
            ExpressionAttributeValues={
                ":shard": {"NS": [str(shard)]},
                ":expires": {"N": _expires(bucket)},
            },
        )
    if len(_marked) >= _MARKED_MAX:
        _marked.clear()
    _marked.add((bucket, shard))


def _count(bucket: str, shard: int, change: int) -> None:
    with translated("due index count"):
        dynamodb().update_item(
            TableName=_table(),
            Key=due_count_key(bucket, shard),
            UpdateExpression="ADD pointers :change SET expiresAtEpoch = :expires",
            ExpressionAttributeValues={
                ":change": {"N": str(change)},
                ":expires": {"N": _expires(bucket)},
            },
        )


def pointer_put(
    pointer: Mapping[str, Any], *, replacing: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The transaction item that files `pointer` (from `due_item`), once its minute's marker
    names its shard and the shard's count includes it; `replacing` is the pointer the same
    write removes (counted out by `pointers_removed`), which may be this very one."""
    slot = _slot(str(pointer["pk"]))
    if slot is not None:
        _mark_shard(*slot)
        if replacing != _key(str(pointer["pk"]), str(pointer["sk"])):
            _count(*slot, 1)
    return {"Put": {"TableName": _table(), "Item": to_item(dict(pointer))}}


def pointers_removed(keys: Iterable[Mapping[str, Any] | None]) -> None:
    """Counts out the pointers a committed write removed. A count left high (this fails)
    costs the scheduler a Query of an empty shard; the delivery's write stands."""
    for key in keys:
        slot = _slot(str(key["pk"]["S"])) if key is not None else None
        if slot is None:
            continue
        try:
            _count(*slot, -1)
        except Exception:
            logger.exception("due index count not lowered", extra={"pointer": key})


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
