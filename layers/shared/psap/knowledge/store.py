"""Knowledge entries in the knowledge table, on the storage kit, as typed records.

Layout (every key begins with the tenant, except the global id sequences):

  T#{t}#K#{id}       / ENTRY        the entry: metadata, latest and published version
  T#{t}#K#{id}       / V#{n:010d}   an immutable version (see "versions, edits and cards")
  T#{t}#K#{id}       / EDIT#{s}     the service-side edit of a service-owned section
  T#{t}#K#{id}       / CARD         the knowledge card: digest status and section digests
  T#{t}#XID#{p}#{x}  / XID          guards externalId uniqueness per (tenant, provider)
  T#{t}#KL#{scope}   / #COUNT       how many listed entries the scope holds
  T#{t}#KL#{scope}   / {id:019d}    a listing pointer (keys only), sorted by id
  SEQ#KNOWLEDGE      / SEQ          the id sequence (ids are unique across tenants)
  SEQ#KNOWLEDGE_VERSION / SEQ       the versionId sequence

A listed entry (source API_IMPORT, not deleted) has one pointer in each of four scopes:
ALL, its provider, its type, and provider+type, so any combination of the two filters is one
Query. Pointers and counters (psap.storage.listing) change in the same transaction as the
entry, so totals are exact and a list read right after a write sees it (strongly consistent).

This module is the only one that spells the items' attribute names: it hands the logic
records (psap.knowledge.records) and takes them back.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict
from urllib.parse import quote

from psap.clock import format_timestamp, parse_timestamp
from psap.config import knowledge_table
from psap.errors import Conflict
from psap.knowledge.kinds import KnowledgeSource, KnowledgeType
from psap.knowledge.records import (
    CardRecord,
    EditRecord,
    EntryChanges,
    KnowledgeEntry,
    KnowledgeVersion,
    LinkedEntry,
    StoredDocument,
    VersionRecord,
)
from psap.paging import PageRequest
from psap.storage import documents, listing
from psap.storage.attributes import Item, from_item, marshal, to_item
from psap.storage.aws import ConditionFailed, translated
from psap.storage.documents import PackedDocument, pack_document, unpack_document
from psap.storage.dynamodb import batch_get, dynamodb, read_item, transact_write
from psap.storage.listing import KeyRange, WritePlan
from psap.storage.partitions import PartitionKind, registration, registry_item
from psap.storage.queries import query_page
from psap.storage.sequences import next_id

if TYPE_CHECKING:
    from psap.knowledge.models import ExternalKnowledgeDto


def _table() -> str:
    """This store's table, from the settings read at cold start (psap.config)."""
    return knowledge_table()


_COUNTER_SK = "#COUNT"  # sorts before every zero-padded id
_FIRST_POINTER_SK = "0"
_POINTERS = KeyRange(_FIRST_POINTER_SK, "9" * listing.ID_WIDTH)  # every pointer, not the counter
# An entry's describing fields under the names, and in the forms, they are stored in (the
# wire's): the light list answers them as they are. The wire names are camelCase, hence the
# functional form.
EntryDescription = TypedDict(  # noqa: UP013
    "EntryDescription",
    {
        "name": str,
        "description": str | None,
        "source": str,
        "provider": str,
        "knowledgeType": str,
        "externalId": str | None,
    },
)


# What a list reads of an entry: its summary (id, description, numbers) and whether it is
# deleted; DynamoDB's reserved words among them are read through placeholders.
_SUMMARY_NAMES = {"#n": "name", "#s": "source"}
_PLACEHOLDERS = {name: placeholder for placeholder, name in _SUMMARY_NAMES.items()}
_SUMMARY_ATTRIBUTES = (
    "id",
    *(_PLACEHOLDERS.get(name, name) for name in EntryDescription.__annotations__),
    "publishedVersion",
    "createdAt",
    "updatedAt",
    "deleted",
)
_ENTRY_SEQUENCE = "KNOWLEDGE"
_VERSION_SEQUENCE = "KNOWLEDGE_VERSION"


@dataclass(frozen=True)
class NewEntry:
    name: str
    provider: str
    knowledge_type: KnowledgeType
    description: str | None = None
    external_id: str | None = None
    source: KnowledgeSource = KnowledgeSource.API_IMPORT


class WriteRaced(ConditionFailed):
    """The entry changed between the read and the conditional write: read again, retry."""


# A stored document that does not decode; the card worker catches it by this store's name.
UnreadableDocument = documents.UnreadableDocument


# ------------------------------------------------------------------------------ keys


def entry_pk(tenant_id: int, knowledge_id: int) -> str:
    return f"T#{tenant_id}#K#{knowledge_id}"


def entry_key(tenant_id: int, knowledge_id: int) -> dict[str, dict[str, str]]:
    return listing.key(entry_pk(tenant_id, knowledge_id), "ENTRY")


def listing_scope(provider: str | None, knowledge_type: KnowledgeType | None) -> str:
    """The pointer partition that answers a filter combination (provider quoted: no '#')."""
    if provider is not None and knowledge_type is not None:
        return f"PK#{quote(provider, safe='')}#{knowledge_type.value}"
    if provider is not None:
        return f"P#{quote(provider, safe='')}"
    if knowledge_type is not None:
        return f"K#{knowledge_type.value}"
    return "ALL"


def entry_scopes(provider: str, knowledge_type: KnowledgeType) -> list[str]:
    return [
        listing_scope(None, None),
        listing_scope(provider, None),
        listing_scope(None, knowledge_type),
        listing_scope(provider, knowledge_type),
    ]


def listing_pk(tenant_id: int, scope: str) -> str:
    return f"T#{tenant_id}#KL#{scope}"


def external_id_key(tenant_id: int, provider: str, external_id: str) -> dict[str, dict[str, str]]:
    pk = f"T#{tenant_id}#XID#{quote(provider, safe='')}#{quote(external_id, safe='')}"
    return listing.key(pk, "XID")


# ------------------------------------------------------------------------- records


def _optional_version(value: Any) -> KnowledgeVersion | None:
    return None if value is None else KnowledgeVersion(int(value))


def entry_of(item: Mapping[str, Any]) -> KnowledgeEntry:
    """The record of an entry item (or of its summary projection)."""
    latest_id = item.get("latestVersionId")
    return KnowledgeEntry(
        id=int(item["id"]),
        name=str(item["name"]),
        source=KnowledgeSource(item["source"]),
        provider=str(item["provider"]),
        knowledge_type=KnowledgeType(item["knowledgeType"]),
        created_at=parse_timestamp(str(item["createdAt"])),
        updated_at=parse_timestamp(str(item["updatedAt"])),
        description=None if item.get("description") is None else str(item["description"]),
        external_id=None if item.get("externalId") is None else str(item["externalId"]),
        published_version=_optional_version(item.get("publishedVersion")),
        latest_version=KnowledgeVersion(int(item.get("latestVersion", 0))),
        latest_version_id=None if latest_id is None else int(latest_id),
        api_control=item.get("apiControl"),
        service_edit_seq=int(item.get("serviceEditSeq", 0)),
        deleted=bool(item.get("deleted", False)),
    )


def _document_of(item: Mapping[str, Any]) -> StoredDocument:
    packed = item.get("document")
    return StoredDocument(
        packed=None if packed is None else bytes(packed),
        object_key=None if packed is not None else str(item["documentKey"]),
        raw_bytes=int(item.get("rawBytes", 0)),
        stored_bytes=int(item.get("storedBytes", 0)),
    )


def _document_attributes(document: StoredDocument) -> dict[str, Any]:
    where = (
        {"documentKey": document.object_key} if document.in_s3 else {"document": document.packed}
    )
    return {**where, "rawBytes": document.raw_bytes, "storedBytes": document.stored_bytes}


def as_stored(moment: datetime) -> datetime:
    """A moment as an item holds it (milliseconds), so a record returned by a write reads
    exactly as the record read back later."""
    return parse_timestamp(format_timestamp(moment))


def new_version(
    version: KnowledgeVersion, version_id: int, now: datetime, author: str, stored: StoredDocument
) -> VersionRecord:
    return VersionRecord(
        version=version,
        version_id=version_id,
        created_at=as_stored(now),
        created_by=author,
        document=stored,
    )


def version_of(item: Mapping[str, Any]) -> VersionRecord:
    return VersionRecord(
        version=KnowledgeVersion(int(item["version"])),
        version_id=int(item["versionId"]),
        created_at=parse_timestamp(str(item["createdAt"])),
        created_by=str(item["createdBy"]),
        document=_document_of(item),
    )


def version_attributes(version: VersionRecord) -> dict[str, Any]:
    return {
        "version": version.version,
        "versionId": version.version_id,
        "createdAt": format_timestamp(version.created_at),
        "createdBy": version.created_by,
        **_document_attributes(version.document),
    }


def edit_of(item: Mapping[str, Any]) -> EditRecord:
    return EditRecord(
        section=str(item["section"]),
        edited_at=parse_timestamp(str(item["editedAt"])),
        edited_by=str(item["editedBy"]),
        note=None if item.get("note") is None else str(item["note"]),
        based_on_version=KnowledgeVersion(int(item.get("basedOnVersion", 0))),
        edit_seq=int(item.get("editSeq", 0)),
        document=_document_of(item),
    )


def card_of(item: Mapping[str, Any]) -> CardRecord:
    reason = item.get("processingReason")
    return CardRecord(
        generation=int(item.get("generation", 0)),
        processing_status=str(item["processingStatus"]),
        processing_reason=None if reason is None else str(reason),
        sections=list(item.get("sections") or []),
    )


def summary_fields(entry: KnowledgeEntry) -> dict[str, Any]:
    """The summary's fields by their model names: all of ExternalKnowledgeDto, the first of
    KnowledgeEntryDto."""
    return {
        "id": entry.id,
        "name": entry.name,
        "description": entry.description,
        "source": entry.source,
        "provider": entry.provider,
        "knowledge_type": entry.knowledge_type,
        "external_id": entry.external_id,
        "published_version": entry.published_version,
        "created_at": entry.created_at,
        "updated_at": entry.updated_at,
    }


def summary_dto(entry: KnowledgeEntry) -> "ExternalKnowledgeDto":
    # Imported here: the light list imports this module and must not load pydantic.
    from psap.knowledge.models import ExternalKnowledgeDto  # noqa: PLC0415

    return ExternalKnowledgeDto(**summary_fields(entry))


# ------------------------------------------------------------------- id sequences


def next_knowledge_id(count: int = 1) -> int:
    """Reserves `count` consecutive ids and returns the last one."""
    return next_id(_table(), _ENTRY_SEQUENCE, count)


def next_version_id() -> int:
    return next_id(_table(), _VERSION_SEQUENCE)


# --------------------------------------------------------------------- the listing


def _listing_plan(
    tenant_id: int, knowledge_id: int, provider: str, knowledge_type: KnowledgeType, listed: bool
) -> WritePlan:
    """The pointers and counters that add (listed=True) or remove an entry from the listing."""
    plan = WritePlan()
    scopes = [listing_pk(tenant_id, scope) for scope in entry_scopes(provider, knowledge_type)]
    pointers = [listing.key(pk, listing.padded(knowledge_id)) for pk in scopes]
    counters = [listing.Counter(pk, _COUNTER_SK) for pk in scopes]
    listing.pointer_changes(plan, [] if listed else pointers, pointers if listed else [])
    listing.counter_changes(plan, [] if listed else counters, counters if listed else [])
    return plan


def listing_writes(
    tenant_id: int,
    knowledge_id: int,
    provider: str,
    knowledge_type: KnowledgeType,
    listed: bool,
) -> list[dict[str, Any]]:
    """Transaction items that add (listed=True) or remove an entry from the listing."""
    plan = _listing_plan(tenant_id, knowledge_id, provider, knowledge_type, listed)
    return plan.transaction_items(_table())


def count_listed(tenant_id: int, scope: str) -> int:
    return listing.read_counter(_table(), listing_pk(tenant_id, scope), _COUNTER_SK)


def list_entries(
    tenant_id: int,
    provider: str | None,
    knowledge_type: KnowledgeType | None,
    page: PageRequest,
) -> tuple[list["ExternalKnowledgeDto"], int]:
    """One page of listed entries sorted by id (as DTOs), and the total for the filters."""
    entries, total = list_entry_records(tenant_id, provider, knowledge_type, page)
    return [summary_dto(entry) for entry in entries], total


def list_entry_records(
    tenant_id: int,
    provider: str | None,
    knowledge_type: KnowledgeType | None,
    page: PageRequest,
) -> tuple[list[KnowledgeEntry], int]:
    """One page of listed entries sorted by id (summary fields only), and the total."""
    scope = listing_scope(provider, knowledge_type)
    total = count_listed(tenant_id, scope)
    if page.offset >= total:
        return [], total
    ids = listing.page_of_pointers(
        _table(), listing_pk(tenant_id, scope), _POINTERS, True, page.offset, page.size
    )
    if not ids:
        return [], total
    items = batch_get(
        _table(),
        [entry_key(tenant_id, knowledge_id) for knowledge_id in ids],
        projection=", ".join(_SUMMARY_ATTRIBUTES),
        names=_SUMMARY_NAMES,
    )
    by_id = {entry.id: entry for entry in map(entry_of, items)}
    # An entry deleted between the pointer read and the batch read is left out.
    return [
        by_id[knowledge_id]
        for knowledge_id in ids
        if knowledge_id in by_id and not by_id[knowledge_id].deleted
    ], total


# ------------------------------------------------------------------------ entries


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
    tenant_id: int, knowledge_id: int, entry: NewEntry, now: datetime
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
    return _create(tenant_id, next_knowledge_id(), entry, now)


def _create(
    tenant_id: int,
    knowledge_id: int,
    entry: NewEntry,
    now: datetime,
    extra_writes: Sequence[dict[str, Any]] = (),
    extra_attributes: Mapping[str, Any] | None = None,
) -> KnowledgeEntry:
    """create_entry, with `extra_writes` in the same transaction (a first version) and
    `extra_attributes` in the entry item."""
    attributes = _new_entry_attributes(tenant_id, knowledge_id, entry, now) | dict(
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
    writes.append(registration(_table(), tenant_id, pk, PartitionKind.KNOWLEDGE))
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
                tenant_id, knowledge_id, entry.provider, entry.knowledge_type, listed=True
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
        first.created_at,
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
                tenant_id, knowledge_id, entry.provider, entry.knowledge_type, listed=False
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
        attributes = _new_entry_attributes(tenant_id, knowledge_id, entry, now)
        plan = (
            _listing_plan(tenant_id, knowledge_id, entry.provider, entry.knowledge_type, True)
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


# ---------------------------------------------------------------- versions, edits and cards
#
#   T#{t}#K#{id}          / V#{version:010d}  an immutable version: its document (zlib JSON)
#                                             inline, or in S3 with a pointer when large
#   T#{t}#K#{id}          / EDIT#{section}    the service-side edit of a service-owned section
#   T#{t}#K#{id}          / CARD              the knowledge card: digest status and digests
#   SEQ#KNOWLEDGE_VERSION / SEQ               version record ids (versionId), across tenants
#
# The entry item also holds latestVersion, latestVersionId, publishedVersion, apiControl and
# serviceEditSeq. Every write of a version or an edit is one transaction conditioned on the
# latestVersion and serviceEditSeq it read, so concurrent writers cannot both win: the loser
# reads again and retries (psap.storage.optimistic), and version numbers stay contiguous.

# Compressed documents up to this size stay in the version item (reads: one GetItem); larger
# ones go to S3. DynamoDB's item limit is 400 KB, and a transactional write costs 2 WCU per KB.
INLINE_DOCUMENT_BYTES = 64 * 1024
_VERSION_PREFIX = "V#"
_EDIT_PREFIX = "EDIT#"
_CARD_SK = "CARD"
_MOVED_ENTRY = (
    "latestVersion = :expected AND deleted = :no AND "
    "(attribute_not_exists(serviceEditSeq) OR serviceEditSeq = :seq)"
)


def version_key(
    tenant_id: int, knowledge_id: int, version: KnowledgeVersion | int
) -> dict[str, dict[str, str]]:
    return listing.key(entry_pk(tenant_id, knowledge_id), f"{_VERSION_PREFIX}{version:010d}")


def edit_key(tenant_id: int, knowledge_id: int, section: str) -> dict[str, dict[str, str]]:
    return listing.key(entry_pk(tenant_id, knowledge_id), f"{_EDIT_PREFIX}{section}")


def card_key(tenant_id: int, knowledge_id: int) -> dict[str, dict[str, str]]:
    return listing.key(entry_pk(tenant_id, knowledge_id), _CARD_SK)


def document_object_key(tenant_id: int, knowledge_id: int, name: str) -> str:
    return f"tenants/{tenant_id}/knowledge/{knowledge_id}/{name}.json.zlib"


def store_document(bucket: str, object_key: str, document: Mapping[str, Any]) -> StoredDocument:
    """Compresses a document; a large one is written to S3 now (psap.storage.documents)."""
    packed = pack_document(
        document,
        inline_bytes=INLINE_DOCUMENT_BYTES,
        bucket=bucket,
        object_key=object_key,
        content_type="application/zlib",
    )
    return StoredDocument(packed.inline, packed.object_key, packed.raw_bytes, packed.stored_bytes)


def load_document(bucket: str, document: StoredDocument, what: str) -> dict[str, Any]:
    """A stored document, read from S3 when it is there; `what` names it in errors."""
    packed = PackedDocument(
        document.packed, document.object_key, document.raw_bytes, document.stored_bytes
    )
    return unpack_document(packed, bucket, what)


def version_put(
    tenant_id: int,
    knowledge_id: int,
    attributes: Mapping[str, Any],
) -> dict[str, Any]:
    """The transaction item that stores a version (never overwritten: versions are immutable)."""
    version = int(attributes["version"])
    return {
        "Put": {
            "TableName": _table(),
            "Item": {**version_key(tenant_id, knowledge_id, version), **to_item(attributes)},
            "ConditionExpression": "attribute_not_exists(pk)",
        }
    }


def card_pending_write(tenant_id: int, knowledge_id: int) -> dict[str, Any]:
    """Marks the card PENDING and bumps its generation: the digest worker completes only the
    generation it read, so a digest of older content never overwrites a newer request."""
    return {
        "Update": {
            "TableName": _table(),
            "Key": card_key(tenant_id, knowledge_id),
            "UpdateExpression": "SET processingStatus = :pending REMOVE processingReason "
            "ADD generation :one",
            "ExpressionAttributeValues": {":pending": {"S": "PENDING"}, ":one": {"N": "1"}},
        }
    }


def _set_clause(values: Mapping[str, Any]) -> tuple[str, dict[str, str], dict[str, Any]]:
    names = {f"#a{index}": name for index, name in enumerate(values)}
    attribute_values = {f":a{index}": marshal(value) for index, value in enumerate(values.values())}
    clause = ", ".join(f"#a{index} = :a{index}" for index in range(len(values)))
    return clause, names, attribute_values


def _moved_values(expected_version: int, expected_edit_seq: int) -> dict[str, Any]:
    return {
        ":expected": marshal(expected_version),
        ":seq": marshal(expected_edit_seq),
        ":no": {"BOOL": False},
    }


def write_version(
    tenant_id: int,
    knowledge_id: int,
    expected_version: int,
    expected_edit_seq: int,
    entry_changes: Mapping[str, Any],
    version_attributes: Mapping[str, Any],
) -> None:
    """Appends a version as attributes: the entry moves from `expected_version` (with no
    service-side edit since `expected_edit_seq`), the version is stored, the card asks for a
    digest. All or nothing; WriteRaced when another writer moved the entry first (or deleted
    it). append_version is the typed form."""
    clause, names, values = _set_clause(entry_changes)
    writes = [
        {
            "Update": {
                "TableName": _table(),
                "Key": entry_key(tenant_id, knowledge_id),
                "UpdateExpression": f"SET {clause}",
                "ConditionExpression": _MOVED_ENTRY,
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": values
                | _moved_values(expected_version, expected_edit_seq),
            }
        },
        version_put(tenant_id, knowledge_id, version_attributes),
        card_pending_write(tenant_id, knowledge_id),
    ]
    transact_write(writes, on_cancel=lambda codes: WriteRaced("knowledge entry moved"))


def append_version(tenant_id: int, entry: KnowledgeEntry, changes: EntryChanges) -> KnowledgeEntry:
    """Appends `changes.version` to the entry as read (see write_version); returns the entry
    as it now is."""
    version = changes.version
    updated: dict[str, Any] = {
        "latestVersion": version.version,
        "latestVersionId": version.version_id,
        "updatedAt": format_timestamp(version.created_at),
        "apiControl": dict(changes.api_control),
        "name": changes.name,
        "description": changes.description,
    }
    if changes.publish:
        updated["publishedVersion"] = version.version
    write_version(
        tenant_id,
        entry.id,
        entry.latest_version,
        entry.service_edit_seq,
        updated,
        version_attributes(version),
    )
    return replace(
        entry,
        latest_version=version.version,
        latest_version_id=version.version_id,
        updated_at=as_stored(version.created_at),
        api_control=dict(changes.api_control),
        name=changes.name,
        description=changes.description,
        published_version=version.version if changes.publish else entry.published_version,
    )


def read_version_item(
    tenant_id: int, knowledge_id: int, version: KnowledgeVersion | int
) -> Item | None:
    """The version item as stored (operators and tests look at its attributes)."""
    return read_item(_table(), version_key(tenant_id, knowledge_id, version), "knowledge version")


def read_version(
    tenant_id: int, knowledge_id: int, version: KnowledgeVersion
) -> VersionRecord | None:
    item = read_version_item(tenant_id, knowledge_id, version)
    return version_of(item) if item else None


def read_edit_items(tenant_id: int, knowledge_id: int) -> list[Item]:
    """The entry's service-side edit items as stored: at most one per section, one Query."""
    request = {
        "TableName": _table(),
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :edit)",
        "ExpressionAttributeValues": {
            ":pk": {"S": entry_pk(tenant_id, knowledge_id)},
            ":edit": {"S": _EDIT_PREFIX},
        },
        "ConsistentRead": True,
    }
    answer = query_page(request, "knowledge edits")
    return [from_item(item) for item in answer.get("Items", [])]


def read_edits(tenant_id: int, knowledge_id: int) -> list[EditRecord]:
    return [edit_of(item) for item in read_edit_items(tenant_id, knowledge_id)]


def write_edit(tenant_id: int, entry: KnowledgeEntry, edit: EditRecord) -> None:
    """Stores the service-side edit of one section (replacing an earlier one) and asks for a
    digest, conditioned on the entry as read, like write_version; WriteRaced when the entry
    moved first."""
    attributes = {
        "section": edit.section,
        "editedAt": format_timestamp(edit.edited_at),
        "editedBy": edit.edited_by,
        "note": edit.note,
        "basedOnVersion": edit.based_on_version,
        "editSeq": edit.edit_seq,
        **_document_attributes(edit.document),
    }
    writes = [
        {
            "Update": {
                "TableName": _table(),
                "Key": entry_key(tenant_id, entry.id),
                "UpdateExpression": "SET serviceEditSeq = :next",
                "ConditionExpression": _MOVED_ENTRY,
                "ExpressionAttributeValues": {
                    ":next": marshal(edit.edit_seq),
                    **_moved_values(entry.latest_version, entry.service_edit_seq),
                },
            }
        },
        {
            "Put": {
                "TableName": _table(),
                "Item": {**edit_key(tenant_id, entry.id, edit.section), **to_item(attributes)},
            }
        },
        card_pending_write(tenant_id, entry.id),
    ]
    transact_write(writes, on_cancel=lambda codes: WriteRaced("knowledge entry moved"))


def set_published_version(
    tenant_id: int,
    entry: KnowledgeEntry,
    version: KnowledgeVersion | None,
    now: datetime,
) -> KnowledgeEntry:
    """Publishes `version` (or unpublishes with None): exactly one published version, since
    it is one attribute of the entry. Returns the entry as it now is; WriteRaced when the
    entry is deleted or lacks the version."""
    knowledge_id = entry.id
    values: dict[str, Any] = {":now": {"S": format_timestamp(now)}, ":no": {"BOOL": False}}
    if version is None:
        update = "SET updatedAt = :now REMOVE publishedVersion"
        condition = "attribute_exists(pk) AND deleted = :no"
    else:
        update = "SET updatedAt = :now, publishedVersion = :v"
        condition = "attribute_exists(pk) AND deleted = :no AND latestVersion >= :v"
        values[":v"] = marshal(version)
    try:
        with translated("publish"):
            dynamodb().update_item(
                TableName=_table(),
                Key=entry_key(tenant_id, knowledge_id),
                UpdateExpression=update,
                ConditionExpression=condition,
                ExpressionAttributeValues=values,
            )
    except ConditionFailed as error:
        raise WriteRaced(str(error)) from error
    return replace(entry, published_version=version, updated_at=as_stored(now))


def read_card(tenant_id: int, knowledge_id: int) -> tuple[KnowledgeEntry | None, CardRecord | None]:
    """The entry and its card in one BatchGetItem (strongly consistent reads)."""
    items = batch_get(
        _table(),
        [entry_key(tenant_id, knowledge_id), card_key(tenant_id, knowledge_id)],
        consistent=True,
    )
    entry = next((entry_of(item) for item in items if item["sk"] == "ENTRY"), None)
    card = next((card_of(item) for item in items if item["sk"] == _CARD_SK), None)
    return entry, card


def read_card_record(tenant_id: int, knowledge_id: int) -> CardRecord | None:
    item = read_item(_table(), card_key(tenant_id, knowledge_id), "knowledge card")
    return card_of(item) if item else None


def complete_card(
    tenant_id: int,
    knowledge_id: int,
    generation: int,
    result: CardRecord,
    processed_at: datetime,
    digested_version: KnowledgeVersion | None = None,
) -> bool:
    """Stores a digest result (READY with its sections and digested version, or FAILED with
    its reason) if no write asked for a newer one meanwhile (the generation still matches).
    Returns False when it was superseded: the newer request's message will make the card."""
    attributes: dict[str, Any] = {"processingStatus": result.processing_status}
    if result.processing_reason is not None:
        attributes["processingReason"] = result.processing_reason
    else:
        attributes["sections"] = result.sections
        attributes["digestedVersion"] = digested_version
    attributes["processedAt"] = format_timestamp(processed_at)
    clause, names, values = _set_clause(attributes)
    values[":g"] = marshal(generation)
    update = f"SET {clause}"
    if "processingReason" not in attributes:
        update += " REMOVE processingReason"
    try:
        with translated("knowledge card"):
            dynamodb().update_item(
                TableName=_table(),
                Key=card_key(tenant_id, knowledge_id),
                UpdateExpression=update,
                ConditionExpression="generation = :g",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
    except ConditionFailed:
        return False
    return True


def mark_card_pending(tenant_id: int, knowledge_id: int) -> None:
    """Asks for a new digest outside a write (an operator's redigest)."""
    transact_write([card_pending_write(tenant_id, knowledge_id)])
