"""Entries: create, read, delete, bulk load, externalId resolution."""

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from psap.clock import format_timestamp
from psap.errors import Conflict
from psap.knowledge.kinds import KnowledgeSource, KnowledgeType
from psap.knowledge.records import KnowledgeEntry, LinkedEntry, VersionRecord
from psap.knowledge.store.keys import _table, entry_key, entry_pk, external_id_key
from psap.knowledge.store.listing import _listing_plan, listing_writes
from psap.knowledge.store.records import EntryDescription, NewEntry, entry_of, version_attributes
from psap.knowledge.store.sequences import next_knowledge_id
from psap.knowledge.store.versions import card_pending_write, version_put
from psap.storage import listing
from psap.storage.attributes import marshal, to_item
from psap.storage.aws_errors import ConditionFailed
from psap.storage.dynamodb import batch_get, read_item, transact_write
from psap.storage.listing import WritePlan
from psap.storage.partitions import PartitionKind, registration, registry_item


def find_by_external_id(tenant_id: int, provider: str, external_id: str) -> int | None:
    item = read_item(
        _table(), external_id_key(tenant_id, provider, external_id), "externalId guard"
    )
    return int(item["knowledgeId"]) if item else None


def entry_description(entry: KnowledgeEntry | NewEntry) -> EntryDescription:
    return {
        "name": entry.name,
        "description": entry.description,
        "source": entry.source.value,
        "provider": entry.provider,
        "knowledgeType": entry.knowledge_type.value,
        "externalId": entry.external_id,
    }


def _new_entry_attributes(
    tenant_id: int, knowledge_id: int, entry: NewEntry, *, now: datetime
) -> dict[str, Any]:
    stamp = format_timestamp(now)
    return {
        "id": knowledge_id,
        "tenantId": tenant_id,
        **entry_description(entry),
        "createdAt": stamp,
        "updatedAt": stamp,
        "latestVersion": 0,
        "deleted": False,
    }


def create_entry(tenant_id: int, entry: NewEntry, now: datetime) -> KnowledgeEntry:
    """Creates an entry without a version (an operator's load: the first append gives it
    version 1) with its listing pointers and counters, in one transaction. A second entry
    with the same (provider, externalId) is a Conflict."""
    return _create(tenant_id, next_knowledge_id(), entry, now=now)


def _create(
    tenant_id: int,
    knowledge_id: int,
    entry: NewEntry,
    *,
    now: datetime,
    extra_writes: Sequence[dict[str, Any]] = (),
    extra_attributes: Mapping[str, Any] | None = None,
) -> KnowledgeEntry:
    """create_entry, with `extra_writes` in the same transaction (a first version) and
    `extra_attributes` in the entry item."""
    attributes = _new_entry_attributes(tenant_id, knowledge_id, entry, now=now) | dict(
        extra_attributes or {}
    )
    writes: list[dict[str, Any]] = [
        {
            "Put": {
                "TableName": _table(),
                "Item": {**entry_key(tenant_id, knowledge_id), **to_item(attributes)},
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        }
    ]
    # Knowledge ids come from a sequence all tenants share: the registry lists the tenant's.
    pk = entry_pk(tenant_id, knowledge_id)
    writes.append(registration(_table(), tenant_id, pk, kind=PartitionKind.KNOWLEDGE))
    if entry.external_id is not None:
        writes.append(
            {
                "Put": {
                    "TableName": _table(),
                    "Item": {
                        **external_id_key(tenant_id, entry.provider, entry.external_id),
                        "knowledgeId": marshal(knowledge_id),
                    },
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            }
        )
    if entry.source is KnowledgeSource.API_IMPORT:
        writes.extend(
            listing_writes(
                tenant_id,
                knowledge_id,
                entry.provider,
                knowledge_type=entry.knowledge_type,
                listed=True,
            )
        )
    writes.extend(extra_writes)

    def duplicate(codes: list[str]) -> Exception:
        existing = (
            find_by_external_id(tenant_id, entry.provider, entry.external_id)
            if entry.external_id is not None
            else None
        )
        return Conflict(
            f"externalId '{entry.external_id}' of provider '{entry.provider}' already exists "
            f"as knowledge id {existing}"
        )

    transact_write(writes, on_cancel=duplicate)
    return entry_of(attributes)


def create_with_version(
    tenant_id: int,
    knowledge_id: int,
    entry: NewEntry,
    *,
    first: VersionRecord,
    api_control: Mapping[str, Any],
    publish: bool,
) -> KnowledgeEntry:
    """Creates an entry with its version 1 and a pending card, in one transaction."""
    changes: dict[str, Any] = {
        "latestVersion": first.version,
        "latestVersionId": first.version_id,
        "apiControl": dict(api_control),
        "serviceEditSeq": 0,
    }
    if publish:
        changes["publishedVersion"] = first.version
    return _create(
        tenant_id,
        knowledge_id,
        entry,
        now=first.created_at,
        extra_writes=[
            version_put(tenant_id, knowledge_id, version_attributes(first)),
            card_pending_write(tenant_id, knowledge_id),
        ],
        extra_attributes=changes,
    )


def read_entry(tenant_id: int, knowledge_id: int) -> KnowledgeEntry | None:
    item = read_item(_table(), entry_key(tenant_id, knowledge_id), "knowledge entry")
    return entry_of(item) if item else None


def delete_entry(tenant_id: int, knowledge_id: int, now: datetime) -> bool:
    """Soft delete: the entry stays (links to it still read as stored) but leaves the
    listing and its counters, and gives up its externalId (a new entry may take it and new
    links then resolve to that one), in one transaction. Returns False when there is nothing
    to delete (unknown id, other tenant's id, or already deleted)."""
    entry = read_entry(tenant_id, knowledge_id)
    if entry is None or entry.deleted:
        return False
    writes: list[dict[str, Any]] = [
        {
            "Update": {
                "TableName": _table(),
                "Key": entry_key(tenant_id, knowledge_id),
                "UpdateExpression": "SET deleted = :yes, updatedAt = :now",
                "ConditionExpression": "attribute_exists(pk) AND deleted = :no",
                "ExpressionAttributeValues": {
                    ":yes": {"BOOL": True},
                    ":no": {"BOOL": False},
                    ":now": {"S": format_timestamp(now)},
                },
            }
        }
    ]
    if entry.source is KnowledgeSource.API_IMPORT:
        writes.extend(
            listing_writes(
                tenant_id,
                knowledge_id,
                entry.provider,
                knowledge_type=entry.knowledge_type,
                listed=False,
            )
        )
    if entry.external_id:
        writes.append(
            {
                "Delete": {
                    "TableName": _table(),
                    "Key": external_id_key(tenant_id, entry.provider, entry.external_id),
                    "ConditionExpression": "knowledgeId = :id",
                    "ExpressionAttributeValues": {":id": marshal(knowledge_id)},
                }
            }
        )
    # A concurrent delete makes the condition fail: the entry is deleted either way.
    try:
        transact_write(writes)
    except ConditionFailed:
        return False
    return True


def bulk_load_entries(tenant_id: int, entries: Sequence[NewEntry], now: datetime) -> list[int]:
    """Loads many entries without externalIds quickly: the same items as create_entry, written
    with BatchWriteItem, each counter read once and written back added to (listing.bulk_write).

    For operator loads into a tenant (demo data, benchmarks, large fixtures) while nothing
    else writes to it, never for a request: it is not atomic across entries. Entries with an
    externalId must go through create_entry, which guards uniqueness."""
    if any(entry.external_id is not None for entry in entries):
        raise ValueError("bulk_load_entries takes entries without externalId")
    if not entries:
        return []
    last = next_knowledge_id(len(entries))
    first = last - len(entries) + 1
    plans: list[WritePlan] = []
    for knowledge_id, entry in zip(range(first, last + 1), entries, strict=True):
        attributes = _new_entry_attributes(tenant_id, knowledge_id, entry, now=now)
        plan = (
            _listing_plan(
                tenant_id,
                knowledge_id,
                entry.provider,
                knowledge_type=entry.knowledge_type,
                listed=True,
            )
            if entry.source is KnowledgeSource.API_IMPORT
            else WritePlan()
        )
        plan.puts.insert(0, {**entry_key(tenant_id, knowledge_id), **to_item(attributes)})
        pk = entry_pk(tenant_id, knowledge_id)
        plan.puts.insert(1, registry_item(tenant_id, pk, PartitionKind.KNOWLEDGE))
        plans.append(plan)
    listing.bulk_write(_table(), plans)
    return list(range(first, last + 1))


def resolve_external_ids(
    tenant_id: int, provider: str, external_ids: Sequence[str]
) -> dict[str, LinkedEntry]:
    """externalId -> the entry that holds it under `provider` in the tenant (not deleted):
    one BatchGetItem of the externalId guards, one of the entries they name."""
    wanted = list(dict.fromkeys(external_ids))
    if not wanted:
        return {}
    guards = batch_get(
        _table(), [external_id_key(tenant_id, provider, external_id) for external_id in wanted]
    )
    by_pk = {str(guard["pk"]): int(guard["knowledgeId"]) for guard in guards}
    ids = {
        external_id: by_pk[pk]
        for external_id in wanted
        if (pk := external_id_key(tenant_id, provider, external_id)["pk"]["S"]) in by_pk
    }
    if not ids:
        return {}
    items = batch_get(
        _table(),
        [entry_key(tenant_id, knowledge_id) for knowledge_id in set(ids.values())],
        projection="id, #n, provider, knowledgeType, deleted",
        names={"#n": "name"},
    )
    by_id = {
        int(item["id"]): LinkedEntry(
            id=int(item["id"]),
            name=str(item["name"]),
            provider=str(item["provider"]),
            knowledge_type=KnowledgeType(item["knowledgeType"]),
        )
        for item in items
        if not item.get("deleted")
    }
    return {
        external_id: by_id[knowledge_id]
        for external_id, knowledge_id in ids.items()
        if knowledge_id in by_id
    }
