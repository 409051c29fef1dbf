"""Deliveries: made, leased, attempted and re-armed, each change in one transaction with the
pointers that list and schedule it. Held deliveries are in `held`, reads of the log in
`listing`, the typed records in `records`."""

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psap.clock import format_timestamp, parse_timestamp
from psap.errors import Conflict, NotFound
from psap.storage.attributes import from_item, to_item
from psap.storage.aws_errors import ConditionFailed, TransactionCancelled, translated
from psap.storage.dynamodb import batch_put, dynamodb, transact_write
from psap.webhooks.models import (
    Attempt,
    Delivery,
    DeliveryStatus,
)
from psap.webhooks.store.keys import (
    _DELIVERY_SK,
    LEASE_SECONDS,
    _connector_not_active,
    _dead_pk,
    _delivery_key,
    _delivery_pk,
    _held_pk,
    _key,
    _listing_pk,
    _table,
    expires_at_epoch,
)
from psap.webhooks.store.pointers import due_key_of, due_pointer, pointer_put, pointers_removed
from psap.webhooks.store.reads import _get, _update
from psap.webhooks.store.records import (
    _attribute,
    _dead_pointer_put,
    _delivery,
    _held_pointer_put,
)

# ---------------------------------------------------------------- deliveries


@dataclass(frozen=True)
class NewDelivery:
    delivery_id: str
    connector_id: str
    event_id: str
    event_type: str
    body: bytes


def create_delivery(
    tenant_id: int, new: NewDelivery, now: datetime, *, held: bool = False
) -> DeliveryStatus | None:
    """Stores a delivery due now (or held, for a connector that is not active), with its
    pointers; returns its status. None when it exists already (a worker retry): delivery
    ids are derived from what they answer, so a retry cannot duplicate."""
    if held:
        try:
            _create_held(tenant_id, new, now)
        except TransactionCancelled as cancelled:
            if cancelled.item_failed(0):
                return None  # already there
            # Otherwise the connector was enabled meanwhile: an ordinary delivery, due now.
        else:
            return DeliveryStatus.HELD
    stamp = format_timestamp(now)
    due = due_pointer(tenant_id, new.delivery_id, 0, due_at=now, enqueued=True)
    pending = {
        "status": DeliveryStatus.PENDING.value,
        "nextAttemptAt": stamp,
        "duePk": due["pk"],
        "dueSk": due["sk"],
    }
    try:
        transact_write(
            [
                *_new_delivery_puts(tenant_id, new, now, state=pending),
                pointer_put(due),
            ]
        )
    except TransactionCancelled:
        return None  # already there
    return DeliveryStatus.PENDING


def _create_held(tenant_id: int, new: NewDelivery, now: datetime) -> None:
    transact_write(
        [
            *_new_held_puts(tenant_id, new, now),
            _connector_not_active(tenant_id, new.connector_id),
        ]
    )


def _new_held_puts(tenant_id: int, new: NewDelivery, now: datetime) -> list[dict[str, Any]]:
    """A new held delivery's writes: its record, its listing entry, its held-list entry."""
    held_sk = f"{format_timestamp(now)}#{new.delivery_id}"
    held = {"status": DeliveryStatus.HELD.value, "heldSk": held_sk}
    return [
        *_new_delivery_puts(tenant_id, new, now, state=held),
        _held_pointer_put(tenant_id, new.connector_id, held_sk, now=now),
    ]


@dataclass(frozen=True)
class NewHeldDelivery:
    delivery: NewDelivery
    created_at: datetime


def create_held_in_bulk(tenant_id: int, held: Sequence[NewHeldDelivery]) -> None:
    """Stores new deliveries as held, 25 items per BatchWriteItem: the very items a hold
    writes (`create_delivery(held=True)`), without its transaction's conditions. Only for
    deliveries known to be new, of a connector known to be disabled, and written by no one
    else meanwhile (a backlog loaded for a test or a bench); updates are held one by one."""
    items = [
        put["Put"]["Item"]
        for one in held
        for put in _new_held_puts(tenant_id, one.delivery, one.created_at)
    ]
    batch_put(_table(), items)


def _new_delivery_puts(
    tenant_id: int, new: NewDelivery, now: datetime, *, state: dict[str, Any]
) -> list[dict[str, Any]]:
    """The two writes every new delivery starts with: the record (only if it is not there
    yet: ids are derived, so a retry finds it) with its `state` (status and pointer keys),
    and its pointer in the connector's listing, by creation time."""
    stamp = format_timestamp(now)
    expires = expires_at_epoch(now)
    delivery = {
        "pk": _delivery_pk(tenant_id, new.delivery_id),
        "sk": _DELIVERY_SK,
        "deliveryId": new.delivery_id,
        "tenantId": tenant_id,
        "connectorId": new.connector_id,
        "eventId": new.event_id,
        "eventType": new.event_type,
        "attemptCount": 0,
        "runAttempts": 0,
        "createdAt": stamp,
        "updatedAt": stamp,
        "body": new.body,
        "expiresAtEpoch": expires,
        **state,
    }
    listing = {
        "pk": _listing_pk(tenant_id, new.connector_id),
        "sk": f"{stamp}#{new.delivery_id}",
        "deliveryId": new.delivery_id,
        # Goes with the delivery's first TTL: a delivery re-armed later outlives its place
        # in the listing by at most the retention.
        "expiresAtEpoch": expires,
    }
    return [
        {
            "Put": {
                "TableName": _table(),
                "Item": to_item(delivery),
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        },
        {"Put": {"TableName": _table(), "Item": to_item(listing)}},
    ]


def get_delivery(tenant_id: int, delivery_id: str) -> Delivery:
    item = _get(_delivery_key(tenant_id, delivery_id), consistent=True)
    if item is None:
        raise NotFound(f"Delivery {delivery_id} does not exist")
    return _delivery(item)


def find_delivery(tenant_id: int, delivery_id: str) -> Delivery | None:
    item = _get(_delivery_key(tenant_id, delivery_id), consistent=True)
    return _delivery(item) if item is not None else None


@dataclass(frozen=True)
class Claim:
    delivery: Delivery
    lease_id: str
    due_key: dict[str, dict[str, str]] | None  # its due pointer's key, deleted with the attempt


def claim(
    tenant_id: int,
    delivery_id: str,
    attempt_count: int,
    *,
    due_by: datetime,
    now: datetime,
    lease_seconds: int = LEASE_SECONDS,
) -> Claim | None:
    """Takes the lease on a pending delivery due by `due_by`, at the expected attempt; None
    when it is not due, another dispatcher holds it, or it moved on (delivered, attempted,
    re-armed) meanwhile."""
    lease_id = uuid.uuid4().hex
    epoch = int(now.timestamp())
    try:
        with translated("delivery claim failed"):
            answer = dynamodb().update_item(
                TableName=_table(),
                Key=_delivery_key(tenant_id, delivery_id),
                UpdateExpression="SET leaseId = :lease, leaseUntil = :until",
                ConditionExpression=(
                    "#s = :pending AND attemptCount = :count AND nextAttemptAt <= :now "
                    "AND (attribute_not_exists(leaseUntil) OR leaseUntil < :epoch)"
                ),
                ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues={
                    ":lease": {"S": lease_id},
                    ":until": {"N": str(epoch + lease_seconds)},
                    ":pending": {"S": DeliveryStatus.PENDING.value},
                    ":count": {"N": str(attempt_count)},
                    ":now": {"S": format_timestamp(due_by)},
                    ":epoch": {"N": str(epoch)},
                },
                ReturnValues="ALL_NEW",
            )
    except ConditionFailed:
        return None
    item = from_item(answer["Attributes"])
    return Claim(_delivery(item), lease_id, due_key_of(tenant_id, item))


def release(tenant_id: int, claimed: Claim) -> None:
    """Gives the lease back without an attempt (the delivery moves to another lane)."""
    _update(
        _delivery_key(tenant_id, claimed.delivery.delivery_id),
        "REMOVE leaseId, leaseUntil",
        {":lease": {"S": claimed.lease_id}},
        condition="leaseId = :lease",
        tolerate_condition=True,
    )


@dataclass(frozen=True)
class AttemptResult:
    """What to write after an attempt: its record and the delivery's new state."""

    attempt: Attempt
    status: DeliveryStatus
    next_attempt_at: datetime | None
    enqueued: bool  # an SQS message will carry the next attempt (delay <= 15 min)


def record_attempt(tenant_id: int, claimed: Claim, result: AttemptResult, *, now: datetime) -> None:
    """Writes the attempt and the delivery's new state at once, if the lease is still ours."""
    delivery = claimed.delivery
    stamp = format_timestamp(now)
    attempt = result.attempt
    attempt_item = {
        "pk": _delivery_pk(tenant_id, delivery.delivery_id),
        "sk": f"ATTEMPT#{attempt.number:04d}",
        **attempt.model_dump(mode="json", by_alias=True),
        "expiresAtEpoch": expires_at_epoch(now),
    }
    values: dict[str, Any] = {
        ":lease": claimed.lease_id,
        ":status": result.status.value,
        ":count": attempt.number,
        ":run": delivery.run_attempts + 1,
        ":now": stamp,
        ":code": attempt.status_code,
        ":error": attempt.error_class.value if attempt.error_class else None,
        ":expires": expires_at_epoch(now),
    }
    sets = [
        "#s = :status",
        "attemptCount = :count",
        "runAttempts = :run",
        "updatedAt = :now",
        "lastStatusCode = :code",
        "lastErrorClass = :error",
        "expiresAtEpoch = :expires",
    ]
    removes = ["leaseId", "leaseUntil"]
    writes: list[dict[str, Any]] = [
        {"Put": {"TableName": _table(), "Item": to_item(attempt_item)}},
    ]
    kept_key = None
    if result.status is DeliveryStatus.PENDING and result.next_attempt_at is not None:
        due = due_pointer(
            tenant_id,
            delivery.delivery_id,
            attempt.number,
            due_at=result.next_attempt_at,
            enqueued=result.enqueued,
        )
        kept_key = _key(due["pk"], due["sk"])
        sets += ["nextAttemptAt = :next", "duePk = :due_pk", "dueSk = :due_sk"]
        values.update(
            {
                ":next": format_timestamp(result.next_attempt_at),
                ":due_pk": due["pk"],
                ":due_sk": due["sk"],
            }
        )
        writes.append(pointer_put(due, replacing=claimed.due_key))
    else:
        removes += ["nextAttemptAt", "duePk", "dueSk"]
    removed = claimed.due_key if claimed.due_key != kept_key else None
    if removed is not None:
        writes.append({"Delete": {"TableName": _table(), "Key": removed}})
    if result.status is DeliveryStatus.DELIVERED:
        sets.append("deliveredAt = :now")
    if result.status.dead:
        writes.append(_dead_pointer_put(tenant_id, delivery, stamp))
        sets.append("deadSk = :dead")
        values[":dead"] = f"{stamp}#{delivery.delivery_id}"
    writes.insert(
        0,
        {
            "Update": {
                "TableName": _table(),
                "Key": _delivery_key(tenant_id, delivery.delivery_id),
                "UpdateExpression": f"SET {', '.join(sets)} REMOVE {', '.join(removes)}",
                "ConditionExpression": "leaseId = :lease",
                "ExpressionAttributeNames": {"#s": "status"},
                "ExpressionAttributeValues": {
                    name: _attribute(value) for name, value in values.items()
                },
            }
        },
    )
    transact_write(
        writes, on_cancel=lambda codes: Conflict("the delivery's lease was lost mid-attempt")
    )
    pointers_removed([removed])


def rearm(tenant_id: int, delivery_id: str, now: datetime) -> Delivery:
    """Makes a delivery due now with a fresh schedule (replay, recovery). Same id, same body."""
    item = _get(_delivery_key(tenant_id, delivery_id), consistent=True)
    if item is None:
        raise NotFound(f"Delivery {delivery_id} does not exist")
    current = _delivery(item)
    stamp = format_timestamp(now)
    # Its message is sent right after (by the caller): the scheduler looks only if it is lost.
    due = due_pointer(tenant_id, delivery_id, current.attempt_count, due_at=now, enqueued=True)
    filed = due_key_of(tenant_id, item)
    writes: list[dict[str, Any]] = [
        {
            "Update": {
                "TableName": _table(),
                "Key": _delivery_key(tenant_id, delivery_id),
                "UpdateExpression": (
                    "SET #s = :pending, runAttempts = :zero, nextAttemptAt = :now, "
                    "duePk = :due_pk, dueSk = :due_sk, updatedAt = :now, expiresAtEpoch = :expires "
                    "REMOVE deadSk, heldSk, leaseId, leaseUntil"
                ),
                # Not while an attempt is under way: its outcome would be lost.
                "ConditionExpression": (
                    "updatedAt = :seen AND "
                    "(attribute_not_exists(leaseUntil) OR leaseUntil < :epoch)"
                ),
                "ExpressionAttributeNames": {"#s": "status"},
                "ExpressionAttributeValues": {
                    ":pending": {"S": DeliveryStatus.PENDING.value},
                    ":zero": {"N": "0"},
                    ":now": {"S": stamp},
                    ":due_pk": {"S": due["pk"]},
                    ":due_sk": {"S": due["sk"]},
                    ":expires": {"N": str(expires_at_epoch(now))},
                    ":seen": {"S": str(item["updatedAt"])},
                    ":epoch": {"N": str(int(now.timestamp()))},
                },
            }
        },
        pointer_put(due, replacing=filed),
    ]
    removed = filed if filed != _key(due["pk"], due["sk"]) else None
    if removed is not None:
        writes.append({"Delete": {"TableName": _table(), "Key": removed}})
    if item.get("deadSk"):
        writes.append(
            {
                "Delete": {
                    "TableName": _table(),
                    "Key": _key(_dead_pk(tenant_id, current.connector_id), str(item["deadSk"])),
                }
            }
        )
    if item.get("heldSk"):
        writes.append(
            {
                "Delete": {
                    "TableName": _table(),
                    "Key": _key(_held_pk(tenant_id, current.connector_id), str(item["heldSk"])),
                }
            }
        )
    transact_write(
        writes,
        on_cancel=lambda codes: Conflict(
            f"Delivery {delivery_id} is being attempted right now; try again in a minute"
        ),
    )
    pointers_removed([removed])
    return current.model_copy(
        update={
            "status": DeliveryStatus.PENDING,
            "run_attempts": 0,
            "next_attempt_at": parse_timestamp(stamp),
            "updated_at": parse_timestamp(stamp),
        }
    )
