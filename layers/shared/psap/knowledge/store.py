"""Knowledge entries in the knowledge table.

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
Query. Pointers and counters change in the same transaction as the entry, so totals are
exact and a list read right after a write sees it (strongly consistent Query).
"""

import json
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from botocore.exceptions import BotoCoreError, ClientError

from psap.clock import format_timestamp
from psap.errors import Conflict, StoreUnavailable
from psap.knowledge.kinds import KnowledgeSource, KnowledgeType
from psap.paging import PageRequest
from psap.storage.attributes import from_item, marshal, to_item
from psap.storage.dynamodb import batch_get, batch_put, dynamodb, transact_write
from psap.storage.s3 import get_object, put_object

if TYPE_CHECKING:
    from psap.knowledge.models import ExternalKnowledgeDto

_COUNTER_SK = "#COUNT"  # sorts before every zero-padded id
_FIRST_POINTER_SK = "0"
_SKIP_BATCH = 1000  # keys per Query while skipping earlier pages
_SUMMARY_ATTRIBUTES = (
    "id",
    "#n",
    "description",
    "#s",
    "provider",
    "knowledgeType",
    "externalId",
    "publishedVersion",
    "createdAt",
    "updatedAt",
    "deleted",
)
_SUMMARY_NAMES = {"#n": "name", "#s": "source"}


@dataclass(frozen=True)
class NewEntry:
    name: str
    provider: str
    knowledge_type: KnowledgeType
    description: str | None = None
    external_id: str | None = None
    source: KnowledgeSource = KnowledgeSource.API_IMPORT


def entry_key(tenant_id: int, knowledge_id: int) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"T#{tenant_id}#K#{knowledge_id}"}, "sk": {"S": "ENTRY"}}


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


def listing_writes(
    table: str,
    tenant_id: int,
    knowledge_id: int,
    provider: str,
    knowledge_type: KnowledgeType,
    listed: bool,
) -> list[dict[str, Any]]:
    """Transaction items that add (listed=True) or remove an entry from the listing."""
    writes: list[dict[str, Any]] = []
    for scope in entry_scopes(provider, knowledge_type):
        pk = listing_pk(tenant_id, scope)
        pointer = {"pk": {"S": pk}, "sk": {"S": f"{knowledge_id:019d}"}}
        if listed:
            writes.append({"Put": {"TableName": table, "Item": pointer}})
        else:
            writes.append({"Delete": {"TableName": table, "Key": pointer}})
        writes.append(
            {
                "Update": {
                    "TableName": table,
                    "Key": {"pk": {"S": pk}, "sk": {"S": _COUNTER_SK}},
                    "UpdateExpression": "ADD #c :d",
                    "ExpressionAttributeNames": {"#c": "count"},
                    "ExpressionAttributeValues": {":d": {"N": "1" if listed else "-1"}},
                }
            }
        )
    return writes


def next_knowledge_id(table: str, count: int = 1) -> int:
    """Reserves `count` consecutive ids and returns the last one."""
    try:
        answer = dynamodb().update_item(
            TableName=table,
            Key={"pk": {"S": "SEQ#KNOWLEDGE"}, "sk": {"S": "SEQ"}},
            UpdateExpression="ADD #v :n",
            ExpressionAttributeNames={"#v": "value"},
            ExpressionAttributeValues={":n": {"N": str(count)}},
            ReturnValues="UPDATED_NEW",
        )
    except (ClientError, BotoCoreError) as error:
        raise StoreUnavailable(f"knowledge id sequence: {error}") from error
    return int(answer["Attributes"]["value"]["N"])


def external_id_key(tenant_id: int, provider: str, external_id: str) -> dict[str, dict[str, str]]:
    pk = f"T#{tenant_id}#XID#{quote(provider, safe='')}#{quote(external_id, safe='')}"
    return {"pk": {"S": pk}, "sk": {"S": "XID"}}


def find_by_external_id(table: str, tenant_id: int, provider: str, external_id: str) -> int | None:
    answer = dynamodb().get_item(
        TableName=table, Key=external_id_key(tenant_id, provider, external_id), ConsistentRead=True
    )
    item = answer.get("Item")
    return int(item["knowledgeId"]["N"]) if item else None


def entry_attributes(
    tenant_id: int, knowledge_id: int, entry: NewEntry, now: datetime
) -> dict[str, Any]:
    stamp = format_timestamp(now)
    return {
        "id": knowledge_id,
        "tenantId": tenant_id,
        "name": entry.name,
        "description": entry.description,
        "source": entry.source.value,
        "provider": entry.provider,
        "knowledgeType": entry.knowledge_type.value,
        "externalId": entry.external_id,
        "createdAt": stamp,
        "updatedAt": stamp,
        "latestVersion": 0,
        "deleted": False,
    }


def create_entry(
    table: str,
    tenant_id: int,
    entry: NewEntry,
    now: datetime,
    extra_writes: Sequence[dict[str, Any]] = (),
    *,
    knowledge_id: int | None = None,
    extra_attributes: Mapping[str, Any] | None = None,
) -> "ExternalKnowledgeDto":
    """Creates an entry with its listing pointers and counters in one transaction.

    `extra_writes` lets the caller add its own items (a first version) to the same
    transaction, `extra_attributes` its own attributes of the entry item, and `knowledge_id`
    an id it drew beforehand (next_knowledge_id) to key them. A second entry with the same
    (provider, externalId) is a Conflict."""
    knowledge_id = knowledge_id if knowledge_id is not None else next_knowledge_id(table)
    attributes = entry_attributes(tenant_id, knowledge_id, entry, now) | dict(
        extra_attributes or {}
    )
    writes: list[dict[str, Any]] = [
        {
            "Put": {
                "TableName": table,
                "Item": {**entry_key(tenant_id, knowledge_id), **to_item(attributes)},
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        }
    ]
    if entry.external_id is not None:
        writes.append(
            {
                "Put": {
                    "TableName": table,
                    "Item": {
                        **external_id_key(tenant_id, entry.provider, entry.external_id),
                        "knowledgeId": {"N": str(knowledge_id)},
                    },
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            }
        )
    if entry.source is KnowledgeSource.API_IMPORT:
        writes.extend(
            listing_writes(
                table, tenant_id, knowledge_id, entry.provider, entry.knowledge_type, listed=True
            )
        )
    writes.extend(extra_writes)

    def duplicate(codes: list[str]) -> Exception:
        existing = (
            find_by_external_id(table, tenant_id, entry.provider, entry.external_id)
            if entry.external_id is not None
            else None
        )
        return Conflict(
            f"externalId '{entry.external_id}' of provider '{entry.provider}' already exists "
            f"as knowledge id {existing}"
        )

    transact_write(writes, on_cancel=duplicate)
    return summary_from_item(attributes)


def summary_from_item(item: dict[str, Any]) -> "ExternalKnowledgeDto":
    # Imported here: the light list imports this module and must not load pydantic.
    from psap.knowledge.models import ExternalKnowledgeDto  # noqa: PLC0415

    return ExternalKnowledgeDto.model_validate(
        {
            "id": item["id"],
            "name": item["name"],
            "description": item.get("description"),
            "source": item["source"],
            "provider": item["provider"],
            "knowledgeType": item["knowledgeType"],
            "externalId": item.get("externalId"),
            "publishedVersion": item.get("publishedVersion"),
            "createdAt": item["createdAt"],
            "updatedAt": item["updatedAt"],
        }
    )


def count_listed(table: str, tenant_id: int, scope: str) -> int:
    try:
        answer = dynamodb().get_item(
            TableName=table,
            Key={"pk": {"S": listing_pk(tenant_id, scope)}, "sk": {"S": _COUNTER_SK}},
            ConsistentRead=True,
        )
    except (ClientError, BotoCoreError) as error:
        raise StoreUnavailable(f"listing counter: {error}") from error
    item = answer.get("Item")
    return max(0, int(item["count"]["N"])) if item else 0


def _query_pointers(
    table: str, pk: str, limit: int, start: dict[str, Any] | None
) -> tuple[list[int], dict[str, Any] | None]:
    request: dict[str, Any] = {
        "TableName": table,
        "KeyConditionExpression": "pk = :pk AND sk >= :first",
        "ExpressionAttributeValues": {":pk": {"S": pk}, ":first": {"S": _FIRST_POINTER_SK}},
        "ConsistentRead": True,
        "Limit": limit,
    }
    if start:
        request["ExclusiveStartKey"] = start
    try:
        answer = dynamodb().query(**request)
    except (ClientError, BotoCoreError) as error:
        raise StoreUnavailable(f"listing query: {error}") from error
    ids = [int(item["sk"]["S"]) for item in answer.get("Items", [])]
    return ids, answer.get("LastEvaluatedKey")


def _skip(table: str, pk: str, count: int) -> tuple[dict[str, Any] | None, bool]:
    """Walks `count` pointers (keys only) and returns the key to continue from.

    This is the cost of deep pages: page p of size s reads p*s small pointer items, in
    Queries of up to 1 000 keys (about 40 bytes each), never a full entry."""
    start: dict[str, Any] | None = None
    while count > 0:
        ids, start = _query_pointers(table, pk, min(count, _SKIP_BATCH), start)
        count -= len(ids)
        if start is None:
            return None, count > 0
    return start, False


def list_entries(
    table: str,
    tenant_id: int,
    provider: str | None,
    knowledge_type: KnowledgeType | None,
    page: PageRequest,
) -> tuple[list["ExternalKnowledgeDto"], int]:
    """One page of listed entries sorted by id, and the total for the filters."""
    items, total = list_entry_items(table, tenant_id, provider, knowledge_type, page)
    return [summary_from_item(item) for item in items], total


def list_entry_items(
    table: str,
    tenant_id: int,
    provider: str | None,
    knowledge_type: KnowledgeType | None,
    page: PageRequest,
) -> tuple[list[dict[str, Any]], int]:
    """list_entries with the summary attributes as read: the light list (psap.knowledge.listing)
    makes them JSON without pydantic."""
    scope = listing_scope(provider, knowledge_type)
    total = count_listed(table, tenant_id, scope)
    if page.offset >= total:
        return [], total
    pk = listing_pk(tenant_id, scope)
    start, exhausted = _skip(table, pk, page.offset)
    if exhausted:
        return [], total
    ids, _ = _query_pointers(table, pk, page.size, start)
    if not ids:
        return [], total
    items = batch_get(
        table,
        [entry_key(tenant_id, knowledge_id) for knowledge_id in ids],
        projection=", ".join(_SUMMARY_ATTRIBUTES),
        names=_SUMMARY_NAMES,
    )
    by_id = {int(item["id"]): item for item in items}
    # An entry deleted between the pointer read and the batch read is left out.
    summaries = [
        by_id[knowledge_id]
        for knowledge_id in ids
        if knowledge_id in by_id and not by_id[knowledge_id].get("deleted")
    ]
    return summaries, total


def read_entry_item(table: str, tenant_id: int, knowledge_id: int) -> dict[str, Any] | None:
    try:
        answer = dynamodb().get_item(
            TableName=table, Key=entry_key(tenant_id, knowledge_id), ConsistentRead=True
        )
    except (ClientError, BotoCoreError) as error:
        raise StoreUnavailable(f"knowledge entry: {error}") from error
    raw = answer.get("Item")
    return from_item(raw) if raw else None


def delete_entry(table: str, tenant_id: int, knowledge_id: int, now: datetime) -> bool:
    """Soft delete: the entry stays (links to it still read as stored) but leaves the
    listing and its counters, and gives up its externalId (a new entry may take it and new
    links then resolve to that one), in one transaction. Returns False when there is nothing
    to delete (unknown id, other tenant's id, or already deleted)."""
    item = read_entry_item(table, tenant_id, knowledge_id)
    if item is None or item.get("deleted"):
        return False
    writes: list[dict[str, Any]] = [
        {
            "Update": {
                "TableName": table,
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
    if item["source"] == KnowledgeSource.API_IMPORT.value:
        writes.extend(
            listing_writes(
                table,
                tenant_id,
                knowledge_id,
                str(item["provider"]),
                KnowledgeType(item["knowledgeType"]),
                listed=False,
            )
        )
    if item.get("externalId"):
        writes.append(
            {
                "Delete": {
                    "TableName": table,
                    "Key": external_id_key(tenant_id, str(item["provider"]), item["externalId"]),
                    "ConditionExpression": "knowledgeId = :id",
                    "ExpressionAttributeValues": {":id": {"N": str(knowledge_id)}},
                }
            }
        )
    # A concurrent delete makes the condition fail: the entry is deleted either way.
    try:
        transact_write(writes, on_cancel=lambda codes: _AlreadyDeleted())
    except _AlreadyDeleted:
        return False
    return True


class _AlreadyDeleted(Exception):
    pass


def bulk_load_entries(
    table: str, tenant_id: int, entries: Sequence[NewEntry], now: datetime
) -> list[int]:
    """Loads many entries without externalIds quickly: the same items as create_entry, written
    with BatchWriteItem, counters adjusted once per scope at the end.

    For operator loads into a tenant (demo data, benchmarks, large fixtures), never for a
    request: it is not atomic across entries, so an interrupted load leaves entries the
    counters do not count yet. Entries with an externalId must go through create_entry,
    which guards uniqueness."""
    if any(entry.external_id is not None for entry in entries):
        raise ValueError("bulk_load_entries takes entries without externalId")
    if not entries:
        return []
    last = next_knowledge_id(table, len(entries))
    first = last - len(entries) + 1
    puts: list[dict[str, Any]] = []
    deltas: dict[str, int] = {}
    for knowledge_id, entry in zip(range(first, last + 1), entries, strict=True):
        attributes = entry_attributes(tenant_id, knowledge_id, entry, now)
        puts.append({**entry_key(tenant_id, knowledge_id), **to_item(attributes)})
        if entry.source is KnowledgeSource.API_IMPORT:
            for scope in entry_scopes(entry.provider, entry.knowledge_type):
                pk = listing_pk(tenant_id, scope)
                puts.append({"pk": {"S": pk}, "sk": {"S": f"{knowledge_id:019d}"}})
                deltas[pk] = deltas.get(pk, 0) + 1
    batch_put(table, puts)
    for pk, delta in deltas.items():
        dynamodb().update_item(
            TableName=table,
            Key={"pk": {"S": pk}, "sk": {"S": _COUNTER_SK}},
            UpdateExpression="ADD #c :d",
            ExpressionAttributeNames={"#c": "count"},
            ExpressionAttributeValues={":d": {"N": str(delta)}},
        )
    return list(range(first, last + 1))


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
# reads again and retries, and version numbers stay contiguous.

# Compressed documents up to this size stay in the version item (reads: one GetItem); larger
# ones go to S3. DynamoDB's item limit is 400 KB, and a transactional write costs 2 WCU per KB.
INLINE_DOCUMENT_BYTES = 64 * 1024
_ZLIB_LEVEL = 6  # zlib's default: most of the gain of level 9 at a fraction of the CPU time
_VERSION_PREFIX = "V#"
_EDIT_PREFIX = "EDIT#"
_CARD_SK = "CARD"


class UnreadableDocument(Exception):
    """A stored document that does not decompress or parse: a bug or corruption, never
    the caller's input."""


class WriteRaced(Exception):
    """The entry changed between the read and the conditional write: read again, retry."""


@dataclass(frozen=True)
class StoredDocument:
    """A document ready for a version or edit item: inline bytes or an S3 pointer."""

    attributes: dict[str, Any]
    raw_bytes: int
    stored_bytes: int
    in_s3: bool


def version_key(tenant_id: int, knowledge_id: int, version: int) -> dict[str, dict[str, str]]:
    return {
        "pk": {"S": f"T#{tenant_id}#K#{knowledge_id}"},
        "sk": {"S": f"{_VERSION_PREFIX}{version:010d}"},
    }


def edit_key(tenant_id: int, knowledge_id: int, section: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"T#{tenant_id}#K#{knowledge_id}"}, "sk": {"S": f"{_EDIT_PREFIX}{section}"}}


def card_key(tenant_id: int, knowledge_id: int) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"T#{tenant_id}#K#{knowledge_id}"}, "sk": {"S": _CARD_SK}}


def document_object_key(tenant_id: int, knowledge_id: int, name: str) -> str:
    return f"tenants/{tenant_id}/knowledge/{knowledge_id}/{name}.json.zlib"


def next_version_id(table: str) -> int:
    try:
        answer = dynamodb().update_item(
            TableName=table,
            Key={"pk": {"S": "SEQ#KNOWLEDGE_VERSION"}, "sk": {"S": "SEQ"}},
            UpdateExpression="ADD #v :one",
            ExpressionAttributeNames={"#v": "value"},
            ExpressionAttributeValues={":one": {"N": "1"}},
            ReturnValues="UPDATED_NEW",
        )
    except (ClientError, BotoCoreError) as error:
        raise StoreUnavailable(f"knowledge version id sequence: {error}") from error
    return int(answer["Attributes"]["value"]["N"])


def store_document(bucket: str, object_key: str, document: Mapping[str, Any]) -> StoredDocument:
    """Compresses a document; a large one is written to S3 now (before the transaction that
    points at it: a failed transaction leaves an object nothing points at, never the reverse).
    """
    raw = json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    packed = zlib.compress(raw, _ZLIB_LEVEL)
    sizes = {"rawBytes": len(raw), "storedBytes": len(packed)}
    if len(packed) <= INLINE_DOCUMENT_BYTES:
        return StoredDocument({"document": packed, **sizes}, len(raw), len(packed), in_s3=False)
    put_object(bucket, object_key, packed, "application/zlib")
    return StoredDocument({"documentKey": object_key, **sizes}, len(raw), len(packed), in_s3=True)


def load_document(bucket: str, item: Mapping[str, Any]) -> dict[str, Any]:
    """The document of a version or edit item (read from S3 when it points there)."""
    packed = item.get("document")
    if packed is None:
        packed = get_object(bucket, str(item["documentKey"]))
    try:
        document: dict[str, Any] = json.loads(zlib.decompress(bytes(packed)))
    except (zlib.error, ValueError) as error:
        raise UnreadableDocument(f"{item.get('pk')} {item.get('sk')}: {error}") from error
    return document


def version_put(
    table: str,
    tenant_id: int,
    knowledge_id: int,
    attributes: Mapping[str, Any],
) -> dict[str, Any]:
    """The transaction item that stores a version (never overwritten: versions are immutable)."""
    version = int(attributes["version"])
    return {
        "Put": {
            "TableName": table,
            "Item": {**version_key(tenant_id, knowledge_id, version), **to_item(attributes)},
            "ConditionExpression": "attribute_not_exists(pk)",
        }
    }


def card_pending_write(table: str, tenant_id: int, knowledge_id: int) -> dict[str, Any]:
    """Marks the card PENDING and bumps its generation: the digest worker completes only the
    generation it read, so a digest of older content never overwrites a newer request."""
    return {
        "Update": {
            "TableName": table,
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


def write_version(
    table: str,
    tenant_id: int,
    knowledge_id: int,
    expected_version: int,
    expected_edit_seq: int,
    entry_changes: Mapping[str, Any],
    version_attributes: Mapping[str, Any],
) -> None:
    """Appends a version: the entry moves from `expected_version` (with no service-side edit
    since `expected_edit_seq`), the version is stored, the card asks for a digest. All or
    nothing; WriteRaced when another writer moved the entry first (or deleted it)."""
    clause, names, values = _set_clause(entry_changes)
    values |= {
        ":expected": {"N": str(expected_version)},
        ":seq": {"N": str(expected_edit_seq)},
        ":no": {"BOOL": False},
    }
    writes = [
        {
            "Update": {
                "TableName": table,
                "Key": entry_key(tenant_id, knowledge_id),
                "UpdateExpression": f"SET {clause}",
                "ConditionExpression": "latestVersion = :expected AND deleted = :no AND "
                "(attribute_not_exists(serviceEditSeq) OR serviceEditSeq = :seq)",
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": values,
            }
        },
        version_put(table, tenant_id, knowledge_id, version_attributes),
        card_pending_write(table, tenant_id, knowledge_id),
    ]
    transact_write(writes, on_cancel=lambda codes: WriteRaced())


def read_version_item(
    table: str, tenant_id: int, knowledge_id: int, version: int
) -> dict[str, Any] | None:
    try:
        answer = dynamodb().get_item(
            TableName=table, Key=version_key(tenant_id, knowledge_id, version), ConsistentRead=True
        )
    except (ClientError, BotoCoreError) as error:
        raise StoreUnavailable(f"knowledge version: {error}") from error
    raw = answer.get("Item")
    return from_item(raw) if raw else None


def read_edit_items(table: str, tenant_id: int, knowledge_id: int) -> list[dict[str, Any]]:
    """The entry's service-side edits: at most one item per section, one Query."""
    try:
        answer = dynamodb().query(
            TableName=table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :edit)",
            ExpressionAttributeValues={
                ":pk": {"S": f"T#{tenant_id}#K#{knowledge_id}"},
                ":edit": {"S": _EDIT_PREFIX},
            },
            ConsistentRead=True,
        )
    except (ClientError, BotoCoreError) as error:
        raise StoreUnavailable(f"knowledge edits: {error}") from error
    return [from_item(item) for item in answer.get("Items", [])]


def write_edit(
    table: str,
    tenant_id: int,
    knowledge_id: int,
    expected_version: int,
    expected_edit_seq: int,
    section: str,
    edit_attributes: Mapping[str, Any],
) -> None:
    """Stores the service-side edit of one section (replacing an earlier one) and asks for a
    digest, conditioned like write_version; WriteRaced when the entry moved first."""
    writes = [
        {
            "Update": {
                "TableName": table,
                "Key": entry_key(tenant_id, knowledge_id),
                "UpdateExpression": "SET serviceEditSeq = :next",
                "ConditionExpression": "latestVersion = :expected AND deleted = :no AND "
                "(attribute_not_exists(serviceEditSeq) OR serviceEditSeq = :seq)",
                "ExpressionAttributeValues": {
                    ":next": {"N": str(expected_edit_seq + 1)},
                    ":expected": {"N": str(expected_version)},
                    ":seq": {"N": str(expected_edit_seq)},
                    ":no": {"BOOL": False},
                },
            }
        },
        {
            "Put": {
                "TableName": table,
                "Item": {**edit_key(tenant_id, knowledge_id, section), **to_item(edit_attributes)},
            }
        },
        card_pending_write(table, tenant_id, knowledge_id),
    ]
    transact_write(writes, on_cancel=lambda codes: WriteRaced())


def set_published_version(
    table: str, tenant_id: int, knowledge_id: int, version: int | None, now: datetime
) -> None:
    """Publishes `version` (or unpublishes with None): exactly one published version, since
    it is one attribute of the entry. WriteRaced when the entry is deleted or lacks it."""
    values: dict[str, Any] = {":now": {"S": format_timestamp(now)}, ":no": {"BOOL": False}}
    if version is None:
        update = "SET updatedAt = :now REMOVE publishedVersion"
        condition = "attribute_exists(pk) AND deleted = :no"
    else:
        update = "SET updatedAt = :now, publishedVersion = :v"
        condition = "attribute_exists(pk) AND deleted = :no AND latestVersion >= :v"
        values[":v"] = {"N": str(version)}
    try:
        dynamodb().update_item(
            TableName=table,
            Key=entry_key(tenant_id, knowledge_id),
            UpdateExpression=update,
            ConditionExpression=condition,
            ExpressionAttributeValues=values,
        )
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
            raise WriteRaced() from error
        raise StoreUnavailable(f"publish: {error}") from error
    except BotoCoreError as error:
        raise StoreUnavailable(f"publish: {error}") from error


def resolve_external_ids(
    table: str, tenant_id: int, provider: str, external_ids: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """externalId -> the entry that holds it under `provider` in the tenant (not deleted):
    one BatchGetItem of the externalId guards, one of the entries they name."""
    wanted = list(dict.fromkeys(external_ids))
    if not wanted:
        return {}
    guards = batch_get(
        table, [external_id_key(tenant_id, provider, external_id) for external_id in wanted]
    )
    by_pk = {str(guard["pk"]): int(guard["knowledgeId"]) for guard in guards}
    ids = {
        external_id: by_pk[pk]
        for external_id in wanted
        if (pk := external_id_key(tenant_id, provider, external_id)["pk"]["S"]) in by_pk
    }
    if not ids:
        return {}
    entries = batch_get(
        table,
        [entry_key(tenant_id, knowledge_id) for knowledge_id in set(ids.values())],
        projection="id, #n, provider, knowledgeType, deleted",
        names={"#n": "name"},
    )
    by_id = {int(entry["id"]): entry for entry in entries if not entry.get("deleted")}
    return {
        external_id: by_id[knowledge_id]
        for external_id, knowledge_id in ids.items()
        if knowledge_id in by_id
    }


def read_card_items(
    table: str, tenant_id: int, knowledge_id: int
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The entry and its card in one BatchGetItem (strongly consistent reads)."""
    items = _consistent_batch_get(
        table, [entry_key(tenant_id, knowledge_id), card_key(tenant_id, knowledge_id)]
    )
    entry = next((item for item in items if item["sk"] == "ENTRY"), None)
    card = next((item for item in items if item["sk"] == _CARD_SK), None)
    return entry, card


def _consistent_batch_get(table: str, keys: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    try:
        answer = dynamodb().batch_get_item(
            RequestItems={table: {"Keys": list(keys), "ConsistentRead": True}}
        )
    except (ClientError, BotoCoreError) as error:
        raise StoreUnavailable(f"knowledge card: {error}") from error
    if answer.get("UnprocessedKeys"):
        # Two small keys are rarely left unprocessed; reading them one by one is simplest.
        return [item for key in keys if (item := _get(table, key)) is not None]
    return [from_item(item) for item in answer.get("Responses", {}).get(table, [])]


def _get(table: str, key: Mapping[str, Any]) -> dict[str, Any] | None:
    try:
        answer = dynamodb().get_item(TableName=table, Key=dict(key), ConsistentRead=True)
    except (ClientError, BotoCoreError) as error:
        raise StoreUnavailable(f"knowledge read: {error}") from error
    raw = answer.get("Item")
    return from_item(raw) if raw else None


def read_card_item(table: str, tenant_id: int, knowledge_id: int) -> dict[str, Any] | None:
    return _get(table, card_key(tenant_id, knowledge_id))


def complete_card(
    table: str,
    tenant_id: int,
    knowledge_id: int,
    generation: int,
    attributes: Mapping[str, Any],
) -> bool:
    """Stores a digest result if no write asked for a newer one meanwhile (the generation
    still matches). Returns False when it was superseded: the newer request's message will
    produce the card."""
    clause, names, values = _set_clause(attributes)
    values[":g"] = {"N": str(generation)}
    update = f"SET {clause}"
    if "processingReason" not in attributes:
        update += " REMOVE processingReason"
    try:
        dynamodb().update_item(
            TableName=table,
            Key=card_key(tenant_id, knowledge_id),
            UpdateExpression=update,
            ConditionExpression="generation = :g",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
        )
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
            return False
        raise StoreUnavailable(f"knowledge card: {error}") from error
    except BotoCoreError as error:
        raise StoreUnavailable(f"knowledge card: {error}") from error
    return True


def mark_card_pending(table: str, tenant_id: int, knowledge_id: int) -> None:
    """Asks for a new digest outside a write (an operator's redigest)."""
    transact_write([card_pending_write(table, tenant_id, knowledge_id)])
