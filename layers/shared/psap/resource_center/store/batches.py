"""Catalog items in batches: an import's page of records, and seeding an empty catalog."""

from collections.abc import Sequence
from datetime import datetime
from urllib.parse import quote

from psap.clock import format_timestamp
from psap.errors import Conflict
from psap.resource_center.models import CatalogItem, CatalogRecord
from psap.resource_center.store.items import (
    Change,
    Upserted,
    item_attributes,
    item_from_attributes,
    new_item_writes,
    upsert_record,
)
from psap.resource_center.store.keys import external_id_key, item_key, table
from psap.storage.attributes import to_item
from psap.storage.aws_errors import TransactionCancelled
from psap.storage.dynamodb import batch_get, batch_put, transact_write
from psap.storage.sequences import next_id

_BATCH_RECORDS = 50  # two writes each: a transaction holds at most 100


def upsert_records(records: Sequence[CatalogRecord], now: datetime) -> list[Upserted]:
    """`upsert_record` for a batch (at most 50, distinct externalIds): one BatchGetItem finds
    the existing ones, and the new ones are created in one transaction with ids reserved in
    one sequence step. If anything in that transaction was taken concurrently, or a record
    exists and differs, the record goes through `upsert_record` one by one."""
    if len(records) > _BATCH_RECORDS or len({r.external_id for r in records}) < len(records):
        return [upsert_record(record, now) for record in records]
    guards = batch_get(table(), [external_id_key(record.external_id) for record in records])
    existing_ids = {
        str(guard["pk"]).removeprefix("CATALOG#XID#"): int(guard["itemId"]) for guard in guards
    }
    existing = {
        item.id: item
        for item in (
            item_from_attributes(raw)[0]
            for raw in batch_get(table(), [item_key(i) for i in existing_ids.values()])
        )
    }
    stamp = format_timestamp(now)
    outcomes: dict[int, Upserted] = {}
    new_positions = [
        position
        for position, record in enumerate(records)
        if quote(record.external_id, safe="") not in existing_ids
    ]
    if new_positions:
        last = next_id(table(), "RC_ITEM", len(new_positions))
        created = {
            position: CatalogItem(
                id=last - len(new_positions) + 1 + offset,
                version=1,
                content_hash=records[position].content_hash(),
                record=records[position],
                created_at=stamp,
                updated_at=stamp,
            )
            for offset, position in enumerate(new_positions)
        }
        writes = [write for item in created.values() for write in new_item_writes(item)]
        try:
            transact_write(writes)
            outcomes |= {
                position: Upserted(item, Change.CREATED) for position, item in created.items()
            }
        except TransactionCancelled:
            pass  # someone else created one of them: sort it out record by record below
    for position, record in enumerate(records):
        if position in outcomes:
            continue
        item_id = existing_ids.get(quote(record.external_id, safe=""))
        current = existing.get(item_id) if item_id is not None else None
        if (
            current is not None
            and current.content_hash == record.content_hash()
            and current.published == record.published
        ):
            outcomes[position] = Upserted(current, Change.UNCHANGED)
        else:
            outcomes[position] = upsert_record(record, now)
    return [outcomes[position] for position in range(len(records))]


def bulk_create(records: Sequence[CatalogRecord], now: datetime) -> list[CatalogItem]:
    """Loads records into a catalog that holds none of their externalIds, with batch writes
    instead of one transaction per item: for seeding an empty catalog (the local demo,
    benchmarks). Stored exactly as `upsert_record` stores a new item (a test checks). Not
    safe against a concurrent importer of the same externalIds: the import path is."""
    external_ids = [record.external_id for record in records]
    if len(set(external_ids)) < len(external_ids):
        raise Conflict("bulk_create needs distinct externalIds")
    taken = [
        guard
        for first in range(0, len(records), 100)
        for guard in batch_get(
            table(), [external_id_key(x) for x in external_ids[first : first + 100]]
        )
    ]
    if taken:
        raise Conflict(f"{len(taken)} of these externalIds already exist; use the import")
    if not records:
        return []
    stamp = format_timestamp(now)
    last = next_id(table(), "RC_ITEM", len(records))
    items = [
        CatalogItem(
            id=last - len(records) + 1 + offset,
            version=1,
            content_hash=record.content_hash(),
            record=record,
            created_at=stamp,
            updated_at=stamp,
        )
        for offset, record in enumerate(records)
    ]
    batch_put(
        table(),
        [
            entry
            for item in items
            for entry in (
                {**item_key(item.id), **to_item(item_attributes(item, 1))},
                {**external_id_key(item.record.external_id), "itemId": {"N": str(item.id)}},
            )
        ],
    )
    return items
