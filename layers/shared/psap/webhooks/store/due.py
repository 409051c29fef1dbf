"""The due index: what the scheduler must look at, by minute, in DUE_SHARDS partitions.

A pointer is filed under the minute its delivery needs the scheduler (due time for a wait
longer than SQS can delay; due time + LOST_MESSAGE_GRACE when a message carries it), so a
run reads the minutes that have come, whatever the number of tenants. Handling a pointer
re-files it LOST_MESSAGE_GRACE ahead (in the same transaction that points the delivery at
it) before its message is sent: a run that dies, or a message that is lost, meets it again
then. The scheduler's cursor (the first minute not yet finished) makes runs resumable.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from enum import StrEnum
from typing import Any

from psap.clock import format_timestamp, parse_timestamp
from psap.storage.attributes import from_item
from psap.storage.aws_errors import TransactionCancelled, translated
from psap.storage.dynamodb import batch_get, dynamodb, read_item, transact_write
from psap.storage.queries import query_page, query_pages
from psap.webhooks.models import DeliveryStatus
from psap.webhooks.store.keys import (
    LOST_MESSAGE_GRACE,
    _delivery_key,
    _key,
    _table,
    due_count_key,
    due_minutes_pk,
    due_pk,
)
from psap.webhooks.store.pointers import due_item, due_key_of, pointer_put, pointers_removed

_CURSOR_KEY = {"pk": {"S": "SCHEDULER#DUE"}, "sk": {"S": "CURSOR"}}


@dataclass(frozen=True)
class DuePointer:
    tenant_id: int
    delivery_id: str
    attempt_count: int
    due_at: datetime
    key: dict[str, dict[str, str]]


def due_page(
    bucket: str, shard: int, until: datetime, *, after: dict[str, Any] | None, limit: int
) -> tuple[list[DuePointer], dict[str, Any] | None]:
    """Up to `limit` pointers of one minute's shard to look at by `until`, and where the next
    page starts (None: that was all). One Query."""
    request = {
        "TableName": _table(),
        "KeyConditionExpression": "pk = :p AND sk <= :until",
        "ExpressionAttributeValues": {
            ":p": {"S": due_pk(bucket, shard)},
            ":until": {"S": format_timestamp(until) + "~"},
        },
        "Limit": limit,
        "ConsistentRead": True,
    }
    answer = query_page(request, "due index", after)
    pointers = []
    for raw in answer.get("Items", []):
        item = from_item(raw)
        pointers.append(
            DuePointer(
                tenant_id=int(item["tenantId"]),
                delivery_id=str(item["deliveryId"]),
                attempt_count=int(item["attemptCount"]),
                due_at=parse_timestamp(str(item["dueAt"])),
                key=_key(str(item["pk"]), str(item["sk"])),
            )
        )
    return pointers, answer.get("LastEvaluatedKey")


class Refiled(StrEnum):
    SEND = "SEND"  # re-filed ahead: send its dispatch message now
    GONE = "GONE"  # its delivery moved on (attempted, held, deleted): the pointer is dropped
    BUSY = "BUSY"  # an attempt is under way: left for the next run


def refile(pointer: DuePointer, now: datetime) -> Refiled:
    """Moves the pointer LOST_MESSAGE_GRACE ahead, if its delivery still waits for it."""
    moved = due_item(
        pointer.tenant_id,
        pointer.delivery_id,
        pointer.attempt_count,
        due_at=pointer.due_at,
        look_at=now + LOST_MESSAGE_GRACE,
    )
    if _key(moved["pk"], moved["sk"]) == pointer.key:
        return Refiled.SEND
    epoch = int(now.timestamp())
    try:
        transact_write(
            [
                {
                    "Update": {
                        "TableName": _table(),
                        "Key": _delivery_key(pointer.tenant_id, pointer.delivery_id),
                        "UpdateExpression": "SET duePk = :new_pk, dueSk = :new_sk",
                        "ConditionExpression": (
                            "duePk = :pk AND dueSk = :sk AND #s = :pending "
                            "AND (attribute_not_exists(leaseUntil) OR leaseUntil < :epoch)"
                        ),
                        "ExpressionAttributeNames": {"#s": "status"},
                        "ExpressionAttributeValues": {
                            ":new_pk": {"S": moved["pk"]},
                            ":new_sk": {"S": moved["sk"]},
                            ":pk": pointer.key["pk"],
                            ":sk": pointer.key["sk"],
                            ":pending": {"S": DeliveryStatus.PENDING.value},
                            ":epoch": {"N": str(epoch)},
                        },
                    }
                },
                {"Delete": {"TableName": _table(), "Key": pointer.key}},
                pointer_put(moved),
            ]
        )
    except TransactionCancelled:
        return _not_refiled(pointer)
    pointers_removed([pointer.key])
    return Refiled.SEND


def _not_refiled(pointer: DuePointer) -> Refiled:
    item = read_item(
        _table(),
        _delivery_key(pointer.tenant_id, pointer.delivery_id),
        "due index",
        consistent=True,
    )
    if item is not None and due_key_of(pointer.tenant_id, item) == pointer.key:
        return Refiled.BUSY  # still ours: only a lease (an attempt under way) stopped it
    with translated("due index"):
        gone = dynamodb().delete_item(TableName=_table(), Key=pointer.key, ReturnValues="ALL_OLD")
    # Counted out only if this removed it: the delivery's own write may have done it first.
    pointers_removed([pointer.key] if gone.get("Attributes") else [])
    return Refiled.GONE


@dataclass(frozen=True)
class DueCursor:
    """Where the scheduler stands: the first minute it has not finished; the first minute
    whose pointers are all named by its marker (earlier minutes may hold pointers filed
    before markers existed: the scheduler reads every shard of those); and where the move
    of the first design's per-tenant pointers goes on (a tenant directory key, "" for its
    start; None once it is done: store/legacy.py)."""

    bucket: str
    marked_from: str
    legacy_after: str | None = ""


def due_cursor() -> DueCursor | None:
    """The scheduler's cursor (None: it never ran). A cursor saved before markers existed
    has no `markedFrom`: its `marked_from` is then the empty string, to be decided."""
    item = read_item(_table(), _CURSOR_KEY, "scheduler cursor", consistent=True)
    if item is None:
        return None
    legacy_after = None if item.get("legacyDone") else str(item.get("legacyAfter") or "")
    return DueCursor(str(item["bucket"]), str(item.get("markedFrom") or ""), legacy_after)


def save_due_cursor(cursor: DueCursor, now: datetime) -> None:
    legacy: dict[str, Any] = (
        {"legacyDone": {"BOOL": True}}
        if cursor.legacy_after is None
        else {"legacyAfter": {"S": cursor.legacy_after}}
    )
    with translated("scheduler cursor"):
        dynamodb().put_item(
            TableName=_table(),
            Item={
                **_CURSOR_KEY,
                "bucket": {"S": cursor.bucket},
                "markedFrom": {"S": cursor.marked_from},
                **legacy,
                "updatedAt": {"S": format_timestamp(now)},
            },
        )


def marked_shards(first: str, last: str) -> dict[str, list[int]]:
    """The shards holding pointers of each minute from `first` to `last` (inclusive) that
    has any, as the minutes' markers name them: one Query per day covered, whatever the
    number of minutes, shards or tenants."""
    found: dict[str, list[int]] = {}
    day = date.fromisoformat(first[:10])
    while day.isoformat() <= last[:10]:
        request = {
            "TableName": _table(),
            "KeyConditionExpression": "pk = :p AND sk BETWEEN :first AND :last",
            "ExpressionAttributeValues": {
                ":p": {"S": due_minutes_pk(day.isoformat())},
                ":first": {"S": first},
                ":last": {"S": last},
            },
            # A marker is written before its minute's first pointer: read it as strongly.
            "ConsistentRead": True,
        }
        for page in query_pages(request, "due index markers"):
            for raw in page:
                shards = raw.get("shards", {}).get("NS", [])
                found[raw["sk"]["S"]] = sorted(int(shard) for shard in shards)
        day += timedelta(days=1)
    return found


def counted_shards(slots: Sequence[tuple[str, int]]) -> set[tuple[str, int]]:
    """Those of the (minute, shard) slots whose count says pointers may be there now: one
    strongly consistent BatchGetItem per 100 slots. A slot never counted holds none (its
    count is written before its first pointer)."""
    if not slots:
        return set()
    counts = batch_get(
        _table(), [due_count_key(bucket, shard) for bucket, shard in slots], consistent=True
    )
    found = set()
    for item in counts:
        # Not "> 0": a count below zero is one that missed a pointer filed before counts
        # existed; reading the shard costs a Query, skipping it could cost a delivery.
        if int(item.get("pointers", 0)) != 0:
            bucket, shard = str(item["pk"]).removeprefix("DUECOUNT#").rsplit("#", 1)
            found.add((bucket, int(shard)))
    return found


def minutes(first: str, last: str, limit: int) -> list[str]:
    """The minutes from `first` to `last` (inclusive), at most `limit` of them."""
    moment = parse_timestamp(first + ":00Z")
    end = parse_timestamp(last + ":00Z")
    found: list[str] = []
    while moment <= end and len(found) < limit:
        found.append(format_timestamp(moment)[:16])
        moment += timedelta(minutes=1)
    return found
