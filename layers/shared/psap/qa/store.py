"""QA evaluations in the tenant-data table.

Layout (every key begins with the tenant):

  T#{t}#EVAL#{id}            / EVAL           the evaluation: listing attributes (userId,
                                              createdAt, status, isTraining, deleted), `rev`,
                                              and the compressed document, or `chunks`
  T#{t}#EVAL#{id}            / CHUNK#{n:04d}  pieces of a document too large for one item
  T#{t}#EV#{user}#{scope}    / {createdAt}#{id:019d}
                                              a listing pointer (keys only), by creation time
  T#{t}#EVC#{user}#{scope}   / ALL, Y#yyyy, M#yyyy-mm
                                              counters: all, per year, per month (`count`,
                                              and its days as attributes d01..d31)

A scope is a combination of the filters status and isTraining (ALL, S=.., T=.., S=..|T=..);
a listed (not deleted) evaluation has one pointer and three counter items per scope. Pointers,
counters and chunks change in the same transaction as the evaluation, conditional on the
revision read, so totals stay exact and a write is never partial.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from psap.clock import format_timestamp
from psap.config import tenant_data_table
from psap.errors import InvalidInput
from psap.paging import PageRequest
from psap.qa.models import EvaluationStatus, QaEvaluation
from psap.qa.periods import ALL, counted, covering
from psap.storage.documents import (
    CHUNK_BYTES,
    decode_document,
    encode_document,
    join,
    split,
    with_tenant,
)
from psap.storage.dynamodb import batch_get, read_item, transact_write
from psap.storage.listing import (
    Counter,
    Key,
    KeyRange,
    WritePlan,
    bulk_write,
    counter_changes,
    counter_items,
    counter_value,
    key,
    padded,
    page_of_pointers,
    pointer_changes,
)
from psap.storage.optimistic import optimistic_write, revised_put, revision_of
from psap.storage.ordering import UpsertOutcome
from psap.storage.partitions import PartitionKind, registration, registry_item
from psap.storage.queries import query_pages
from psap.users.store import user_key


def _table() -> str:
    """This store's table, from the settings read at cold start (psap.config)."""
    return tenant_data_table()


EVAL_SK = "EVAL"
_CHUNK_PREFIX = "CHUNK#"
# DynamoDB's 4 MB per transaction, with room for pointers and counters.
MAX_CHUNKS = 10
_WHOLE_LISTING = KeyRange("0", "~")


@dataclass(frozen=True)
class DayRange:
    """Inclusive UTC days; an open end is None."""

    first: date | None = None
    last: date | None = None

    @property
    def is_open(self) -> bool:
        return self.first is None and self.last is None


@dataclass(frozen=True)
class EvaluationFilters:
    status: EvaluationStatus | None = None
    is_training: bool | None = None
    created: DayRange = DayRange()  # the UTC days of createdAt


@dataclass(frozen=True)
class _Listing:
    """What places an evaluation in the listings."""

    user_id: int
    created_at: str
    status: str | None
    is_training: bool


def evaluation_pk(tenant_id: int, evaluation_id: int) -> str:
    return f"T#{tenant_id}#EVAL#{evaluation_id}"


def evaluation_key(tenant_id: int, evaluation_id: int) -> Key:
    return key(evaluation_pk(tenant_id, evaluation_id), EVAL_SK)


def _chunk_key(tenant_id: int, evaluation_id: int, index: int) -> Key:
    return key(evaluation_pk(tenant_id, evaluation_id), f"{_CHUNK_PREFIX}{index:04d}")


def scope_name(status: str | None, is_training: bool | None) -> str:
    parts = []
    if status is not None:
        parts.append(f"S={status}")
    if is_training is not None:
        parts.append("T=" + ("true" if is_training else "false"))
    return "|".join(parts) or "ALL"


def pointer_pk(tenant_id: int, user_id: int, scope: str) -> str:
    return f"T#{tenant_id}#EV#{user_id}#{scope}"


def counter_pk(tenant_id: int, user_id: int, scope: str) -> str:
    return f"T#{tenant_id}#EVC#{user_id}#{scope}"


def _listing(evaluation: QaEvaluation) -> _Listing | None:
    """None for an evaluation that is not listed (deleted)."""
    if evaluation.deleted:
        return None
    if evaluation.user_id is None or evaluation.created_at is None:
        raise InvalidInput("an evaluation needs its userId and createdAt")
    return _Listing(
        user_id=evaluation.user_id,
        created_at=format_timestamp(evaluation.created_at),
        status=evaluation.status.value if evaluation.status else None,
        # An evaluation not marked as training is not training.
        is_training=bool(evaluation.is_training),
    )


def _scopes(listing: _Listing) -> list[str]:
    statuses: list[str | None] = [None] if listing.status is None else [None, listing.status]
    return [
        scope_name(status, training)
        for status in statuses
        for training in (None, listing.is_training)
    ]


def _pointers(tenant_id: int, evaluation_id: int, listing: _Listing | None) -> list[Key]:
    if listing is None:
        return []
    sk = f"{listing.created_at}#{padded(evaluation_id)}"
    return [key(pointer_pk(tenant_id, listing.user_id, scope), sk) for scope in _scopes(listing)]


def _counters(tenant_id: int, listing: _Listing | None) -> list[Counter]:
    if listing is None:
        return []
    day = date.fromisoformat(listing.created_at[:10])
    return [
        Counter(counter_pk(tenant_id, listing.user_id, scope), sk, attribute)
        for scope in _scopes(listing)
        for sk, attribute in counted(day)
    ]


def _listing_of_item(item: dict[str, Any]) -> _Listing | None:
    if item.get("deleted") or "createdAt" not in item:
        return None
    return _Listing(
        user_id=int(item["userId"]),
        created_at=str(item["createdAt"]),
        status=item.get("status"),
        is_training=bool(item.get("isTraining")),
    )


@dataclass(frozen=True)
class _Encoded:
    item: dict[str, Any]
    chunks: list[dict[str, Any]]  # extra chunk items (empty when the document fits)


def listing_partitions(tenant_id: int, item: dict[str, Any]) -> list[str]:
    """Every listing partition (pointers and counters) a stored evaluation is in: what a
    tenant's offboarding purges beside the evaluation's own partition."""
    listing = _listing_of_item(item)
    if listing is None:
        return []
    return sorted(
        {pointer["pk"]["S"] for pointer in _pointers(tenant_id, 0, listing)}
        | {counter.pk for counter in _counters(tenant_id, listing)}
    )


def _encode(tenant_id: int, evaluation: QaEvaluation, revision: int) -> _Encoded:
    blob = encode_document(
        with_tenant(evaluation.model_dump(mode="json", by_alias=True), tenant_id)
    )
    pieces = split(blob)
    if len(pieces) > MAX_CHUNKS:
        raise InvalidInput(
            f"evaluation {evaluation.id} is too large: {len(blob) // 1000} kB compressed, "
            f"the limit is {MAX_CHUNKS * CHUNK_BYTES // 1000} kB"
        )
    listing = _listing(evaluation)
    item: dict[str, Any] = {
        **evaluation_key(tenant_id, evaluation.id),
        "id": {"N": str(evaluation.id)},
        "rev": {"N": str(revision)},
        "deleted": {"BOOL": bool(evaluation.deleted)},
    }
    if evaluation.user_id is not None:
        item["userId"] = {"N": str(evaluation.user_id)}
    if listing is not None:
        item["createdAt"] = {"S": listing.created_at}
        item["isTraining"] = {"BOOL": listing.is_training}
        if listing.status is not None:
            item["status"] = {"S": listing.status}
    if len(pieces) == 1:
        item["doc"] = {"B": pieces[0]}
        return _Encoded(item, [])
    item["chunks"] = {"N": str(len(pieces))}
    chunks = [
        {**_chunk_key(tenant_id, evaluation.id, index), "part": {"B": piece}}
        for index, piece in enumerate(pieces)
    ]
    return _Encoded(item, chunks)


def write_plan(
    tenant_id: int, evaluation_id: int, old: _Listing | None, *, new: _Listing | None
) -> WritePlan:
    plan = WritePlan()
    pointer_changes(
        plan, _pointers(tenant_id, evaluation_id, old), _pointers(tenant_id, evaluation_id, new)
    )
    counter_changes(plan, _counters(tenant_id, old), _counters(tenant_id, new))
    return plan


def _read_item(tenant_id: int, evaluation_id: int) -> dict[str, Any] | None:
    return read_item(
        _table(),
        evaluation_key(tenant_id, evaluation_id),
        "evaluation",
        projection="id, rev, userId, createdAt, #s, isTraining, deleted, chunks",
        names={"#s": "status"},
    )


def put_evaluation(tenant_id: int, evaluation: QaEvaluation) -> UpsertOutcome:
    """Creates or replaces the evaluation with this id (imports) with its chunks, pointers
    and counters, in one transaction conditional on the revision read."""
    new_listing = _listing(evaluation)

    def attempt() -> UpsertOutcome:
        old = _read_item(tenant_id, evaluation.id)
        encoded = _encode(tenant_id, evaluation, revision_of(old) + 1)
        writes: list[dict[str, Any]] = [{"Put": revised_put(_table(), encoded.item, old)}]
        if old is None:
            # A deleted evaluation is in no listing: the registry is how offboarding finds it.
            pk = evaluation_pk(tenant_id, evaluation.id)
            writes.append(registration(_table(), tenant_id, pk, kind=PartitionKind.EVALUATION))
        writes.extend({"Put": {"TableName": _table(), "Item": chunk}} for chunk in encoded.chunks)
        old_chunks = int(old.get("chunks", 0)) if old else 0
        writes.extend(
            {"Delete": {"TableName": _table(), "Key": _chunk_key(tenant_id, evaluation.id, index)}}
            for index in range(len(encoded.chunks), old_chunks)
        )
        old_listing = _listing_of_item(old) if old else None
        plan = write_plan(tenant_id, evaluation.id, old_listing, new=new_listing)
        writes.extend(plan.transaction_items(_table()))
        transact_write(writes)
        return UpsertOutcome.CREATED if old is None else UpsertOutcome.UPDATED

    return optimistic_write(
        f"evaluation {evaluation.id}", attempt, gave_up="too many concurrent writers"
    )


def bulk_load_evaluations(tenant_id: int, evaluations: Sequence[QaEvaluation]) -> None:
    """Loads NEW evaluations fast (BatchWriteItem; each counter once): the same items as
    put_evaluation, for operator loads into an empty tenant (demo data, benchmarks)."""
    plans = []
    for evaluation in evaluations:
        encoded = _encode(tenant_id, evaluation, 1)
        plan = write_plan(tenant_id, evaluation.id, None, new=_listing(evaluation))
        registered = registry_item(
            tenant_id, evaluation_pk(tenant_id, evaluation.id), PartitionKind.EVALUATION
        )
        plan.puts[:0] = [encoded.item, *encoded.chunks, registered]
        plans.append(plan)
    bulk_write(_table(), plans)


def _total(tenant_id: int, user_id: int, scope: str, *, filters: EvaluationFilters) -> int:
    cover = covering(filters.created.first or date.min, filters.created.last or date.max)
    items = counter_items(_table(), counter_pk(tenant_id, user_id, scope), cover.ranges)
    return max(0, cover.total(items))


def _user_and_total(
    tenant_id: int, user_id: int, scope: str, *, filters: EvaluationFilters
) -> tuple[bool, int]:
    """Whether the user exists, and the total: one BatchGetItem of two small items when no
    date filter applies."""
    counter = key(counter_pk(tenant_id, user_id, scope), ALL)
    items = batch_get(
        _table(),
        [user_key(tenant_id, user_id), counter],
        projection="pk, sk, #c",
        names={"#c": "count"},
    )
    found = {(item["pk"], item["sk"]): item for item in items}
    user = user_key(tenant_id, user_id)
    exists = (user["pk"]["S"], user["sk"]["S"]) in found
    if filters.created.is_open:
        return exists, counter_value(found.get((counter["pk"]["S"], counter["sk"]["S"])))
    if not exists:
        return False, 0
    return True, _total(tenant_id, user_id, scope, filters=filters)


def _day_range(filters: EvaluationFilters) -> KeyRange:
    first, last = filters.created.first, filters.created.last
    low = first.isoformat() if first else _WHOLE_LISTING.low
    high = f"{last.isoformat()}T~" if last else _WHOLE_LISTING.high
    return KeyRange(low, high)


def read_evaluations(tenant_id: int, evaluation_ids: Sequence[int]) -> dict[int, QaEvaluation]:
    """The evaluations by id: one BatchGetItem, plus one Query per chunked document."""
    if not evaluation_ids:
        return {}
    items = batch_get(_table(), [evaluation_key(tenant_id, item_id) for item_id in evaluation_ids])
    found: dict[int, QaEvaluation] = {}
    for item in items:
        evaluation_id = int(item["id"])
        blob = (
            bytes(item["doc"])
            if "doc" in item
            else _read_chunks(tenant_id, evaluation_id, int(item["chunks"]))
        )
        found[evaluation_id] = QaEvaluation.model_validate(decode_document(blob))
    return found


def _read_chunks(tenant_id: int, evaluation_id: int, count: int) -> bytes:
    request = {
        "TableName": _table(),
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :chunk)",
        "ExpressionAttributeValues": {
            ":pk": {"S": evaluation_pk(tenant_id, evaluation_id)},
            ":chunk": {"S": _CHUNK_PREFIX},
        },
        "ConsistentRead": True,
    }
    pieces = [
        bytes(item["part"]["B"])
        for page in query_pages(request, "evaluation chunks")
        for item in page
    ]
    # Chunks past `count` are from no write (deleted in the same transaction as shrinking).
    return join(pieces[:count])


def list_evaluations(
    tenant_id: int,
    user_id: int,
    filters: EvaluationFilters,
    *,
    newest_first: bool,
    page: PageRequest,
) -> tuple[list[QaEvaluation], int] | None:
    """One page of the user's listed evaluations and the total for the filters; None when
    the user does not exist in the tenant."""
    scope = scope_name(filters.status.value if filters.status else None, filters.is_training)
    exists, total = _user_and_total(tenant_id, user_id, scope, filters=filters)
    if not exists:
        return None
    if page.offset >= total:
        return [], total
    ids = page_of_pointers(
        _table(),
        pointer_pk(tenant_id, user_id, scope),
        _day_range(filters),
        forward=not newest_first,
        page=page,
    )
    found = read_evaluations(tenant_id, ids)
    # Deleted or moved between the pointer read and the batch read: left out of this page.
    page_items = [found[item_id] for item_id in ids if item_id in found]
    return [item for item in page_items if not item.deleted], total
