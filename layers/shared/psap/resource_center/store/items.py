"""Catalog items: one item at a time (create, update by externalId, publish), as typed
records; the item's attribute names are spelled here only."""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from psap.clock import format_timestamp
from psap.errors import Conflict, NotFound
from psap.resource_center.models import CatalogItem, CatalogRecord
from psap.resource_center.store.keys import (
    CATALOG_PK,
    ITEM_PREFIX,
    external_id_key,
    item_key,
    table,
)
from psap.storage.attributes import from_item, to_item
from psap.storage.aws_errors import ConditionFailed, translated
from psap.storage.dynamodb import dynamodb, read_item, transact_write
from psap.storage.optimistic import Raced, optimistic_write
from psap.storage.queries import query_pages
from psap.storage.sequences import next_id


class Change(StrEnum):
    CREATED = "created"
    UPDATED = "updated"  # content changed: a new catalog version
    PUBLISHED = "published"  # only the published flag changed
    UNPUBLISHED = "unpublished"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class Upserted:
    item: CatalogItem
    change: Change


def item_attributes(item: CatalogItem, revision: int) -> dict[str, Any]:
    record = item.record
    return {
        "id": item.id,
        "externalId": record.external_id,
        "itemType": record.item_type.value,
        "title": record.title,
        "summary": record.summary,
        "body": record.body,
        "category": record.category,
        "thumbnailUrl": record.thumbnail_url,
        "url": record.url,
        "requiredLicenseName": record.required_license_name,
        "published": record.published,
        "version": item.version,
        "contentHash": item.content_hash,
        "revision": revision,  # every write: optimistic locking for concurrent importers
        "createdAt": item.created_at,
        "updatedAt": item.updated_at,
    }


def item_from_attributes(attributes: dict[str, Any]) -> tuple[CatalogItem, int]:
    record = CatalogRecord.model_validate(
        {
            "externalId": attributes["externalId"],
            "itemType": attributes["itemType"],
            "title": attributes["title"],
            "summary": attributes.get("summary", ""),
            "body": attributes.get("body", ""),
            "category": attributes["category"],
            "thumbnailUrl": attributes.get("thumbnailUrl"),
            "url": attributes["url"],
            "requiredLicenseName": attributes.get("requiredLicenseName"),
            "published": bool(attributes.get("published", False)),
        }
    )
    item = CatalogItem(
        id=int(attributes["id"]),
        version=int(attributes["version"]),
        content_hash=str(attributes["contentHash"]),
        record=record,
        created_at=str(attributes["createdAt"]),
        updated_at=str(attributes["updatedAt"]),
    )
    return item, int(attributes.get("revision", 0))


def _read_item(item_id: int) -> tuple[CatalogItem, int] | None:
    found = read_item(table(), item_key(item_id), "resource center item read")
    return item_from_attributes(found) if found else None


def get_item(item_id: int) -> CatalogItem | None:
    found = _read_item(item_id)
    return found[0] if found else None


def find_item_id(external_id: str) -> int | None:
    guard = read_item(table(), external_id_key(external_id), "resource center externalId read")
    return int(guard["itemId"]) if guard else None


def _create(record: CatalogRecord, stamp: str) -> CatalogItem:
    """Creates the item; TransactionCancelled when a concurrent importer took the
    externalId first."""
    item = CatalogItem(
        id=next_id(table(), "RC_ITEM"),
        version=1,
        content_hash=record.content_hash(),
        record=record,
        created_at=stamp,
        updated_at=stamp,
    )
    transact_write(new_item_writes(item))
    return item


def _replace(item: CatalogItem, revision: int) -> None:
    """Writes `item` if nobody else wrote since `revision` was read; ConditionFailed if
    someone did."""
    with translated("resource center item write"):
        dynamodb().put_item(
            TableName=table(),
            Item={**item_key(item.id), **to_item(item_attributes(item, revision + 1))},
            ConditionExpression="attribute_exists(pk) AND revision = :seen",
            ExpressionAttributeValues={":seen": {"N": str(revision)}},
        )


def upsert_record(record: CatalogRecord, now: datetime) -> Upserted:
    """Creates or updates the item of `record.external_id` (idempotent: the same record twice
    changes nothing). A content change bumps the item's version; the published flag alone
    does not."""
    stamp = format_timestamp(now)

    def attempt() -> Upserted:
        item_id = find_item_id(record.external_id)
        if item_id is None:
            return Upserted(_create(record, stamp), Change.CREATED)
        found = _read_item(item_id)
        if found is None:  # the guard exists but its item not yet: a create in flight
            raise ConditionFailed(f"resource center item {item_id}: not yet written")
        existing, revision = found
        content_hash = record.content_hash()
        content_changed = content_hash != existing.content_hash
        if not content_changed and record.published == existing.published:
            return Upserted(existing, Change.UNCHANGED)
        updated = existing.model_copy(
            update={
                "record": record,
                "content_hash": content_hash,
                "version": existing.version + (1 if content_changed else 0),
                "updated_at": stamp,
            }
        )
        _replace(updated, revision)
        if content_changed:
            return Upserted(updated, Change.UPDATED)
        return Upserted(updated, Change.PUBLISHED if record.published else Change.UNPUBLISHED)

    try:
        return optimistic_write(f"externalId '{record.external_id}'", attempt)
    except Raced as raced:
        raise Conflict(
            f"externalId '{record.external_id}' is being changed concurrently; retry"
        ) from raced


def new_item_writes(item: CatalogItem) -> list[dict[str, Any]]:
    return [
        {
            "Put": {
                "TableName": table(),
                "Item": {**item_key(item.id), **to_item(item_attributes(item, 1))},
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        },
        {
            "Put": {
                "TableName": table(),
                "Item": {**external_id_key(item.record.external_id), "itemId": {"N": str(item.id)}},
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        },
    ]


def set_published(item_id: int, published: bool, now: datetime) -> Upserted:

    def attempt() -> Upserted:
        found = _read_item(item_id)
        if found is None:
            raise NotFound(f"Catalog item {item_id} does not exist")
        existing, revision = found
        if existing.published == published:
            return Upserted(existing, Change.UNCHANGED)
        updated = existing.model_copy(
            update={
                "record": existing.record.model_copy(update={"published": published}),
                "updated_at": format_timestamp(now),
            }
        )
        _replace(updated, revision)
        return Upserted(updated, Change.PUBLISHED if published else Change.UNPUBLISHED)

    try:
        return optimistic_write(f"Catalog item {item_id}", attempt)
    except Raced as raced:
        raise Conflict(f"Catalog item {item_id} is being changed concurrently; retry") from raced


def catalog_items() -> Iterator[CatalogItem]:
    """Every catalog item, by id (the indexer's read; never on a request path)."""
    request: dict[str, Any] = {
        "TableName": table(),
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :item)",
        "ExpressionAttributeValues": {":pk": {"S": CATALOG_PK}, ":item": {"S": ITEM_PREFIX}},
        "ConsistentRead": True,
    }
    for page in query_pages(request, "resource center catalog read"):
        for raw in page:
            yield item_from_attributes(from_item(raw))[0]
