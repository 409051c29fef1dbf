"""The listing: pointers and counters per filter scope (psap.storage.listing)."""

from typing import TYPE_CHECKING, Any

from psap.knowledge.kinds import KnowledgeType
from psap.knowledge.records import KnowledgeEntry
from psap.knowledge.store.keys import _table, entry_key, entry_scopes, listing_pk, listing_scope
from psap.knowledge.store.records import EntryDescription, entry_of, summary_dto
from psap.paging import PageRequest
from psap.storage import listing
from psap.storage.dynamodb import batch_get
from psap.storage.listing import KeyRange, WritePlan
from psap.storage.queries import query_pages

if TYPE_CHECKING:
    from psap.knowledge.models import ExternalKnowledgeDto

_COUNTER_SK = "#COUNT"  # sorts before every zero-padded id
# A scope's count is COUNTER_SHARDS items (`#COUNT#{nn}`), the entry's id choosing one, so
# concurrent creates of a tenant write different items (one item serializes its writers:
# ~50-100 transactions/s). A read sums the shards (and a `#COUNT` item of the unsharded
# layout, still counted) with one Query of the scope's partition.
COUNTER_SHARDS = 16
_FIRST_POINTER_SK = "0"
_POINTERS = KeyRange(_FIRST_POINTER_SK, "9" * listing.ID_WIDTH)  # every pointer, not the counter


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


def _listing_plan(
    tenant_id: int, knowledge_id: int, provider: str, *, knowledge_type: KnowledgeType, listed: bool
) -> WritePlan:
    """The pointers and counters that add (listed=True) or remove an entry from the listing."""
    plan = WritePlan()
    scopes = [listing_pk(tenant_id, scope) for scope in entry_scopes(provider, knowledge_type)]
    pointers = [listing.key(pk, listing.padded(knowledge_id)) for pk in scopes]
    # The same shard on create and delete: no shard counts below zero.
    counters = [listing.Counter(pk, counter_sk(knowledge_id)) for pk in scopes]
    listing.pointer_changes(plan, [] if listed else pointers, pointers if listed else [])
    listing.counter_changes(plan, [] if listed else counters, counters if listed else [])
    return plan


def listing_writes(
    tenant_id: int,
    knowledge_id: int,
    provider: str,
    *,
    knowledge_type: KnowledgeType,
    listed: bool,
) -> list[dict[str, Any]]:
    """Transaction items that add (listed=True) or remove an entry from the listing."""
    plan = _listing_plan(
        tenant_id, knowledge_id, provider, knowledge_type=knowledge_type, listed=listed
    )
    return plan.transaction_items(_table())


def counter_sk(knowledge_id: int) -> str:
    return f"{_COUNTER_SK}#{knowledge_id % COUNTER_SHARDS:02d}"


def count_listed(tenant_id: int, scope: str) -> int:
    """The scope's listed entries: the sum of its counter shards (one strongly consistent
    Query of at most COUNTER_SHARDS + 1 small items)."""
    request = {
        "TableName": _table(),
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :count)",
        "ExpressionAttributeValues": {
            ":pk": {"S": listing_pk(tenant_id, scope)},
            ":count": {"S": _COUNTER_SK},
        },
        "ProjectionExpression": "#c",
        "ExpressionAttributeNames": {"#c": listing.COUNT},
        "ConsistentRead": True,
    }
    total = sum(
        int(item.get(listing.COUNT, {}).get("N", "0"))
        for page in query_pages(request, "knowledge counters")
        for item in page
    )
    # Summed before clamping: a shard may be negative when its entries were counted in the
    # unsharded item; only the total has to be a count.
    return max(0, total)


def list_entries(
    tenant_id: int,
    provider: str | None,
    knowledge_type: KnowledgeType | None,
    *,
    page: PageRequest,
) -> tuple[list["ExternalKnowledgeDto"], int]:
    """One page of listed entries sorted by id (as DTOs), and the total for the filters."""
    entries, total = list_entry_records(tenant_id, provider, knowledge_type, page=page)
    return [summary_dto(entry) for entry in entries], total


def list_entry_records(
    tenant_id: int,
    provider: str | None,
    knowledge_type: KnowledgeType | None,
    *,
    page: PageRequest,
) -> tuple[list[KnowledgeEntry], int]:
    """One page of listed entries sorted by id (summary fields only), and the total."""
    scope = listing_scope(provider, knowledge_type)
    total = count_listed(tenant_id, scope)
    if page.offset >= total:
        return [], total
    ids = listing.page_of_pointers(
        _table(),
        listing_pk(tenant_id, scope),
        _POINTERS,
        forward=True,
        page=page,
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
