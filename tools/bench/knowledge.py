"""The knowledge list request in-process under moto: items read per request, warm latency.

Both sections call the knowledge-list function's own handler with an API Gateway REST proxy
event, as Lambda would after the authorizer, against tables created from template.yaml.
"""

import io
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import redirect_stdout
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any, cast

import botocore.session
from botocore import UNSIGNED
from botocore.config import Config
from moto import mock_aws

from local.moto_queries import indexed_queries

# None of these reads the environment at import; the function module itself (which does,
# through Powertools) is imported later, by list_handler, after the environment is set.
from psap.clock import format_timestamp
from psap.config import knowledge_table
from psap.knowledge import store
from psap.knowledge.models import KnowledgeType
from psap.knowledge.store import NewEntry, create_entry
from psap.storage.attributes import to_item
from psap.storage.dynamodb import dynamodb
from tools.bench.core import Options, Progress, Row, Section, median, milliseconds, ratio_row
from tools.bench.functions import LambdaContext, function_module
from tools.bench.moto import (
    ReadCounter,
    Reads,
    bulk_write,
    create_tables,
    use_in_process_environment,
)
from tools.bench.template import TableSpec, table_specs

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


PAGE_SIZE = 50
FULL_ITEMS_SLACK = 2  # target: full items <= size + 2
WARM_LIMIT = 1.5  # handler / bare moto calls
SMALL_TENANT, SMALL_ENTRIES = 1, 100
LARGE_TENANT, LARGE_ENTRIES = 2, 100_000
# Ids of the bulk-loaded tenant, far above the sequence create_entry draws from.
LARGE_FIRST_ID = 10_000_001
PROVIDERS = ("county-ems", "state-fire", "metro-police", "poison-control", "regional-psap")
CREATED = datetime(2026, 1, 15, 8, 30, tzinfo=UTC)


def thousands(number: int) -> str:
    return f"{number:,}".replace(",", " ")


type ListHandler = Callable[[dict[str, Any], Any], dict[str, Any]]


CONTEXT = LambdaContext("KnowledgeListFunction")


def list_event(tenant_id: int, page: int, size: int) -> dict[str, Any]:
    """A REST (v1) proxy event as API Gateway sends it after the partner authorizer."""
    query = {"size": str(size)} | ({"page": str(page)} if page else {})
    return {
        "resource": "/api/v1/external/knowledge",
        "path": "/api/v1/external/knowledge",
        "httpMethod": "GET",
        "headers": {},
        "multiValueHeaders": {},
        "queryStringParameters": query,
        "multiValueQueryStringParameters": {name: [value] for name, value in query.items()},
        "pathParameters": None,
        "body": None,
        "isBase64Encoded": False,
        "requestContext": {
            "requestId": "bench",
            "authorizer": {
                "tenantId": str(tenant_id),
                "credentialId": "bench",
                "permissions": "VIEW_KNOWLEDGE",
            },
        },
    }


class _Discard(io.TextIOBase):
    """Swallows what the handler prints: Powertools Metrics writes one EMF line per call."""

    def write(self, text: str) -> int:
        return len(text)


@cache
def list_handler() -> ListHandler:
    """The function's module, imported by file path once, as a warm container holds it. The
    environment must be set first (prepare()): Powertools reads it at import."""
    handler: ListHandler = function_module("knowledge_list", "bench_knowledge_list_app").handler
    return handler


@dataclass(frozen=True)
class Case:
    tenant_id: int
    entries: int
    page: int

    @property
    def label(self) -> str:
        where = "page 0" if self.page == 0 else f"page {self.page} (last full)"
        return f"{thousands(self.entries)} entries, {where}"


@dataclass(frozen=True)
class Outcome:
    reads: Reads
    ids: tuple[int, ...]
    total: int

    def same_as(self, other: "Outcome") -> bool:
        mine, theirs = self.reads, other.reads
        return (
            (mine.pointer_queries, mine.full, mine.counter, mine.other, mine.calls)
            == (theirs.pointer_queries, theirs.full, theirs.counter, theirs.other, theirs.calls)
            and self.ids == other.ids
            and self.total == other.total
        )


def call_list(handler: ListHandler, tenant_id: int, page: int, *, size: int) -> dict[str, Any]:
    with redirect_stdout(_Discard()):
        response = handler(list_event(tenant_id, page, size), CONTEXT)
    if response.get("statusCode") != 200:
        raise RuntimeError(f"list request failed: {response}")
    body: dict[str, Any] = json.loads(response["body"])
    return body


def run_case(handler: ListHandler, counter: ReadCounter, case: Case) -> Outcome:
    counter.reset()
    body = call_list(handler, case.tenant_id, case.page, size=PAGE_SIZE)
    reads = counter.reset()
    return Outcome(reads, tuple(int(item["id"]) for item in body["items"]), body["totalItems"])


# ---------------------------------------------------------------- data


def entry_shape(number: int) -> tuple[str, KnowledgeType]:
    types = list(KnowledgeType)
    return PROVIDERS[number % len(PROVIDERS)], types[number % len(types)]


def create_small_tenant(tenant_id: int, count: int) -> None:
    """Through the store's own create path: one transaction per entry, as the API does."""
    for number in range(count):
        provider, knowledge_type = entry_shape(number)
        create_entry(
            tenant_id,
            NewEntry(
                name=f"Guide card {number}",
                provider=provider,
                knowledge_type=knowledge_type,
                description="Benchmark entry",
                external_id=f"bench-{number}",
            ),
            CREATED,
        )


def bulk_items(tenant_id: int, count: int, first_id: int) -> Iterator[dict[str, Any]]:
    """The items create_entry would leave behind for `count` entries, keyed by the store's
    own functions: entry_key for the entry, listing_writes (entry_scopes + listing_pk + the
    pointer format) for the pointers, and its counter updates summed into one item per
    scope. A change of that layout fails here instead of silently measuring another one."""
    stamp = format_timestamp(CREATED)
    counters: Counter[tuple[str, str]] = Counter()
    for number in range(count):
        knowledge_id = first_id + number
        provider, knowledge_type = entry_shape(number)
        yield {
            **store.entry_key(tenant_id, knowledge_id),
            **to_item(
                {
                    "id": knowledge_id,
                    "tenantId": tenant_id,
                    "name": f"Guide card {knowledge_id}",
                    "description": "Benchmark entry",
                    "source": "API_IMPORT",
                    "provider": provider,
                    "knowledgeType": knowledge_type.value,
                    "createdAt": stamp,
                    "updatedAt": stamp,
                    "latestVersion": 0,
                    "deleted": False,
                }
            ),
        }
        pointers = 0
        for write in store.listing_writes(
            tenant_id, knowledge_id, provider, knowledge_type=knowledge_type, listed=True
        ):
            if "Put" in write:
                pointers += 1
                yield write["Put"]["Item"]
            else:
                counters[_counter_increment(write)] += 1
        if pointers != len(store.entry_scopes(provider, knowledge_type)):
            raise RuntimeError("listing_writes no longer writes one pointer per scope")
    # One unsharded `#COUNT` item per scope: a read sums it with the (absent) shards.
    for (pk, attribute), total in sorted(counters.items()):
        yield {"pk": {"S": pk}, "sk": {"S": store._COUNTER_SK}, attribute: {"N": str(total)}}


def _counter_increment(write: dict[str, Any]) -> tuple[str, str]:
    """(partition, attribute) of a counter `ADD #c :one` update, or an error if it is not."""
    update = write.get("Update", {})
    parts = str(update.get("UpdateExpression", "")).split()
    key = update.get("Key", {})
    values = update.get("ExpressionAttributeValues", {})
    if (
        len(parts) != 3
        or parts[0] != "ADD"
        or not key.get("sk", {}).get("S", "").startswith(store._COUNTER_SK)
        or values.get(parts[2], {}).get("N") != "1"
    ):
        raise RuntimeError(f"unexpected listing write, update tools/bench/knowledge.py: {write}")
    attribute = update.get("ExpressionAttributeNames", {}).get(parts[1], parts[1])
    return str(key["pk"]["S"]), str(attribute)


def load_large_tenant(table: str, tenant_id: int, count: int, *, progress: Progress) -> None:
    started = time.perf_counter()
    step = max(1, count * 5 // 10)
    next_report = step

    def report(written: int) -> None:
        nonlocal next_report
        if written >= next_report:
            next_report += step
            progress(
                f"  loaded {thousands(written)} items (~{thousands(written // 5)} entries) "
                f"in {time.perf_counter() - started:.0f} s"
            )

    items = bulk_items(tenant_id, count, LARGE_FIRST_ID)
    written = bulk_write(loader_client(), table, items, on_progress=report)
    seconds = time.perf_counter() - started
    progress(f"  {thousands(written)} items written with BatchWriteItem in {seconds:.0f} s")


def loader_client() -> "DynamoDBClient":
    """A client of its own for loading, so the read counter never sees the writes. Half a
    million generated items make per-call work add up: it skips client-side validation (moto
    validates each item as DynamoDB would) and request signing (moto ignores signatures),
    which together take about a quarter of the load time."""
    client = botocore.session.get_session().create_client(
        "dynamodb", config=Config(parameter_validation=False, signature_version=UNSIGNED)
    )
    return cast("DynamoDBClient", client)


def prepare(progress: Progress) -> tuple[list[TableSpec], ListHandler]:
    """The template's tables, the section environment, then the function (in that order)."""
    specs, reader = table_specs()
    use_in_process_environment(specs)
    progress(f"tables from template.yaml, read by {reader}")
    return specs, list_handler()


def fresh_store(specs: list[TableSpec]) -> tuple["DynamoDBClient", str]:
    """The function's own (cached) client, recreated inside the current mock, and tables."""
    dynamodb.cache_clear()
    client = dynamodb()
    create_tables(client, specs)
    return client, knowledge_table()


# ---------------------------------------------------------------- section: items read


def reads_table(results: list[tuple[Case, Outcome]]) -> None:
    headers = ("case", "returned", "full", "counter", "keys-only", "keys-only RCU", "calls")
    lines = [headers]
    for case, outcome in results:
        reads = outcome.reads
        lines.append(
            (
                case.label,
                str(len(outcome.ids)),
                str(reads.full),
                str(reads.counter),
                str(reads.keys_only),
                str(reads.keys_only_rcu),
                reads.call_summary(),
            )
        )
    widths = [max(len(line[column]) for line in lines) for column in range(len(headers))]
    for line in lines:
        print(
            "    "
            + "  ".join(
                text.ljust(width) if column in (0, 6) else text.rjust(width)
                for column, (text, width) in enumerate(zip(line, widths, strict=True))
            ).rstrip()
        )


def items_read(options: Options) -> list[Row]:
    progress = Progress("items-read")
    specs, handler = prepare(progress)
    small, large = (
        [Case(tenant, entries, 0), Case(tenant, entries, entries // PAGE_SIZE - 1)]
        for tenant, entries in ((SMALL_TENANT, SMALL_ENTRIES), (LARGE_TENANT, LARGE_ENTRIES))
    )
    scope = store.listing_scope(None, None)
    progress(
        f"page size {PAGE_SIZE}, no filters: every request reads listing scope {scope!r} "
        f"(e.g. {store.listing_pk(LARGE_TENANT, scope)})"
    )
    with mock_aws():
        client, table = fresh_store(specs)
        started = time.perf_counter()
        create_small_tenant(SMALL_TENANT, SMALL_ENTRIES)
        progress(
            f"tenant {SMALL_TENANT}: {SMALL_ENTRIES} entries created through "
            f"psap.knowledge.store.create_entry in {time.perf_counter() - started:.1f} s"
        )
        with ReadCounter(client) as counter:
            plain = [(case, run_case(handler, counter, case)) for case in small]
            progress(
                f"tenant {LARGE_TENANT}: {thousands(LARGE_ENTRIES)} entries bulk-loaded with "
                "BatchWriteItem (store key functions, same layout; create_entry one "
                "transaction at a time would take too long)"
            )
            load_large_tenant(table, LARGE_TENANT, LARGE_ENTRIES, progress=progress)
            if options.index_moto_queries:
                with indexed_queries():
                    indexed = [(case, run_case(handler, counter, case)) for case in small]
                    progress(
                        "reading tenant 2 with the moto Query index on (moto sorts the whole "
                        "table on every Query; the index hands it only the keys it will read; "
                        "answers cross-checked on tenant 1 below)"
                    )
                    results = [(case, run_case(handler, counter, case)) for case in large]
            else:
                indexed = plain
                progress("plain moto (no Query index): this takes a long time")
                results = [(case, run_case(handler, counter, case)) for case in large]
    results = plain + results
    print("    items read per list request (full = entries; keys-only = listing pointers):")
    reads_table(results)
    rows = [
        Row(f"tenant {SMALL_TENANT} ({SMALL_ENTRIES} entries) loaded through", "create_entry"),
        Row(
            f"tenant {LARGE_TENANT} ({thousands(LARGE_ENTRIES)} entries) loaded through",
            "BatchWriteItem",
        ),
    ]
    for case, outcome in results:
        reads = outcome.reads
        limit = PAGE_SIZE + FULL_ITEMS_SLACK
        rows.append(
            Row(
                f"{case.label}: full items read",
                str(reads.full),
                f"<= {limit}",
                reads.full <= limit,
            )
        )
        rows.append(
            Row(
                f"{case.label}: keys-only + counter items ({reads.call_summary()})",
                f"{reads.keys_only} + {reads.counter}",
            )
        )
        if outcome.reads.other:
            rows.append(Row(f"{case.label}: other Query items (unexpected)", str(reads.other)))
    late_case, late = results[-1]
    skip = late.reads.pointer_queries[:-1]  # the store skips first, then reads the page
    rows.append(
        Row(
            f"{late_case.label}: keys-only skip cost (pointers, Queries, ~RCU consistent)",
            f"{thousands(sum(scanned for scanned, _ in skip))} keys, {len(skip)} Q, "
            f"{sum(units for _, units in skip)} RCU",
        )
    )
    if options.index_moto_queries:
        same = all(a.same_as(b) for (_, a), (_, b) in zip(plain, indexed, strict=True))
        rows.append(
            Row(
                "moto Query index gives plain moto's answers (100-entry tenant)",
                "identical" if same else "DIFFERENT",
                "identical",
                same,
            )
        )
    return rows


# ---------------------------------------------------------------- section: warm latency


def bare_list(client: "DynamoDBClient", table: str, tenant_id: int, *, size: int) -> int:
    """The calls the list request makes, made directly: counter, pointer page, batch read."""
    pk = store.listing_pk(tenant_id, store.listing_scope(None, None))
    client.query(
        TableName=table,
        KeyConditionExpression="pk = :pk AND begins_with(sk, :count)",
        ExpressionAttributeValues={":pk": {"S": pk}, ":count": {"S": store._COUNTER_SK}},
        ConsistentRead=True,
    )
    answer = client.query(
        TableName=table,
        KeyConditionExpression="pk = :pk AND sk >= :first",
        ExpressionAttributeValues={":pk": {"S": pk}, ":first": {"S": store._FIRST_POINTER_SK}},
        ConsistentRead=True,
        Limit=size,
    )
    keys = [store.entry_key(tenant_id, int(item["sk"]["S"])) for item in answer["Items"]]
    found = client.batch_get_item(
        RequestItems={
            table: {
                "Keys": keys,
                "ProjectionExpression": ", ".join(store._SUMMARY_ATTRIBUTES),
                "ExpressionAttributeNames": store._SUMMARY_NAMES,
            }
        }
    )
    return len(found["Responses"][table])


def warm_latency(options: Options) -> list[Row]:
    progress = Progress("warm-latency")
    progress("POWERTOOLS_LOG_LEVEL=WARNING and tracing disabled, so logging does not dominate")
    specs, handler = prepare(progress)
    with mock_aws():
        # A fresh table holding only this tenant: moto's Query cost grows with the whole
        # table, and this comparison is about what the handler adds, not about moto.
        client, table = fresh_store(specs)
        create_small_tenant(SMALL_TENANT, SMALL_ENTRIES)

        def through_handler() -> None:
            call_list(handler, SMALL_TENANT, 0, size=PAGE_SIZE)

        def bare() -> None:
            bare_list(client, table, SMALL_TENANT, size=PAGE_SIZE)

        with ReadCounter(client) as counter:
            through_handler()
            handler_calls = counter.reset().calls
            bare()
            bare_calls = counter.reset().calls
        for _ in range(10):  # warm-up: caches, lazy imports, first-call paths
            through_handler()
            bare()
        block = 10
        timings: dict[str, list[float]] = {"handler": [], "bare": []}
        # Alternating blocks, so drift on a shared machine affects both sides alike.
        for done in range(0, options.warm_calls, block):
            for name, call in (("handler", through_handler), ("bare", bare)):
                for _ in range(block):
                    started = time.perf_counter()
                    call()
                    timings[name].append(time.perf_counter() - started)
            if (done + block) % 100 == 0:
                progress(f"{done + block}/{options.warm_calls} timed calls per side")
    handler_median = median(timings["handler"])
    bare_median = median(timings["bare"])
    same_calls = handler_calls == bare_calls
    calls = " + ".join(f"{count} {name}" for name, count in sorted(handler_calls.items()))
    return [
        Row(
            "calls per request: handler vs bare (must match)",
            calls if same_calls else f"{dict(handler_calls)} vs {dict(bare_calls)}",
            "same",
            same_calls,
        ),
        Row(
            f"handler, 100 entries, page 0, size {PAGE_SIZE} (median of {len(timings['handler'])})",
            milliseconds(handler_median),
        ),
        Row(
            f"bare moto calls, same requests (median of {len(timings['bare'])})",
            milliseconds(bare_median),
        ),
        # moto's own work (parsing, BatchGetItem serialization) is most of both figures, so
        # the difference is printed too: it is what the handler adds over its calls.
        Row(
            "handler minus bare (difference of medians)", milliseconds(handler_median - bare_median)
        ),
        ratio_row("handler / bare moto calls", handler_median, bare_median, limit=WARM_LIMIT),
    ]


ITEMS_READ = Section("items-read", "DynamoDB items read per list request (moto)", items_read)
WARM_LATENCY = Section("warm-latency", "Warm latency of a list request (in-process)", warm_latency)
