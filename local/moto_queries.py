"""A table Query answered in O(page) by moto, with the answer moto would give.

moto 5 answers every Query by sorting all items of the table, filtering the partition and
sorting it again: O(table) per call, where DynamoDB reads only the page. On the local stack
that made each request slower as the tables grew (a knowledge create queries its tenant's
partitions), and a bench of a 100 000-entry tenant spent seconds per Query.

While this is installed, a table Query is handed to moto's own Query with a view of the table
holding only the items moto would look at: the partition's items after ExclusiveStartKey, in
key order, up to the one after `Limit` items matched the key condition (matched with moto's
own compare); in reverse order (ScanIndexForward false) the same from the partition's end
backwards. moto then pages, counts (ScannedCount), projects and serializes exactly as
always (without a Limit the view is the rest of the partition: still not the table).
Index queries, legacy filters and unknown arguments go to moto untouched.

The view is swapped into the table for the call, which is safe only while no other request
can read the table: the installed query takes this path only inside a request the embedded
AWS serializes (`one_request_at_a_time`, entered by local.aws.serialize_dynamodb_requests),
and plain moto's path otherwise (a test's in-process moto with threads of its own, in the same
process). An in-process bench, single-threaded, uses `indexed_queries`.
`tests/unit/local/test_local_moto_queries.py` holds the answers equal to plain moto's on
tables and queries Hypothesis generates.
"""

import bisect
import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import Table

_PLAIN_QUERY = Table.query
# Set on the thread that handles a serialized DynamoDB request, for its duration.
_serialized = threading.local()


@contextmanager
def one_request_at_a_time() -> Iterator[None]:
    """Entered by the embedded AWS while it holds its one-request-at-a-time lock."""
    _serialized.active = True
    try:
        yield
    finally:
        _serialized.active = False


def _indexed_query(
    sorted_keys: dict[tuple[int, Any], list[Any]] | None, serialized_only: bool
) -> Any:
    """moto's Table.query with the view above. `sorted_keys` keeps each partition's sorted keys
    between calls (the bench's huge read-only tenants); None sorts the partition every call.
    `serialized_only`: the view only inside `one_request_at_a_time`."""

    # moto's Table.query, argument for argument: moto calls it positionally.
    def query(  # noqa: PLR0913, PLR0917
        self: Any,
        hash_key: Any,
        range_comparison: str | None,
        range_objs: list[Any],
        limit: int,  # moto's annotation; None when the request has no Limit
        exclusive_start_key: dict[str, Any],  # moto's annotation; None on a first page
        scan_index_forward: bool,
        projection_expressions: Any,
        index_name: str | None = None,
        consistent_read: bool = False,
        filter_expression: Any = None,
        **rest: Any,
    ) -> Any:
        def ask_moto() -> Any:
            return _PLAIN_QUERY(
                self,
                hash_key,
                range_comparison,
                range_objs,
                limit,
                exclusive_start_key,
                scan_index_forward,
                projection_expressions,
                index_name,
                consistent_read,
                filter_expression,
                **rest,
            )

        range_conditions = rest.get("range_key_conditions") or []
        simple = (
            (not serialized_only or getattr(_serialized, "active", False))
            and index_name is None
            and hash_key is not None
            and self.range_key_attr
            and (limit is None or isinstance(limit, int))  # None: no Limit, the rest of it
            and set(rest) <= {"hash_key_conditions", "range_key_conditions"}
            and all(condition[0] == self.range_key_attr for condition in range_conditions)
            and len(range_conditions) <= 1
            and (not exclusive_start_key or self.range_key_attr in exclusive_start_key)
        )
        if not simple:
            return ask_moto()
        partition = self.items.get(hash_key) or {}
        keys = None if sorted_keys is None else sorted_keys.get((id(self), hash_key))
        if keys is None or len(keys) != len(partition):
            keys = sorted(partition)
            if sorted_keys is not None:
                sorted_keys[(id(self), hash_key)] = keys
        if scan_index_forward:
            first = 0
            if exclusive_start_key:
                start = DynamoType(exclusive_start_key[self.range_key_attr])
                first = bisect.bisect_right(keys, start)
            order: Iterator[Any] = itertools.islice(keys, first, None)
        else:
            # Newest first (a chain's head, a latest-N page): the view is taken from the end,
            # so reading the last item of a partition costs one item, as on DynamoDB.
            last = len(keys)
            if exclusive_start_key:
                start = DynamoType(exclusive_start_key[self.range_key_attr])
                last = bisect.bisect_left(keys, start)
            order = (keys[position] for position in range(last - 1, -1, -1))
        window: dict[Any, Any] = {}
        matched = 0
        for key in order:
            item = partition[key]
            window[key] = item
            if range_comparison is None or item.range_key.compare(range_comparison, range_objs):
                matched += 1
            if limit is not None and matched > limit:
                break
        everything = self.items
        self.items = {hash_key: window} if window else {}
        try:
            return ask_moto()
        finally:
            self.items = everything

    return query


def install() -> None:
    """For the embedded AWS, for good: partitions are sorted per call (writes come from many
    paths, transactions and their rollbacks included, so no sorted keys are kept)."""
    Table.query = _indexed_query(None, serialized_only=True)  # type: ignore[method-assign]


@contextmanager
def indexed_queries() -> Iterator[None]:
    """For an in-process bench, for its duration: sorted keys are kept per partition and
    dropped on any put or delete (its bulk-loaded tenants are read, not written)."""
    original_query, original_put, original_delete = Table.query, Table.put_item, Table.delete_item
    sorted_keys: dict[tuple[int, Any], list[Any]] = {}

    def put_item(self: Any, *args: Any, **kwargs: Any) -> Any:
        sorted_keys.clear()
        return original_put(self, *args, **kwargs)

    def delete_item(self: Any, *args: Any, **kwargs: Any) -> Any:
        sorted_keys.clear()
        return original_delete(self, *args, **kwargs)

    # Patched on the class for the duration only: moto creates its Table objects itself.
    Table.query = _indexed_query(sorted_keys, serialized_only=False)  # type: ignore[method-assign]
    Table.put_item = put_item  # type: ignore[method-assign]
    Table.delete_item = delete_item  # type: ignore[method-assign]
    try:
        yield
    finally:
        Table.query = original_query  # type: ignore[method-assign]
        Table.put_item = original_put  # type: ignore[method-assign]
        Table.delete_item = original_delete  # type: ignore[method-assign]


def plain_query() -> Any:
    """moto's own Table.query (tests compare against it)."""
    return _PLAIN_QUERY
