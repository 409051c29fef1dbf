"""Audit records in the audit table: append-only hash chains, tenant-keyed, expiring.

Layout (every key begins with the tenant; docs/design.md, "Audit records"):

  T#{t}#DAY#{yyyy-mm-dd}#S#{shard}  / {seq:012d}   one record of the chain (tenant, day,
                                                    shard): its JSON, prev and hash links,
                                                    the filterable fields, `expiresAt` (TTL)
  T#{t}#REQ#{requestId}             / RECORD       which chain position holds the request's
                                                    record, and the record itself
  T#{t}#AUDITDAYS                   / {yyyy-mm-dd} a day that has records (written once per
                                                    warm writer and day, before its first
                                                    record): what a tenant's offboarding
                                                    reads instead of every day of retention

and the markers, digests and seals that sign the chains (psap.audit.sealing).

A record is appended by one transaction of two PutItems, each `attribute_not_exists`: the
next position of its chain, and its request id. Nothing is ever updated or deleted (the
writer's role has PutItem alone; template.yaml). A position taken by another writer is read
again and retried; a request id already stored is a replay when the record is the same
(nothing written) and a forgery when it differs (refused: the first record stays).
"""

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from enum import StrEnum
from typing import Any, Final

from psap.audit.chain import SHARDS, Link, chain_id, link_hash, shard_of
from psap.audit.recording import AuditRecord, audit_line
from psap.audit.seal_markers import head_of, mark_advanced
from psap.clock import format_timestamp, utc_now
from psap.config import audit_table
from psap.errors import StoreUnavailable
from psap.storage.aws_errors import TransactionCancelled, translated
from psap.storage.dynamodb import dynamodb, read_item, transact_write
from psap.storage.queries import query_pages

_PAGE: Final = 500  # records per Query page: an export holds one page in memory at a time
_REQUEST_SK: Final = "RECORD"
# Writers racing for a chain's next position: each loss costs one read and one retry.
_APPEND_ATTEMPTS: Final = 20


def _table() -> str:
    """This store's table, from the settings read at cold start (psap.config)."""
    return audit_table()


def chain_key(tenant_id: int, day: date, shard: int) -> str:
    return f"T#{tenant_id}#DAY#{day.isoformat()}#S#{shard:02d}"


def _request_key(record: AuditRecord) -> dict[str, dict[str, str]]:
    return {
        "pk": {"S": f"T#{record.tenant_id}#REQ#{record.request_id}"},
        "sk": {"S": _REQUEST_SK},
    }


class Appended(StrEnum):
    APPENDED = "APPENDED"
    REPLAYED = "REPLAYED"  # the same record was stored before: nothing written


class ForgedRecord(Exception):
    """Another record already holds this request id: the stored one stays, this one is
    refused (the writer fails it, so it ends in the dead-letter queue for an operator)."""


@dataclass(frozen=True)
class _Position:
    pk: str
    chain: str


def _position(record: AuditRecord) -> _Position:
    day, shard = record.time.date(), shard_of(record.request_id)
    return _Position(
        chain_key(record.tenant_id, day, shard), chain_id(record.tenant_id, day, shard)
    )


# The (tenant, day) markers this warm writer wrote: a marker costs one write per container
# and day, not per record. Bounded; forgetting only costs a write that finds it there.
_MARKED_MAX: Final = 10_000
_marked: set[tuple[int, date]] = set()


def _days_pk(tenant_id: int) -> str:
    return f"T#{tenant_id}#AUDITDAYS"


def _mark_day(tenant_id: int, day: date, expires: int) -> None:
    """Notes that the tenant has records on this day, before the day's first record is
    written (a marker without records is harmless; a record without one would be missed)."""
    if (tenant_id, day) in _marked:
        return
    item = {
        "pk": {"S": _days_pk(tenant_id)},
        "sk": {"S": day.isoformat()},
        "expiresAt": {"N": str(expires)},
    }
    with translated("audit day write failed"):
        try:
            dynamodb().put_item(TableName=_table(), Item=item, ConditionExpression=_NEW)
        except dynamodb().exceptions.ConditionalCheckFailedException:
            pass  # another writer marked it: append-only, nothing is overwritten
    if len(_marked) >= _MARKED_MAX:
        _marked.clear()
    _marked.add((tenant_id, day))


def forget_marked_days() -> None:
    """For tests: a fresh table needs its markers written again."""
    _marked.clear()


def days_with_records(tenant_id: int) -> list[date]:
    """The days the tenant has (or had, within retention) audit records, oldest first: one
    Query of at most a retention's worth of small items."""
    request = {
        "TableName": _table(),
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": _days_pk(tenant_id)}},
        "ProjectionExpression": "sk",
        "ConsistentRead": True,
    }
    return [
        date.fromisoformat(item["sk"]["S"])
        for items in query_pages(request, f"audit days of tenant {tenant_id}")
        for item in items
    ]


class RecordAppender:
    """Appends records; remembers each chain's head it wrote, so a batch reads a chain once."""

    def __init__(self, retention_days: int) -> None:
        self._retention = timedelta(days=retention_days)
        self._heads: dict[str, tuple[int, str]] = {}

    def append(self, record: AuditRecord) -> Appended:
        position = _position(record)
        day = record.time.date()
        _mark_day(record.tenant_id, day, _epoch(record.time + self._retention + timedelta(days=1)))
        # Before the append, as the day: the sealer then finds the chain (psap.audit.sealing).
        mark_advanced(position.pk, tenant_id=record.tenant_id, day=day, now=utc_now())
        text = audit_line(record)
        for _ in range(_APPEND_ATTEMPTS):
            seq, prev = self._heads.get(position.pk) or head_of(position.pk)
            hashed = link_hash(position.chain, seq + 1, prev, record=json.loads(text))
            link = Link(position.chain, seq + 1, prev, hashed)
            try:
                transact_write(self._items(record, text, position, link=link))
            except TransactionCancelled as cancelled:
                self._heads.pop(position.pk, None)
                if cancelled.item_failed(1):
                    return _replay_or_forgery(record, text)
                if cancelled.item_failed(0):
                    continue  # another writer took the position: read the head again
                raise
            self._heads[position.pk] = (link.seq, link.hash)
            return Appended.APPENDED
        raise StoreUnavailable(f"audit chain {position.chain} stayed contended")

    def _items(
        self, record: AuditRecord, text: str, position: _Position, *, link: Link
    ) -> list[dict[str, Any]]:
        expires = {"N": str(_epoch(record.time + self._retention))}
        chain_item = {
            "pk": {"S": position.pk},
            "sk": {"S": f"{link.seq:012d}"},
            "record": {"S": text},
            "prev": {"S": link.prev},
            "hash": {"S": link.hash},
            "time": {"S": format_timestamp(record.time)},
            "operation": {"S": record.operation},
            "credentialId": {"S": record.credential_id},
            "status": {"N": str(record.status)},
            "expiresAt": expires,
        }
        request_item = {
            **_request_key(record),
            "record": {"S": text},
            "chainKey": {"S": position.pk},
            "seq": {"N": str(link.seq)},
            "expiresAt": expires,
        }
        return [
            {"Put": {"TableName": _table(), "Item": item, "ConditionExpression": _NEW}}
            for item in (chain_item, request_item)
        ]


_NEW: Final = "attribute_not_exists(pk)"


def _epoch(moment: datetime) -> int:
    return int(moment.timestamp())


def append_records(records: Sequence[AuditRecord], retention_days: int) -> list[Appended]:
    appender = RecordAppender(retention_days)
    return [appender.append(record) for record in records]


def _replay_or_forgery(record: AuditRecord, text: str) -> Appended:
    stored = read_item(_table(), _request_key(record), f"audit request {record.request_id}")
    if stored is not None and str(stored["record"]) == text:
        return Appended.REPLAYED
    raise ForgedRecord(
        f"audit record of request {record.request_id} (tenant {record.tenant_id}) differs "
        "from the one stored: refused"
    )


@dataclass(frozen=True)
class RecordFilter:
    operation: str | None = None
    credential_id: str | None = None
    status: int | None = None

    def admits(self, record: dict[str, Any], start: datetime, end: datetime) -> bool:
        return (
            format_timestamp(start) <= str(record["time"]) < format_timestamp(end)
            and self.operation in (None, record.get("operation"))
            and self.credential_id in (None, record.get("credentialId"))
            and self.status in (None, record.get("status"))
        )


@dataclass(frozen=True)
class ChainEntry:
    link: Link
    record: dict[str, Any]


@dataclass(frozen=True)
class ChainPosition:
    """Where a reader of a range's chains stands: the chain (day, shard) and the last
    sequence number of it already read (0: none). An export's checkpoint keeps one."""

    day: date
    shard: int
    after_seq: int = 0


@dataclass(frozen=True)
class ChainPage:
    entries: list[ChainEntry]
    after: ChainPosition  # where the next page starts


def chains_between(tenant_id: int, start: datetime, end: datetime) -> Iterator[list[ChainEntry]]:
    """Every chain of the days from start to end, whole and in order, a page at a time; a
    chain's pages follow each other (an export ends each chain with its head)."""
    for page in chain_pages_from(tenant_id, ChainPosition(start.date(), 0), end.date()):
        yield page.entries


def chain_pages_from(
    tenant_id: int, position: ChainPosition, last_day: date
) -> Iterator[ChainPage]:
    """chains_between from `position` on: each chain of each day up to `last_day`, by day
    and shard, every page with the position after it."""
    day, shard, after_seq = position.day, position.shard, position.after_seq
    while day <= last_day:
        for chain_shard in range(shard, SHARDS):
            yield from _chain_pages(tenant_id, day, chain_shard, after_seq=after_seq)
            after_seq = 0
        shard = 0
        day += timedelta(days=1)


def _chain_pages(tenant_id: int, day: date, shard: int, *, after_seq: int) -> Iterator[ChainPage]:
    chain = chain_id(tenant_id, day, shard)
    request = {
        "TableName": _table(),
        "KeyConditionExpression": "pk = :pk AND sk > :after",
        "ExpressionAttributeValues": {
            ":pk": {"S": chain_key(tenant_id, day, shard)},
            ":after": {"S": f"{after_seq:012d}"},
        },
        "ExpressionAttributeNames": {"#record": "record", "#hash": "hash"},
        "ProjectionExpression": "#record, sk, prev, #hash",
        "Limit": _PAGE,
    }
    for items in query_pages(request, f"audit chain {chain}"):
        if items:
            entries = [
                ChainEntry(
                    Link(chain, int(item["sk"]["S"]), item["prev"]["S"], item["hash"]["S"]),
                    json.loads(item["record"]["S"]),
                )
                for item in items
            ]
            yield ChainPage(entries, ChainPosition(day, shard, entries[-1].link.seq))
