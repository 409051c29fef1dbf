"""moto plumbing for the in-process sections: tables from template.yaml, a read counter,
bulk loading. (The index that keeps moto's Query from costing O(table) per call is
local/moto_queries.py: the embedded AWS uses it too.)
"""

import itertools
import math
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from psap.knowledge import store
from tools.bench.template import TableSpec, table_environment

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# The environment of the in-process sections: the deployed function's, with tracing off (as
# locally) and logging at WARNING so that log formatting does not dominate the figures. The
# table variables (AUTH_TABLE=bench-auth, ...) come from the template: tools.bench.template.
IN_PROCESS_ENVIRONMENT = {
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",  # a dummy for the SDKs; moto answers every call
    "POWERTOOLS_SERVICE_NAME": "psap-api",
    "POWERTOOLS_METRICS_NAMESPACE": "Psap",
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_LOG_LEVEL": "WARNING",
    "CREDENTIAL_KIND": "partner",
}


def use_in_process_environment(specs: list[TableSpec]) -> None:
    """Sets the section environment. A configured endpoint or profile is removed: moto only
    intercepts calls aimed at AWS's own endpoints, so AWS_ENDPOINT_URL (the local stack's
    setting) would send the benchmark's calls to a real server."""
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_PROFILE"):
        os.environ.pop(name, None)
    os.environ.update(IN_PROCESS_ENVIRONMENT)
    os.environ.update(table_environment(specs))
    environment_changed()


def use_function_environment(*function_ids: str) -> None:
    """What the template's functions see (Globals plus each one's own variables), for
    sections that call handlers in-process against moto: dummy credentials, no endpoint."""
    from local.template import load_template  # noqa: PLC0415 - sections that need it only

    template = load_template()
    os.environ.update(template.globals_environment)
    os.environ.update(IN_PROCESS_ENVIRONMENT)
    os.environ["POWERTOOLS_METRICS_DISABLED"] = "true"
    for function_id in function_ids:
        os.environ.update(template.functions[function_id].environment)
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_PROFILE"):
        os.environ.pop(name, None)
    environment_changed()


# Clients psap caches per process (a warm container's), by module; made with the settings of
# the moment they are first used.
_CACHED_CLIENTS = {
    "psap.storage.dynamodb": "dynamodb",
    "psap.storage.s3": "s3",
    "psap.storage.sqs": "sqs",
    "psap.webhooks.secrets": "secrets_manager",
}


def environment_changed() -> None:
    """psap reads its environment once per process, as a function's cold start does: its
    settings, then the clients made with them. A section that changes the environment (one
    after another in `make bench`) starts afresh, or it would reach the previous section's
    moto, or AWS itself."""
    config = sys.modules.get("psap.config")
    if config is not None:
        config.reset_settings()
    for module_name, client in _CACHED_CLIENTS.items():
        module = sys.modules.get(module_name)
        if module is not None:
            getattr(module, client).cache_clear()
    settle_observability()


def settle_observability() -> None:
    """Powertools reads its namespace and log level when first imported; another section's
    module may have imported it before this environment existed."""
    observability = sys.modules.get("psap.observability")
    if observability is not None:
        observability.metrics.namespace = IN_PROCESS_ENVIRONMENT["POWERTOOLS_METRICS_NAMESPACE"]
        observability.logger.setLevel(IN_PROCESS_ENVIRONMENT["POWERTOOLS_LOG_LEVEL"])


def create_template_resources() -> None:
    """Every table, queue and bucket of template.yaml, in moto (inside mock_aws, with the
    environment set); the cached clients are dropped first, so none is left from before."""
    from local.aws import table_definition  # noqa: PLC0415 - after the environment is set
    from local.template import load_template  # noqa: PLC0415
    from psap.storage.dynamodb import dynamodb  # noqa: PLC0415
    from psap.storage.s3 import s3  # noqa: PLC0415
    from psap.storage.sqs import sqs  # noqa: PLC0415

    for client in (dynamodb, s3, sqs):
        client.cache_clear()
    template = load_template()
    for table in template.tables.values():
        dynamodb().create_table(**table_definition(table))
    for queue in template.queues.values():
        sqs().create_queue(QueueName=queue.name)
    for bucket in template.buckets.values():
        s3().create_bucket(Bucket=bucket.name)


def create_tables(client: "DynamoDBClient", specs: list[TableSpec]) -> list[str]:
    """Creates the tables with the template's keys and indexes, under their bench names.
    Encryption, backups and the like change no read, so they are left out."""
    created: list[str] = []
    for spec in sorted(specs, key=lambda spec: spec.logical_id):
        name = spec.bench_name
        properties = spec.properties
        request: dict[str, Any] = {
            "TableName": name,
            "AttributeDefinitions": properties["AttributeDefinitions"],
            "KeySchema": properties["KeySchema"],
            "BillingMode": properties.get("BillingMode", "PROVISIONED"),
        }
        if "ProvisionedThroughput" in properties:
            request["ProvisionedThroughput"] = properties["ProvisionedThroughput"]
        for kind in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
            if kind in properties:
                request[kind] = [
                    {
                        key: index[key]
                        for key in ("IndexName", "KeySchema", "Projection", "ProvisionedThroughput")
                        if key in index
                    }
                    for index in properties[kind]
                ]
        client.create_table(**request)
        ttl = properties.get("TimeToLiveSpecification")
        if ttl:
            client.update_time_to_live(TableName=name, TimeToLiveSpecification=ttl)
        created.append(name)
    return created


# ---------------------------------------------------------------- counting what is read

# What marks a listing-pointer partition, taken from the store's own key function.
_LISTING_MARK = store.listing_pk(0, "").removeprefix("T#0")
RCU_BYTES = 4096  # one strongly consistent read unit


def item_bytes(item: dict[str, Any]) -> int:
    """DynamoDB's item size: attribute names plus values (strings and numbers as text)."""
    size = 0
    for name, value in item.items():
        ((_, inner),) = value.items()
        size += len(name.encode()) + len(str(inner).encode())
    return size


def query_rcu(items: list[dict[str, Any]]) -> int:
    """A Query is charged on the summed size of what it read, per 4 KB, at least one unit."""
    return max(1, math.ceil(sum(item_bytes(item) for item in items) / RCU_BYTES))


@dataclass
class Reads:
    """Items DynamoDB read for one list request, by kind, and the calls made."""

    # Listing-pointer Queries in call order, each (ScannedCount, read units if consistent).
    pointer_queries: list[tuple[int, int]] = field(default_factory=list)
    full: int = 0  # entries: BatchGetItem items and non-counter GetItem items
    counter: int = 0  # the listing counter (GetItem)
    other: int = 0  # any other Query: none expected on the list path
    calls: Counter[str] = field(default_factory=Counter)

    @property
    def keys_only(self) -> int:
        return sum(scanned for scanned, _ in self.pointer_queries)

    @property
    def keys_only_rcu(self) -> int:
        return sum(units for _, units in self.pointer_queries)

    def call_summary(self) -> str:
        return " + ".join(f"{count} {name}" for name, count in sorted(self.calls.items()))


class ReadCounter:
    """Counts items from the responses, via botocore's event hooks on one client.

    The parameters of a call are not passed to after-call hooks, so a before-parameter-build
    hook notes in the per-call context what it needs (the partition or key) to classify the
    answer."""

    def __init__(self, client: "DynamoDBClient") -> None:
        self.client = client
        self.reads = Reads()

    def __enter__(self) -> "ReadCounter":
        events = self.client.meta.events
        events.register("before-parameter-build.dynamodb.*", self._note)
        events.register("after-call.dynamodb.*", self._count)
        return self

    def __exit__(self, *exc: object) -> None:
        events = self.client.meta.events
        events.unregister("before-parameter-build.dynamodb.*", self._note)
        events.unregister("after-call.dynamodb.*", self._count)

    def reset(self) -> Reads:
        taken, self.reads = self.reads, Reads()
        return taken

    def _note(self, params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        # Every string value of the key condition, whatever its placeholder is called.
        values = (params.get("ExpressionAttributeValues") or {}).values()
        context["bench_pk"] = " ".join(str(value.get("S", "")) for value in values)
        context["bench_sk"] = ((params.get("Key") or {}).get("sk") or {}).get("S", "")

    def _count(self, parsed: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
        operation = str(model.name)
        self.reads.calls[operation] += 1
        if operation == "Query":
            scanned = int(parsed.get("ScannedCount", 0))
            # The count is a Query of the scope's counter shards (values: the pk, "#COUNT").
            if context.get("bench_pk", "").endswith(f" {store._COUNTER_SK}"):
                self.reads.counter += 1
            elif _LISTING_MARK in context.get("bench_pk", ""):
                self.reads.pointer_queries.append((scanned, query_rcu(parsed.get("Items", []))))
            else:
                self.reads.other += scanned
        elif operation == "GetItem" and "Item" in parsed:
            if context.get("bench_sk") == store._COUNTER_SK:
                self.reads.counter += 1
            else:
                self.reads.full += 1
        elif operation == "BatchGetItem":
            responses = parsed.get("Responses", {})
            self.reads.full += sum(len(items) for items in responses.values())


# ---------------------------------------------------------------- bulk loading


def bulk_write(
    client: "DynamoDBClient",
    table: str,
    items: Iterator[dict[str, Any]],
    *,
    on_progress: Callable[[int], None] = lambda _: None,
) -> int:
    """BatchWriteItem in batches of 25 (its limit), retrying what comes back unprocessed."""
    written = 0
    while batch := list(itertools.islice(items, 25)):
        pending: dict[str, Any] = {table: [{"PutRequest": {"Item": item}} for item in batch]}
        while pending:
            answer = client.batch_write_item(RequestItems=pending)
            pending = dict(answer.get("UnprocessedItems") or {})
        written += len(batch)
        on_progress(written)
    return written
