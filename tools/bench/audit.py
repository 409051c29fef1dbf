"""Section `audit`: what audit recording costs a warm read, and how fast the writer appends.

The warm read is the knowledge list (the same handler, tenant and moto as `warm-latency`),
timed in alternating blocks with the audit record on and off. Off replaces the entrypoint's
record building and sending with nothing; on sends each record to the audit queue (moto's
in-process SQS: the serialization and signing it costs on Lambda, without the network round
trip, a few milliseconds in a region, that comes on top there).
"""

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest.mock import patch

from moto import mock_aws

from psap.audit.recording import AuditRecord
from psap.audit.store import append_records
from psap.storage.sqs import sqs
from tools.bench.core import Options, Progress, Row, Section, median, milliseconds, ratio_row
from tools.bench.knowledge import (
    CONTEXT,
    PAGE_SIZE,
    SMALL_ENTRIES,
    SMALL_TENANT,
    create_small_tenant,
    fresh_store,
    list_event,
    prepare,
)
from tools.bench.moto import environment_changed

OVERHEAD_LIMIT = 1.1
WRITER_RECORDS = 500
LINE_CALLS = 2_000


@contextmanager
def audit_off() -> Iterator[None]:
    # Imported here: Powertools (under the resolver) reads the environment prepare() sets.
    from psap.http import resolver  # noqa: PLC0415

    with patch.multiple(resolver, audit_record=lambda *args, **kwargs: None, emit=lambda _: None):
        yield


def _timed_blocks(calls: dict[str, Callable[[], None]], total: int) -> dict[str, list[float]]:
    """Alternating calls, so drift on a shared machine affects both sides alike."""
    block = 1
    timings: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(0, total, block):
        for name, call in calls.items():
            for _ in range(block):
                started = time.perf_counter()
                call()
                timings[name].append(time.perf_counter() - started)
    return timings


def _records(count: int) -> list[AuditRecord]:
    start = datetime.now(UTC) - timedelta(hours=1)
    return [
        AuditRecord(
            time=start + timedelta(milliseconds=index),
            tenant_id=SMALL_TENANT,
            credential_id="cred-bench",
            principal="bench",
            credential_kind="partner",
            operation="listKnowledge",
            method="GET",
            path="/api/v1/external/knowledge",
            resource_ids={},
            status=200,
            request_id=f"bench-{index:06d}",
            source_ip="203.0.113.10",
            user_agent="bench/1.0",
            duration_ms=5,
        )
        for index in range(count)
    ]


def _line_cost(event: dict[str, Any]) -> float:
    """Seconds per record of what the entrypoint adds: build the record, print the line."""
    from psap.audit.lines import AuditCaller, AuditedCall  # noqa: PLC0415 - after prepare()
    from psap.audit.recording import audit_record, emit  # noqa: PLC0415 - after prepare()

    now = datetime.now(UTC)
    started = time.perf_counter()
    for _ in range(LINE_CALLS):
        emit(
            audit_record(
                event,
                AuditCaller(
                    tenant_id=SMALL_TENANT,
                    credential_id="cred-bench",
                    principal="bench",
                    credential_kind="partner",
                ),
                AuditedCall(
                    operation="listKnowledge",
                    status=200,
                    started=now,
                    finished=now,
                ),
            )
        )
    return (time.perf_counter() - started) / LINE_CALLS


def audit_overhead(options: Options) -> list[Row]:
    progress = Progress("audit")
    specs, handler = prepare(progress)
    event = list_event(SMALL_TENANT, 0, PAGE_SIZE)
    with mock_aws(), open("/dev/null", "w", encoding="utf-8") as sink, redirect_stdout(sink):
        fresh_store(specs)
        sqs.cache_clear()
        os.environ["AUDIT_QUEUE_URL"] = sqs().create_queue(QueueName="bench-AuditQueue")["QueueUrl"]
        environment_changed()
        create_small_tenant(SMALL_TENANT, SMALL_ENTRIES)

        def read() -> None:
            answer: dict[str, Any] = handler(event, CONTEXT)
            if answer["statusCode"] != 200:
                raise RuntimeError(f"list request failed: {answer}")

        def read_without_audit() -> None:
            with audit_off():
                read()

        for _ in range(20):  # warm-up: caches, lazy imports, first-call paths
            read()
            read_without_audit()
        timings = _timed_blocks({"with": read, "without": read_without_audit}, options.warm_calls)
        line_seconds = _line_cost(event)
        records = _records(WRITER_RECORDS)
        started = time.perf_counter()
        append_records(records, retention_days=365)
        writer_seconds = time.perf_counter() - started
    progress(f"{len(timings['with'])} timed reads per side")
    with_audit = median(timings["with"])
    without = median(timings["without"])
    return [
        Row(f"warm list, audit on (median of {len(timings['with'])})", milliseconds(with_audit)),
        Row(f"warm list, audit off (median of {len(timings['without'])})", milliseconds(without)),
        Row("audit cost per request (difference of medians)", milliseconds(with_audit - without)),
        Row(
            f"audit record built and sent, alone (mean of {LINE_CALLS})",
            f"{line_seconds * 1_000_000:.1f} µs",
        ),
        ratio_row("audit on / audit off", with_audit, without, limit=OVERHEAD_LIMIT),
        Row(
            f"writer: {WRITER_RECORDS} records appended (moto)",
            f"{WRITER_RECORDS / writer_seconds:,.0f} records/s",
        ),
    ]


SECTION = Section("audit", "Audit recording overhead on a warm read (in-process)", audit_overhead)
