"""Records with a service id and a source number: the storage shared by incidents and events.

Layout in the tenant-data table (every key begins with the tenant):

  T#{t}#{prefix}#{id}            / RECORD   the record: number, compressed document, link,
                                            createdAt, updatedAt, sourceOrder
  T#{t}#{prefix}NUM#{number}     / NUMBER   the number index: which id holds this number
  SEQ#{sequence}                 / SEQ      the id sequence (ids unique across tenants,
                                            handed out in blocks: psap.storage.sequences)

The number index is written with a condition in the same transaction as a new record, so two
writers of the same new number cannot both create one: the loser finds the index and updates
the record the winner created. Updates carry a SourceOrder and are conditional on it.

A store holds one NumberedRecords(table, kind) and calls it; the key functions stay free
functions of the kind (other stores build keys inside an event's partition).
"""

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any
from urllib.parse import quote

from psap.clock import format_timestamp
from psap.errors import Conflict
from psap.storage.aws_errors import ConditionFailed, TransactionCancelled, translated
from psap.storage.documents import decode_document, encode_document
from psap.storage.dynamodb import batch_get, batch_put, dynamodb, read_item, transact_write
from psap.storage.optimistic import optimistic_write
from psap.storage.ordering import SourceOrder, UpsertOutcome, UpsertResult
from psap.storage.partitions import registration, registry_item
from psap.storage.sequences import next_id, raise_floor

_RECORD_SK = "RECORD"
_NUMBER_SK = "NUMBER"


@dataclass(frozen=True)
class RecordKind:
    name: str  # "incident": used in messages
    prefix: str  # "INC": key prefix
    sequence: str  # "INCIDENT": id sequence


@dataclass(frozen=True)
class Link:
    """The other record a record points to (an incident's event, an event's incident)."""

    id: int | None
    number: str | None


@dataclass(frozen=True)
class StoredRecord:
    id: int
    number: str
    document: dict[str, Any]
    created_at: str
    updated_at: str
    source_order: str | None
    link: Link | None


def record_key(kind: RecordKind, tenant_id: int, record_id: int) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"T#{tenant_id}#{kind.prefix}#{record_id}"}, "sk": {"S": _RECORD_SK}}


def number_key(kind: RecordKind, tenant_id: int, number: str) -> dict[str, dict[str, str]]:
    # Quoted: a number holding '#' cannot reach into another key.
    pk = f"T#{tenant_id}#{kind.prefix}NUM#{quote(number, safe='')}"
    return {"pk": {"S": pk}, "sk": {"S": _NUMBER_SK}}


def stored_record(item: dict[str, Any]) -> StoredRecord:
    """A RECORD item read by a store that Queries the record's partition (events read their
    media links with the record in one Query)."""
    return _stored(item)


def _stored(item: dict[str, Any]) -> StoredRecord:
    linked_id = item.get("linkedId")
    linked_number = item.get("linkedNumber")
    has_link = linked_id is not None or linked_number is not None
    return StoredRecord(
        id=int(item["id"]),
        number=str(item["number"]),
        document=decode_document(bytes(item["doc"])),
        created_at=str(item["createdAt"]),
        updated_at=str(item["updatedAt"]),
        source_order=item.get("sourceOrder"),
        link=Link(linked_id, linked_number) if has_link else None,
    )


@dataclass(frozen=True)
class NewRecord:
    id: int
    number: str
    document: dict[str, Any]
    created_at: datetime | None
    link: Link | None


def _record_item(
    kind: RecordKind,
    tenant_id: int,
    record: NewRecord,
    *,
    now: str,
    created_otherwise: str | None = None,
    source_order: str | None = None,
) -> dict[str, Any]:
    """The RECORD item; createdAt is the record's, else `created_otherwise`, else `now`."""
    if record.created_at is not None:
        created_at = format_timestamp(record.created_at)
    else:
        created_at = created_otherwise or now
    link = record.link
    item: dict[str, Any] = {
        **record_key(kind, tenant_id, record.id),
        "id": {"N": str(record.id)},
        "tenantId": {"N": str(tenant_id)},
        "number": {"S": record.number},
        "doc": {"B": encode_document(record.document)},
        "createdAt": {"S": created_at},
        "updatedAt": {"S": now},
    }
    if source_order is not None:
        item["sourceOrder"] = {"S": source_order}
    if link is not None and link.id is not None:
        item["linkedId"] = {"N": str(link.id)}
    if link is not None and link.number is not None:
        item["linkedNumber"] = {"S": link.number}
    return item


def registry_kind(kind: RecordKind) -> str:
    """The kind a record's partition is registered as (the offboarding archive's file)."""
    return f"{kind.name}s"


def _number_item(
    kind: RecordKind, tenant_id: int, number: str, *, record_id: int
) -> dict[str, Any]:
    return {**number_key(kind, tenant_id, number), "recordId": {"N": str(record_id)}}


class NumberedRecords:
    """The records of one kind in one table: every operation below, bound once, so no
    caller passes the table and the kind again."""

    def __init__(self, table: str, kind: RecordKind) -> None:
        self._table = table
        self._kind = kind

    @property
    def kind(self) -> RecordKind:
        return self._kind

    def record_key(self, tenant_id: int, record_id: int) -> dict[str, dict[str, str]]:
        return record_key(self._kind, tenant_id, record_id)

    def reserve_ids(self, count: int) -> list[int]:
        """`count` new consecutive ids in one sequence write (an unused one is only a gap)."""
        if count <= 0:
            return []
        last = next_id(self._table, self._kind.sequence, count)
        return list(range(last - count + 1, last + 1))

    def raise_floor(self, at_least: int) -> None:
        """After an import batch: later blocks of ids start above its highest id."""
        raise_floor(self._table, self._kind.sequence, at_least)

    def find_id(self, tenant_id: int, number: str) -> int | None:
        item = read_item(
            self._table, number_key(self._kind, tenant_id, number), f"{self._kind.name} number"
        )
        return int(item["recordId"]) if item else None

    def read(self, tenant_id: int, record_id: int) -> StoredRecord | None:
        item = read_item(self._table, record_key(self._kind, tenant_id, record_id), self._kind.name)
        return _stored(item) if item else None

    def _creation(self, tenant_id: int, number: str, item: dict[str, Any]) -> list[dict[str, Any]]:
        """A new record and its number index, each only if absent: one transaction."""
        record_id = int(item["id"]["N"])
        # Ids come from a sequence all tenants share: the registry is the tenant's own list.
        registered = registration(
            self._table, tenant_id, item["pk"]["S"], kind=registry_kind(self._kind)
        )
        return [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": _number_item(self._kind, tenant_id, number, record_id=record_id),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            {
                "Put": {
                    "TableName": self._table,
                    "Item": item,
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            registered,
        ]

    def upsert_by_number(
        self,
        tenant_id: int,
        number: str,
        document: dict[str, Any],
        *,
        created_at: datetime | None,
        order: SourceOrder | None,
        now: datetime,
    ) -> UpsertResult:
        """Creates the record for `number` or updates the one that holds it (never a second
        record for one number). With `order`, the update is written only if it is newer than
        the stored order; a record without a stored order (imported) takes any update."""
        stamp = format_timestamp(now)
        order_key = order.key() if order is not None else None

        def attempt() -> UpsertResult:
            existing = self.find_id(tenant_id, number)
            if existing is None:
                record_id = next_id(self._table, self._kind.sequence)
                new = NewRecord(record_id, number, document, created_at, None)
                item = _record_item(self._kind, tenant_id, new, now=stamp, source_order=order_key)
                # Cancelled when another writer created this number first (updated next round),
                # or an imported record holds this id (the next round draws a new one).
                transact_write(self._creation(tenant_id, number, item))
                return UpsertResult(record_id, UpsertOutcome.CREATED)
            update = NewRecord(existing, number, document, created_at, None)
            return UpsertResult(
                existing, self._update_document(tenant_id, update, order_key, stamp=stamp)
            )

        return optimistic_write(f"{self._kind.name} {number}", attempt)

    def _update_document(
        self,
        tenant_id: int,
        update: NewRecord,
        order_key: str | None,
        *,
        stamp: str,
    ) -> UpsertOutcome:
        """UPDATED or STALE; ConditionFailed when the record vanished under the number (read
        again). The update's link is not written (links change through link_write)."""
        names = {"#doc": "doc", "#num": "number"}
        values: dict[str, Any] = {
            ":doc": {"B": encode_document(update.document)},
            ":num": {"S": update.number},
            ":now": {"S": stamp},
        }
        assignments = ["#doc = :doc", "#num = :num", "updatedAt = :now"]
        if update.created_at is not None:
            values[":created"] = {"S": format_timestamp(update.created_at)}
            assignments.append("createdAt = :created")
        condition = "attribute_exists(pk)"
        if order_key is not None:
            values[":order"] = {"S": order_key}
            assignments.append("sourceOrder = :order")
            condition += " AND (attribute_not_exists(sourceOrder) OR sourceOrder < :order)"
        try:
            with translated(f"{self._kind.name} update"):
                dynamodb().update_item(
                    TableName=self._table,
                    Key=record_key(self._kind, tenant_id, update.id),
                    UpdateExpression="SET " + ", ".join(assignments),
                    ConditionExpression=condition,
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues=values,
                )
        except ConditionFailed:
            if self.read(tenant_id, update.id) is None:
                raise
            return UpsertOutcome.STALE
        return UpsertOutcome.UPDATED

    def read_by_numbers(self, tenant_id: int, numbers: Sequence[str]) -> dict[str, StoredRecord]:
        """The records holding these numbers (absent numbers are left out): two strongly
        consistent BatchGetItem, the number index and then the records."""
        if not numbers:
            return {}
        index = batch_get(
            self._table,
            [number_key(self._kind, tenant_id, number) for number in numbers],
            consistent=True,
        )
        ids = {int(item["recordId"]) for item in index}
        if not ids:
            return {}
        records = [
            _stored(item)
            for item in batch_get(
                self._table,
                [record_key(self._kind, tenant_id, record_id) for record_id in ids],
                consistent=True,
            )
        ]
        wanted = set(numbers)
        return {record.number: record for record in records if record.number in wanted}

    def create_with_number(self, tenant_id: int, record: NewRecord, now: datetime) -> bool:
        """Creates a record under an id reserved by the caller, without a source order. False
        when the number (or the id) was taken meanwhile: nothing is written then."""
        item = _record_item(self._kind, tenant_id, record, now=format_timestamp(now))
        try:
            transact_write(self._creation(tenant_id, record.number, item))
        except TransactionCancelled:
            return False
        return True

    def replace_document_if_unchanged(
        self,
        tenant_id: int,
        record: StoredRecord,
        document: dict[str, Any],
        *,
        now: datetime,
    ) -> bool:
        """Replaces the record's document, keeping its id, number, link, createdAt and source
        order, only if nobody wrote it since `record` was read (its updatedAt). False otherwise:
        read again and decide again, so a concurrent connector update is never lost."""
        try:
            with translated(f"{self._kind.name} update"):
                dynamodb().update_item(
                    TableName=self._table,
                    Key=record_key(self._kind, tenant_id, record.id),
                    UpdateExpression="SET #doc = :doc, updatedAt = :now",
                    ConditionExpression="attribute_exists(pk) AND updatedAt = :seen",
                    ExpressionAttributeNames={"#doc": "doc"},
                    ExpressionAttributeValues={
                        ":doc": {"B": encode_document(document)},
                        ":now": {"S": format_timestamp(now)},
                        ":seen": {"S": record.updated_at},
                    },
                )
        except ConditionFailed:
            return False
        return True

    def put_by_id(self, tenant_id: int, record: NewRecord, now: datetime) -> UpsertOutcome:
        """Writes the record under an id the caller chose (imports keep the platform's ids).
        The sequence is not moved past it here: the import does that once per batch
        (raise_floor), since the sequence item is shared by every tenant.

        Writing the same record again updates it. The number must not belong to another record
        of the tenant (Conflict). A record given without a link keeps its stored link; the
        stored source order is kept, so the connector's ordering guard keeps working."""
        stamp = format_timestamp(now)
        record_id, number = record.id, record.number

        def attempt() -> UpsertOutcome:
            old = self.read(tenant_id, record_id)
            kept_link = record.link if record.link is not None else (old.link if old else None)
            item = _record_item(
                self._kind,
                tenant_id,
                replace(record, link=kept_link),
                now=stamp,
                created_otherwise=old.created_at if old else None,
                source_order=old.source_order if old else None,
            )
            writes: list[dict[str, Any]] = []
            record_write: dict[str, Any] = {"TableName": self._table, "Item": item}
            if old is None:
                record_write["ConditionExpression"] = "attribute_not_exists(pk)"
            else:
                # Unchanged since read: a concurrent connector update is never silently lost.
                record_write["ConditionExpression"] = "updatedAt = :seen"
                record_write["ExpressionAttributeValues"] = {":seen": {"S": old.updated_at}}
            writes.append({"Put": record_write})
            if old is None or old.number != number:
                writes.append(
                    {
                        "Put": {
                            "TableName": self._table,
                            "Item": _number_item(
                                self._kind, tenant_id, number, record_id=record_id
                            ),
                            "ConditionExpression": "attribute_not_exists(pk) OR recordId = :id",
                            "ExpressionAttributeValues": {":id": {"N": str(record_id)}},
                        }
                    }
                )
            if old is not None and old.number != number:
                writes.append(
                    {
                        "Delete": {
                            "TableName": self._table,
                            "Key": number_key(self._kind, tenant_id, old.number),
                            "ConditionExpression": "attribute_not_exists(pk) OR recordId = :id",
                            "ExpressionAttributeValues": {":id": {"N": str(record_id)}},
                        }
                    }
                )
            if old is None:
                # Last: the cancellation codes above are read by position.
                pk = item["pk"]["S"]
                writes.append(
                    registration(self._table, tenant_id, pk, kind=registry_kind(self._kind))
                )
            try:
                transact_write(writes)
            except TransactionCancelled as cancelled:
                if cancelled.item_failed(1):
                    holder = self.find_id(tenant_id, number)
                    name = self._kind.name
                    raise Conflict(
                        f"{name} number '{number}' already belongs to {name} {holder}"
                    ) from cancelled
                raise
            return UpsertOutcome.CREATED if old is None else UpsertOutcome.UPDATED

        return optimistic_write(f"{self._kind.name} {record_id}", attempt)

    def link_write(
        self,
        tenant_id: int,
        record: StoredRecord,
        link: Link | None,
    ) -> dict[str, Any]:
        """A transaction item that sets (or removes, link=None) a record's link, valid only if
        the link is still what was read."""
        values: dict[str, Any] = {}
        if record.link is not None and record.link.id is not None:
            condition = "linkedId = :seen"
            values[":seen"] = {"N": str(record.link.id)}
        else:
            condition = "attribute_not_exists(linkedId)"
        condition = f"attribute_exists(pk) AND {condition}"
        if link is None or link.id is None:
            expression = "REMOVE linkedId, linkedNumber"
        elif link.number is None:
            values[":lid"] = {"N": str(link.id)}
            expression = "SET linkedId = :lid REMOVE linkedNumber"
        else:
            values[":lid"] = {"N": str(link.id)}
            values[":lnum"] = {"S": link.number}
            expression = "SET linkedId = :lid, linkedNumber = :lnum"
        update: dict[str, Any] = {
            "TableName": self._table,
            "Key": record_key(self._kind, tenant_id, record.id),
            "UpdateExpression": expression,
            "ConditionExpression": condition,
        }
        if values:
            update["ExpressionAttributeValues"] = values
        return {"Update": update}

    def bulk_load(self, tenant_id: int, records: list[NewRecord], now: datetime) -> None:
        """Loads NEW records fast (BatchWriteItem): the same items as put_by_id, for operator
        loads into an empty tenant (demo data, benchmarks). Numbers must be unique."""
        if not records:
            return
        if len({record.number for record in records}) != len(records):
            raise ValueError("bulk_load takes records with distinct numbers")
        stamp = format_timestamp(now)
        items: list[dict[str, Any]] = []
        for record in records:
            items.append(_record_item(self._kind, tenant_id, record, now=stamp))
            items.append(_number_item(self._kind, tenant_id, record.number, record_id=record.id))
            pk = record_key(self._kind, tenant_id, record.id)["pk"]["S"]
            items.append(registry_item(tenant_id, pk, registry_kind(self._kind)))
        batch_put(self._table, items)
        raise_floor(self._table, self._kind.sequence, max(record.id for record in records))
