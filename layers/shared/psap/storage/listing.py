"""Listings kept as keys-only pointer items plus counters, shared by the users, evaluations
and knowledge lists.

A pointer is an item with only `pk` and `sk`; its `sk` sorts the listing and ends with the
listed record's id, zero-padded to 19 digits. A page is one Query of `size` pointers (after
a keys-only walk over earlier pages) and one BatchGetItem of the records; totals come from
counter items that change in the same transaction as the pointers.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from psap.paging import PageRequest
from psap.storage.attributes import from_item
from psap.storage.dynamodb import batch_get, batch_put, read_item
from psap.storage.queries import query_page, query_pages

ID_WIDTH = 19
_SKIP_BATCH = 1000  # keys per Query while walking earlier pages
COUNT = "count"

type Key = dict[str, dict[str, str]]


def key(pk: str, sk: str) -> Key:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


def padded(record_id: int) -> str:
    return f"{record_id:0{ID_WIDTH}d}"


def id_of(pointer_sk: str) -> int:
    return int(pointer_sk[-ID_WIDTH:])


@dataclass(frozen=True)
class KeyRange:
    """An inclusive range of sort keys (DynamoDB `sk BETWEEN :low AND :high`)."""

    low: str
    high: str


@dataclass(frozen=True, order=True)
class Counter:
    """One number in a counter item: the item's `count`, or another attribute of it (a
    month item also counts its days, `d01`..`d31`)."""

    pk: str
    sk: str
    attribute: str = COUNT


@dataclass
class WritePlan:
    """What one record's write changes: items to put, keys to delete, counter deltas.

    Turned into one transaction for a single record (`transaction_items`), or merged over
    many new records for a bulk load (`bulk_write`)."""

    puts: list[dict[str, Any]] = field(default_factory=list)
    deletes: list[Key] = field(default_factory=list)
    counters: dict[Counter, int] = field(default_factory=dict)

    def count(self, counter: Counter, delta: int) -> None:
        total = self.counters.get(counter, 0) + delta
        if total:
            self.counters[counter] = total
        else:
            self.counters.pop(counter, None)

    def _by_item(self) -> dict[tuple[str, str], dict[str, int]]:
        items: dict[tuple[str, str], dict[str, int]] = {}
        for counter, delta in sorted(self.counters.items()):
            items.setdefault((counter.pk, counter.sk), {})[counter.attribute] = delta
        return items

    def counter_writes(self, table: str) -> list[dict[str, Any]]:
        """One `ADD` update per counter item, for all of its attributes that change."""
        writes = []
        for (pk, sk), deltas in self._by_item().items():
            names = {f"#a{n}": attribute for n, attribute in enumerate(deltas)}
            values = {f":d{n}": {"N": str(delta)} for n, delta in enumerate(deltas.values())}
            writes.append(
                {
                    "Update": {
                        "TableName": table,
                        "Key": key(pk, sk),
                        "UpdateExpression": "ADD "
                        + ", ".join(f"#a{n} :d{n}" for n in range(len(deltas))),
                        "ExpressionAttributeNames": names,
                        "ExpressionAttributeValues": values,
                    }
                }
            )
        return writes

    def transaction_items(self, table: str) -> list[dict[str, Any]]:
        """Pointer puts and deletes and counter updates (the record's own conditional write
        is added by the store)."""
        items: list[dict[str, Any]] = [
            {"Put": {"TableName": table, "Item": item}} for item in self.puts
        ]
        items.extend({"Delete": {"TableName": table, "Key": gone}} for gone in self.deletes)
        items.extend(self.counter_writes(table))
        return items

    def merge(self, other: "WritePlan") -> None:
        self.puts.extend(other.puts)
        self.deletes.extend(other.deletes)
        for counter, delta in other.counters.items():
            self.count(counter, delta)


def pointer_changes(plan: WritePlan, old: Iterable[Key], new: Iterable[Key]) -> None:
    """Adds to `plan` the pointer writes that turn the `old` pointer set into `new`."""
    old_set = {(k["pk"]["S"], k["sk"]["S"]) for k in old}
    new_set = {(k["pk"]["S"], k["sk"]["S"]) for k in new}
    plan.deletes.extend(key(pk, sk) for pk, sk in sorted(old_set - new_set))
    plan.puts.extend(key(pk, sk) for pk, sk in sorted(new_set - old_set))


def counter_changes(plan: WritePlan, old: Iterable[Counter], new: Iterable[Counter]) -> None:
    for counter in old:
        plan.count(counter, -1)
    for counter in new:
        plan.count(counter, 1)


def bulk_write(table: str, plans: Sequence[WritePlan]) -> None:
    """Writes plans of NEW records with BatchWriteItem, counters included: each counter
    item is read once (BatchGetItem), added to and written back whole.

    For operator loads (demo data, benchmarks, large fixtures) while nothing else writes to
    the tenant, never for a request or an import of records that may exist: it is not
    atomic across records, and it deletes nothing."""
    merged = WritePlan()
    for plan in plans:
        if plan.deletes:
            raise ValueError("bulk_write takes plans of new records only")
        merged.merge(plan)
    changes = merged._by_item()
    current = {
        (str(item["pk"]), str(item["sk"])): item
        for item in batch_get(table, [key(pk, sk) for pk, sk in changes])
    }
    counters = []
    for (pk, sk), deltas in changes.items():
        values = {
            name: int(value)
            for name, value in current.get((pk, sk), {}).items()
            if name not in {"pk", "sk"}
        }
        for attribute, delta in deltas.items():
            values[attribute] = values.get(attribute, 0) + delta
        counters.append(
            {**key(pk, sk), **{name: {"N": str(value)} for name, value in values.items()}}
        )
    batch_put(table, [*merged.puts, *counters])


def read_counter(table: str, pk: str, sk: str) -> int:
    return counter_value(read_item(table, key(pk, sk), "counter"))


def counter_value(item: Mapping[str, Any] | None) -> int:
    """The count of an unmarshalled counter item (absent: 0)."""
    return max(0, int(item.get(COUNT, 0))) if item else 0


def counter_items(table: str, pk: str, ranges: Sequence[KeyRange]) -> list[dict[str, Any]]:
    """The counter items (unmarshalled, every attribute) whose sort keys fall in `ranges`,
    one Query per range."""
    return [
        from_item(raw)
        for key_range in ranges
        for page in query_pages(
            _request(table, pk, key_range, forward=True, limit=None), "listing query"
        )
        for raw in page
    ]


def _request(
    table: str, pk: str, key_range: KeyRange, *, forward: bool, limit: int | None
) -> dict[str, Any]:
    request: dict[str, Any] = {
        "TableName": table,
        "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
        "ExpressionAttributeValues": {
            ":pk": {"S": pk},
            ":low": {"S": key_range.low},
            ":high": {"S": key_range.high},
        },
        "ConsistentRead": True,
        "ScanIndexForward": forward,
    }
    if limit is not None:
        request["Limit"] = limit
    return request


def page_of_pointers(
    table: str, pk: str, key_range: KeyRange, *, forward: bool, page: PageRequest
) -> list[int]:
    """The ids on the page that starts `page.offset` pointers in. Earlier pointers are walked
    keys-only, up to 1 000 per Query (about 40 bytes each): deep pages cost small reads,
    never full records."""
    start: dict[str, Any] | None = None
    remaining = page.offset
    while remaining > 0:
        request = _request(table, pk, key_range, forward=forward, limit=min(remaining, _SKIP_BATCH))
        answer = query_page(request, "listing query", start)
        remaining -= len(answer.get("Items", []))
        start = answer.get("LastEvaluatedKey")
        if not start:
            return []
    answer = query_page(
        _request(table, pk, key_range, forward=forward, limit=page.size), "listing query", start
    )
    return [id_of(item["sk"]["S"]) for item in answer.get("Items", [])]
