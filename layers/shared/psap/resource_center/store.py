"""The resource-center table: the platform catalog, the index pointer and tenant state.

Layout (pk / sk):

  CATALOG                 / ITEM#{id:012d}     a catalog item (platform-wide: no tenant owns it)
  CATALOG#XID#{externalId} / XID               guards externalId uniqueness -> item id
  SEQ#RC_ITEM             / SEQ                catalog id sequence
  INDEX                   / CURRENT            the search index artifact in use (version, key)
  SEQ#RC_INDEX            / SEQ                index version sequence
  T#{t}#RC                / LICENSE#{name}     a license the tenant holds (when granted)
  T#{t}#RC                / LICENSES           every license name the tenant holds (a set)
  T#{t}#RC                / IMPORT#{id:012d}   a catalog item the tenant imported, at a version

The catalog is shared by every tenant, so its keys begin with CATALOG; everything that
belongs to a tenant begins with the tenant. The search request reads only tenant state here
(a GetItem of the tenant's LICENSES item, one BatchGetItem of the page's imports, and a GetItem
of the index pointer at most every INDEX_REFRESH_SECONDS): a constant number of reads however
large the table grows. Granting or revoking writes the LICENSE# item and the LICENSES set in
one transaction, so the set never disagrees with the grants. The catalog partition is read
whole only by the indexer, off the request path.
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any
from urllib.parse import quote

from psap.clock import format_timestamp
from psap.config import resource_center_table
from psap.errors import Conflict, NotFound
from psap.resource_center.models import CatalogItem, CatalogRecord
from psap.storage.attributes import from_item, to_item
from psap.storage.aws import ConditionFailed, TransactionCancelled, translated
from psap.storage.dynamodb import batch_get, batch_put, dynamodb, read_item, transact_write
from psap.storage.optimistic import Raced, optimistic_write
from psap.storage.queries import query_pages
from psap.storage.sequences import next_id


def _table() -> str:
    """This store's table, from the settings read at cold start (psap.config)."""
    return resource_center_table()


CATALOG_PK = "CATALOG"
_ITEM_PREFIX = "ITEM#"
_BATCH_RECORDS = 50  # two writes each: a transaction holds at most 100


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


@dataclass(frozen=True)
class IndexPointer:
    version: int
    key: str  # S3 key of the artifact
    documents: int
    built_at: str


def item_key(item_id: int) -> dict[str, dict[str, str]]:
    return {"pk": {"S": CATALOG_PK}, "sk": {"S": f"{_ITEM_PREFIX}{item_id:012d}"}}


def external_id_key(external_id: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"CATALOG#XID#{quote(external_id, safe='')}"}, "sk": {"S": "XID"}}


def tenant_pk(tenant_id: int) -> str:
    return f"T#{tenant_id}#RC"


# ------------------------------------------------------------------------------- catalog


def _item_attributes(item: CatalogItem, revision: int) -> dict[str, Any]:
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


def _item_from_attributes(attributes: dict[str, Any]) -> tuple[CatalogItem, int]:
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
    found = read_item(_table(), item_key(item_id), "resource center item read")
    return _item_from_attributes(found) if found else None


def get_item(item_id: int) -> CatalogItem | None:
    found = _read_item(item_id)
    return found[0] if found else None


def find_item_id(external_id: str) -> int | None:
    guard = read_item(_table(), external_id_key(external_id), "resource center externalId read")
    return int(guard["itemId"]) if guard else None


def _create(record: CatalogRecord, stamp: str) -> CatalogItem:
    """Creates the item; TransactionCancelled when a concurrent importer took the
    externalId first."""
    item = CatalogItem(
        id=next_id(_table(), "RC_ITEM"),
        version=1,
        content_hash=record.content_hash(),
        record=record,
        created_at=stamp,
        updated_at=stamp,
    )
    transact_write(_new_item_writes(item))
    return item


def _replace(item: CatalogItem, revision: int) -> None:
    """Writes `item` if nobody else wrote since `revision` was read; ConditionFailed if
    someone did."""
    with translated("resource center item write"):
        dynamodb().put_item(
            TableName=_table(),
            Item={**item_key(item.id), **to_item(_item_attributes(item, revision + 1))},
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


def _new_item_writes(item: CatalogItem) -> list[dict[str, Any]]:
    return [
        {
            "Put": {
                "TableName": _table(),
                "Item": {**item_key(item.id), **to_item(_item_attributes(item, 1))},
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        },
        {
            "Put": {
                "TableName": _table(),
                "Item": {**external_id_key(item.record.external_id), "itemId": {"N": str(item.id)}},
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        },
    ]


def upsert_records(records: Sequence[CatalogRecord], now: datetime) -> list[Upserted]:
    """`upsert_record` for a batch (at most 50, distinct externalIds): one BatchGetItem finds
    the existing ones, and the new ones are created in one transaction with ids reserved in
    one sequence step. If anything in that transaction was taken concurrently, or a record
    exists and differs, the record goes through `upsert_record` one by one."""
    if len(records) > _BATCH_RECORDS or len({r.external_id for r in records}) < len(records):
        return [upsert_record(record, now) for record in records]
    guards = batch_get(_table(), [external_id_key(record.external_id) for record in records])
    existing_ids = {
        str(guard["pk"]).removeprefix("CATALOG#XID#"): int(guard["itemId"]) for guard in guards
    }
    existing = {
        item.id: item
        for item in (
            _item_from_attributes(raw)[0]
            for raw in batch_get(_table(), [item_key(i) for i in existing_ids.values()])
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
        last = next_id(_table(), "RC_ITEM", len(new_positions))
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
        writes = [write for item in created.values() for write in _new_item_writes(item)]
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
            _table(), [external_id_key(x) for x in external_ids[first : first + 100]]
        )
    ]
    if taken:
        raise Conflict(f"{len(taken)} of these externalIds already exist; use the import")
    if not records:
        return []
    stamp = format_timestamp(now)
    last = next_id(_table(), "RC_ITEM", len(records))
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
        _table(),
        [
            entry
            for item in items
            for entry in (
                {**item_key(item.id), **to_item(_item_attributes(item, 1))},
                {**external_id_key(item.record.external_id), "itemId": {"N": str(item.id)}},
            )
        ],
    )
    return items


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
        "TableName": _table(),
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :item)",
        "ExpressionAttributeValues": {":pk": {"S": CATALOG_PK}, ":item": {"S": _ITEM_PREFIX}},
        "ConsistentRead": True,
    }
    for page in query_pages(request, "resource center catalog read"):
        for raw in page:
            yield _item_from_attributes(from_item(raw))[0]


# ------------------------------------------------------------------------------- index pointer

_POINTER_KEY = {"pk": {"S": "INDEX"}, "sk": {"S": "CURRENT"}}


def next_index_version() -> int:
    return next_id(_table(), "RC_INDEX")


def index_pointer() -> IndexPointer | None:
    item = read_item(_table(), _POINTER_KEY, "resource center index pointer read")
    if item is None:
        return None
    return IndexPointer(
        version=int(item["version"]),
        key=str(item["key"]),
        documents=int(item["documents"]),
        built_at=str(item["builtAt"]),
    )


def publish_index(pointer: IndexPointer) -> bool:
    """Points searches at a new artifact unless a newer one is already in use: the rebuild
    that started later saw every catalog write the earlier one saw, so it must win."""
    attributes = {
        "version": pointer.version,
        "key": pointer.key,
        "documents": pointer.documents,
        "builtAt": pointer.built_at,
    }
    try:
        with translated("resource center index pointer write"):
            dynamodb().put_item(
                TableName=_table(),
                Item={**_POINTER_KEY, **to_item(attributes)},
                ConditionExpression="attribute_not_exists(pk) OR version < :new",
                ExpressionAttributeValues={":new": {"N": str(pointer.version)}},
            )
    except ConditionFailed:
        return False
    return True


# ------------------------------------------------------------------------------- tenant state


def license_key(tenant_id: int, license_name: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": tenant_pk(tenant_id)}, "sk": {"S": f"LICENSE#{license_name}"}}


def import_key(tenant_id: int, item_id: int) -> dict[str, dict[str, str]]:
    return {"pk": {"S": tenant_pk(tenant_id)}, "sk": {"S": f"IMPORT#{item_id:012d}"}}


def licenses_key(tenant_id: int) -> dict[str, dict[str, str]]:
    return {"pk": {"S": tenant_pk(tenant_id)}, "sk": {"S": "LICENSES"}}


def grant_license(tenant_id: int, license_name: str, now: datetime) -> None:
    """Idempotent: granting a held license again only refreshes its grantedAt."""
    attributes = {"tenantId": tenant_id, "licenseName": license_name}
    transact_write(
        [
            {
                "Put": {
                    "TableName": _table(),
                    "Item": {
                        **license_key(tenant_id, license_name),
                        **to_item({**attributes, "grantedAt": format_timestamp(now)}),
                    },
                }
            },
            {
                "Update": {
                    "TableName": _table(),
                    "Key": licenses_key(tenant_id),
                    "UpdateExpression": "ADD licenseNames :name SET tenantId = :tenant",
                    "ExpressionAttributeValues": {
                        ":name": {"SS": [license_name]},
                        ":tenant": {"N": str(tenant_id)},
                    },
                }
            },
        ]
    )


def revoke_license(tenant_id: int, license_name: str) -> bool:
    """False when the tenant did not hold the license (then nothing is written)."""
    try:
        transact_write(
            [
                {
                    "Delete": {
                        "TableName": _table(),
                        "Key": license_key(tenant_id, license_name),
                        "ConditionExpression": "attribute_exists(pk)",
                    }
                },
                {
                    "Update": {
                        "TableName": _table(),
                        "Key": licenses_key(tenant_id),
                        # DynamoDB removes the attribute when its last name goes.
                        "UpdateExpression": "DELETE licenseNames :name",
                        "ExpressionAttributeValues": {":name": {"SS": [license_name]}},
                    }
                },
            ]
        )
    except TransactionCancelled:
        return False
    return True


def tenant_licenses(tenant_id: int) -> frozenset[str]:
    """The license names the tenant holds: one GetItem, whatever the table holds."""
    item = read_item(
        _table(),
        licenses_key(tenant_id),
        "resource center license read",
        consistent=False,
        projection="licenseNames",
    )
    return frozenset(str(name) for name in (item or {}).get("licenseNames", ()))


def record_import(tenant_id: int, item_id: int, version: int, *, now: datetime) -> None:
    attributes = {
        "tenantId": tenant_id,
        "itemId": item_id,
        "importedVersion": version,
        "importedAt": format_timestamp(now),
    }
    with translated("resource center import write"):
        dynamodb().put_item(
            TableName=_table(), Item={**import_key(tenant_id, item_id), **to_item(attributes)}
        )


def imported_versions(tenant_id: int, item_ids: Sequence[int]) -> dict[int, int]:
    """item id -> the catalog version the tenant imported, for the items it imported."""
    if not item_ids:
        return {}
    items = batch_get(
        _table(),
        [import_key(tenant_id, item_id) for item_id in dict.fromkeys(item_ids)],
        projection="itemId, importedVersion",
    )
    return {int(item["itemId"]): int(item["importedVersion"]) for item in items}
