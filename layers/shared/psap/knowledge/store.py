"""Knowledge entries in the knowledge table.

Layout (every key begins with the tenant, except the global id sequence):

  T#{t}#K#{id}       / ENTRY        the entry: metadata, latest and published version
  T#{t}#XID#{p}#{x}  / XID          guards externalId uniqueness per (tenant, provider)
  T#{t}#KL#{scope}   / #COUNT       how many listed entries the scope holds
  T#{t}#KL#{scope}   / {id:019d}    a listing pointer (keys only), sorted by id
  SEQ#KNOWLEDGE      / SEQ          the id sequence (ids are unique across tenants)

A listed entry (source API_IMPORT, not deleted) has one pointer in each of four scopes:
ALL, its provider, its type, and provider+type, so any combination of the two filters is one
Query. Pointers and counters change in the same transaction as the entry, so totals are
exact and a list read right after a write sees it (strongly consistent Query).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

from botocore.exceptions import BotoCoreError, ClientError

from psap.clock import format_timestamp
from psap.errors import Conflict, StoreUnavailable
from psap.http.pagination import PageRequest
from psap.knowledge.models import ExternalKnowledgeDto, KnowledgeSource, KnowledgeType
from psap.storage.attributes import from_item, to_item
from psap.storage.dynamodb import batch_get, batch_put, dynamodb, transact_write

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
) -> ExternalKnowledgeDto:
    """Creates an entry with its listing pointers and counters in one transaction.

    `extra_writes` lets the caller add its own items (a first version) to the same
    transaction. A second entry with the same (provider, externalId) is a Conflict."""
    knowledge_id = next_knowledge_id(table)
    attributes = entry_attributes(tenant_id, knowledge_id, entry, now)
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


def summary_from_item(item: dict[str, Any]) -> ExternalKnowledgeDto:
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
) -> tuple[list[ExternalKnowledgeDto], int]:
    """One page of listed entries sorted by id, and the total for the filters."""
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
        summary_from_item(by_id[knowledge_id])
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
    listing and its counters, in one transaction. Returns False when there is nothing to
    delete (unknown id, other tenant's id, or already deleted)."""
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
