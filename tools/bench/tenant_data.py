"""The QA evaluations list in-process under moto: items read per page, warm latency.

The evaluations-list function's own handler is called with an API Gateway REST proxy event,
as Lambda would after the authorizer, against tables created from template.yaml. Two users
of one tenant: one with 20 evaluations, one with 5 000 (full evaluations from the demo
generator: results, protocol results, transcripts). Figures:

- items read per page of 20: full items (the user, the counter and the evaluations, by
  BatchGetItem) and the small items beside them (keys-only listing pointers walked to reach
  a late page; calendar counter items for a date filter). Target: the full items equal for
  both users and <= size + 2.
- warm latency of one page of 20 full evaluations through the handler (median and p95):
  two BatchGetItems, one pointer Query, decompression, validation and serialization; and
  the same three moto calls made bare, so that what the function itself adds is visible
  (moto's emulation is most of the figure; DynamoDB answers these calls in milliseconds).
"""

import io
import itertools
import json
import os
import time
from collections.abc import Callable
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from moto import mock_aws

from local.demo_tenant_data import evaluations_for
from psap.config import tenant_data_table
from psap.observability import metrics
from psap.qa import store as qa_store
from psap.qa.periods import ALL
from psap.qa.store import bulk_load_evaluations
from psap.storage.dynamodb import dynamodb
from psap.storage.listing import id_of
from psap.storage.listing import key as listing_key
from psap.users.models import User
from psap.users.store import bulk_load_users, user_key
from tools.bench.core import Options, Progress, Row, Section, median, milliseconds
from tools.bench.functions import LambdaContext, function_module, partner_request_context
from tools.bench.moto import create_tables, use_in_process_environment
from tools.bench.template import table_specs

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

TENANT = 1
FEW_USER, FEW = 101, 20
MANY_USER, MANY = 102, 5000
PAGE_SIZE = 20
SLACK = 2  # the user and the counter
LOAD_BATCH = 500  # evaluations generated and bulk-written at a time

type Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


CONTEXT = LambdaContext("EvaluationsListFunction")


@cache
def evaluations_handler() -> Handler:
    """The function's module, imported once by file path as a warm container holds it (after
    the environment is set: Powertools reads it at import)."""
    handler: Handler = function_module("evaluations_list", "bench_evaluations_list_app").handler
    return handler


def page_event(user_id: int, query: dict[str, str]) -> dict[str, Any]:
    resource = "/api/v1/external/qa/user/{userId}/evaluations"
    return {
        "resource": resource,
        "path": resource.replace("{userId}", str(user_id)),
        "httpMethod": "GET",
        "headers": {},
        "multiValueHeaders": {},
        "queryStringParameters": query,
        "multiValueQueryStringParameters": {name: [value] for name, value in query.items()},
        "pathParameters": {"userId": str(user_id)},
        "body": None,
        "isBase64Encoded": False,
        "requestContext": partner_request_context(TENANT, "VIEW_QA"),
    }


def call(handler: Handler, user_id: int, query: dict[str, str]) -> dict[str, Any]:
    with redirect_stdout(io.StringIO()):  # Powertools Metrics prints one EMF line per call
        answer = handler(page_event(user_id, query), CONTEXT)
    if answer["statusCode"] != 200:
        raise RuntimeError(f"evaluations list answered {answer['statusCode']}: {answer['body']}")
    body: dict[str, Any] = json.loads(answer["body"])
    return body


@dataclass
class ItemsRead:
    """What one request read, from the responses, by kind of item."""

    full: int = 0  # BatchGetItem / GetItem items: user, counter, evaluations
    pointers: int = 0  # keys-only listing pointers (Query)
    counters: int = 0  # calendar counter items (Query, date filters)
    chunks: int = 0  # pieces of documents too large for one item (Query)
    calls: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        return " + ".join(f"{count} {name}" for name, count in sorted(self.calls.items()))


class Counting:
    def __init__(self, client: "DynamoDBClient") -> None:
        self.client = client
        self.read = ItemsRead()

    def __enter__(self) -> "Counting":
        self.client.meta.events.register("before-parameter-build.dynamodb.*", self._note)
        self.client.meta.events.register("after-call.dynamodb.*", self._count)
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.meta.events.unregister("before-parameter-build.dynamodb.*", self._note)
        self.client.meta.events.unregister("after-call.dynamodb.*", self._count)

    def take(self) -> ItemsRead:
        taken, self.read = self.read, ItemsRead()
        return taken

    def _note(self, params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        values = (params.get("ExpressionAttributeValues") or {}).get(":pk", {})
        context["bench_pk"] = str(values.get("S", ""))

    def _count(self, parsed: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
        name = str(model.name)
        self.read.calls[name] = self.read.calls.get(name, 0) + 1
        if name == "BatchGetItem":
            self.read.full += sum(len(items) for items in parsed.get("Responses", {}).values())
        elif name == "GetItem":
            self.read.full += 1 if "Item" in parsed else 0
        elif name == "Query":
            partition = context.get("bench_pk", "")
            found = len(parsed.get("Items", []))
            if "#EVC#" in partition:
                self.read.counters += found
            elif "#EVAL#" in partition:
                self.read.chunks += found
            else:
                self.read.pointers += found


def load(progress: Progress) -> None:
    users = [
        User(id=user_id, first_name="Bench", last_name=f"User {user_id}", email=f"{user_id}@x.org")
        for user_id in (FEW_USER, MANY_USER)
    ]
    bulk_load_users(TENANT, users)
    bulk_load_evaluations(TENANT, list(evaluations_for(FEW_USER, FEW, 1)))
    started = time.perf_counter()
    generated = evaluations_for(MANY_USER, MANY, 100_000)
    written = 0
    while batch := list(itertools.islice(generated, LOAD_BATCH)):
        bulk_load_evaluations(TENANT, batch)
        written += len(batch)
        if written % 1000 == 0:
            progress(f"  {written} evaluations of user {MANY_USER} generated and loaded")
    progress(
        f"users {FEW_USER} ({FEW}) and {MANY_USER} ({MANY}) loaded with the store's bulk "
        f"loader in {time.perf_counter() - started:.0f} s"
    )


@dataclass(frozen=True)
class Case:
    label: str
    user_id: int
    query: dict[str, str]


CASES = (
    Case(f"{FEW} evaluations, page 0", FEW_USER, {}),
    Case(f"{MANY} evaluations, page 0", MANY_USER, {}),
    Case(f"{MANY} evaluations, page 249 (last)", MANY_USER, {"page": str(MANY // PAGE_SIZE - 1)}),
    Case(
        f"{MANY} evaluations, from/to over 5 weeks",
        MANY_USER,
        {"from": "2025-11-20", "to": "2025-12-27"},
    ),
    Case(f"{MANY} evaluations, status=COMPLETED", MANY_USER, {"status": "COMPLETED"}),
)


def run(options: Options) -> list[Row]:
    progress = Progress("evaluations")
    specs, reader = table_specs()
    use_in_process_environment(specs)
    # Created at import, perhaps before this environment: it would lack its namespace.
    metrics.namespace = os.environ["POWERTOOLS_METRICS_NAMESPACE"]
    handler = evaluations_handler()
    rows: list[Row] = []
    with mock_aws():
        dynamodb.cache_clear()
        client = dynamodb()
        create_tables(client, specs)
        progress(f"tables from template.yaml ({reader})")
        load(progress)
        results = []
        with Counting(client) as counting:
            for case in CASES:
                body = call(handler, case.user_id, {"size": str(PAGE_SIZE), **case.query})
                results.append((case, body, counting.take()))
            warm = _warm_latency(handler, client, options, progress=progress)
    limit = PAGE_SIZE + SLACK
    for case, body, read in results:
        rows.append(
            Row(
                f"{case.label}: full items read ({body['numberOfElements']} returned)",
                str(read.full),
                f"<= {limit}",
                read.full <= limit,
            )
        )
        rows.append(
            Row(
                f"{case.label}: keys-only pointers + counter items ({read.summary()})",
                f"{read.pointers} + {read.counters}",
            )
        )
    first, second = results[0][2].full, results[1][2].full
    rows.append(
        Row(
            f"full items per page: {FEW} vs {MANY} evaluations",
            f"{first} vs {second}",
            "equal",
            first == second,
        )
    )
    rows.extend(warm)
    return rows


def bare_page(client: "DynamoDBClient", user_id: int) -> int:
    """The calls the request makes, made directly: user and counter, pointers, evaluations."""
    table = tenant_data_table()
    scope = qa_store.scope_name(None, None)
    client.batch_get_item(
        RequestItems={
            table: {
                "Keys": [
                    user_key(TENANT, user_id),
                    listing_key(qa_store.counter_pk(TENANT, user_id, scope), ALL),
                ]
            }
        }
    )
    pointers = client.query(
        TableName=table,
        KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
        ExpressionAttributeValues={
            ":pk": {"S": qa_store.pointer_pk(TENANT, user_id, scope)},
            ":low": {"S": "0"},
            ":high": {"S": "~"},
        },
        ConsistentRead=True,
        ScanIndexForward=False,
        Limit=PAGE_SIZE,
    )
    keys = [qa_store.evaluation_key(TENANT, id_of(item["sk"]["S"])) for item in pointers["Items"]]
    found = client.batch_get_item(RequestItems={table: {"Keys": keys}})
    return len(found["Responses"][table])


def _warm_latency(
    handler: Handler, client: "DynamoDBClient", options: Options, *, progress: Progress
) -> list[Row]:
    query = {"size": str(PAGE_SIZE)}
    for _ in range(5):  # warm-up: caches, lazy imports, first-call paths
        call(handler, MANY_USER, query)
        bare_page(client, MANY_USER)
    rounds = max(2, options.warm_calls // 40)
    timings: dict[str, list[float]] = {"handler": [], "bare": []}
    body: dict[str, Any] = {}
    # Alternating blocks of 10, so drift on a shared machine affects both sides alike.
    for _ in range(rounds):
        for _ in range(10):
            started = time.perf_counter()
            body = call(handler, MANY_USER, query)
            timings["handler"].append(time.perf_counter() - started)
        for _ in range(10):
            started = time.perf_counter()
            bare_page(client, MANY_USER)
            timings["bare"].append(time.perf_counter() - started)
    handler_times = sorted(timings["handler"])
    handler_median, bare_median = median(handler_times), median(timings["bare"])
    size = len(json.dumps(body).encode())
    progress(f"{len(handler_times)} timed page reads per side")
    return [
        Row(
            f"warm page of {PAGE_SIZE} full evaluations, handler (median of {len(handler_times)})",
            milliseconds(handler_median),
        ),
        Row("  same, p95", milliseconds(handler_times[int(len(handler_times) * 0.95) - 1])),
        Row("  the same moto calls made bare (median)", milliseconds(bare_median)),
        # moto's own work is most of the handler's figure; the difference is what the
        # function adds: decompression, validation and JSON serialization of the page.
        Row(
            "  handler minus bare: the function's own work",
            milliseconds(handler_median - bare_median),
        ),
        Row("  response body", f"{size / 1000:.0f} kB"),
    ]


SECTION = Section(
    "evaluations", "QA evaluations list: items read per page, warm latency (moto)", run
)
