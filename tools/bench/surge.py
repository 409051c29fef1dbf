"""The CAD surge against DynamoDB's per-partition capacity, on the local stack (docs/capacity.md).

Starts the local stack with `--partition-capacity SCALE` (every partition key refused past
1,000/SCALE WCU or 3,000/SCALE RCU in one second, as DynamoDB refuses a hot key past
1,000 / 3,000), so that this machine drives the design's peaks at 1/SCALE of their rate and
every peak the meter reports, multiplied by SCALE, is the full-scale figure. Then:

- at rest: a probe tenant submits 2 CAD incidents/s; the time from each 202 to its
  update's arrival at the probe's receiver (p50/p95);
- (a) the surge: one tenant at 200/SCALE CAD submissions/s, with two connectors whose
  loopback receivers verify every delivery, and an incident upload of 10,000/SCALE rows
  alongside; the probe keeps its 2/s; every submission's update must reach each connector
  exactly once (lost: none arrived; doubled: two deliveries of it);
- (b) 5,000/SCALE tenants, each with a connector, each submitting one CAD incident;
- (c) the webhook scheduler's run with those tenants and 10 due deliveries in all (ten of
  the tenants' receivers answer 503, so their updates wait for a retry): its DynamoDB reads
  (requests, counted on its client, and RCU, from the meter) per run and per due delivery.

Peaks come from `psap-local capacity` (the embedded AWS's report, reset between phases):
per table and key pattern, the most one key of it consumed in one second.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import io
import os
import re
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx

from local.cad_receiver import CadReceiver, Endpoint, Verdict
from local.partition_capacity import PARTITION_RCU, PARTITION_WCU, fetch_report
from local.stack_process import RunningStack, running_stack
from tools.bench.core import Options, Progress, Row, Section

SCALE = 20  # the design's rates / 20 on this machine; peaks printed x 20
SURGE_RATE = 200 / SCALE  # CAD submissions per second of the one state-wide tenant
SURGE_SECONDS = 15.0
UPLOAD_ROWS = 10_000 // SCALE
TENANTS = 5_000 // SCALE
TENANT_RATE = 200 / SCALE  # the many tenants' submissions per second, all together
DUE_DELIVERIES = 10
PROBE_RATE = 2.0  # the latency probe's submissions per second
REST_SECONDS = 10.0
DRAIN_SECONDS = 90.0  # the longest wait for the last updates after a phase
LATENCY_TARGET = 2.0
SCHEDULER_READS_PER_DUE = 2.0  # O(1): what a run may read per due delivery
PEAKS_SHOWN = 8  # per phase, the hottest key patterns


# ---------------------------------------------------------------------------- receivers


class StampedReceiver(CadReceiver):
    """The sample CAD receiver (it verifies every delivery with the receiver kit), noting
    when each accepted update arrived, by (path, receipt id); paths answering 503 model
    CAD endpoints that are down."""

    def __init__(self) -> None:
        super().__init__(log=None)
        self.arrivals: dict[tuple[str, str], list[tuple[float, str]]] = {}
        self.failing: set[str] = set()
        self.refused = 0
        self._stamps = threading.Lock()

    def judge(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Verdict]:
        if path in self.failing:
            with self._stamps:
                self.refused += 1
            return 503, Verdict("REJECT", path, None, "endpoint down", None)
        return super().judge(path, headers, body)

    def record(self, verdict: Verdict) -> None:
        receipt = ((verdict.event or {}).get("data") or {}).get("receiptId")
        if verdict.verdict == "ACCEPT" and receipt and verdict.delivery_id:
            with self._stamps:
                self.arrivals.setdefault((verdict.path, receipt), []).append(
                    (time.monotonic(), verdict.delivery_id)
                )

    def arrived(self, path: str, receipt: str) -> list[tuple[float, str]]:
        with self._stamps:
            return list(self.arrivals.get((path, receipt), []))


# ---------------------------------------------------------------------------- the stack


def _admin(stack: RunningStack, *arguments: str) -> str:
    """psap-admin, in this process (a process per call would cost a second each)."""
    from tools import admin  # noqa: PLC0415 - loads the service's layer

    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        code = admin.main(["--state-file", str(stack.state_file), *arguments])
    if code != 0:
        raise RuntimeError(f"psap-admin {' '.join(arguments)} failed: {output.getvalue()}")
    return output.getvalue()


@dataclass
class Tenant:
    tenant_id: str
    cad: str
    partner: str = ""
    paths: list[str] = field(default_factory=list)  # its connectors' receiver paths


def _tenant(stack: RunningStack, name: str, *, partner: bool = False) -> Tenant:
    created = _admin(stack, "tenant", "create", "--name", name)
    found = re.search(r"created tenant (\d+)", created)
    if found is None:
        raise RuntimeError(created)
    tenant_id = found.group(1)

    def issue(kind: str, permissions: str) -> str:
        issued = _admin(
            stack,
            *("credential", "issue", "--tenant", tenant_id, "--kind", kind),
            *("--permissions", permissions, "--label", f"surge {kind}", "--expires-in-days", "1"),
        )
        return issued.strip().splitlines()[-1]

    return Tenant(
        tenant_id,
        issue("cad", ""),
        issue("partner", "ADMIN,BROWSE_EVENTS,MANAGE_EVENTS") if partner else "",
    )


def _connect(stack: RunningStack, tenant: Tenant, receiver: StampedReceiver, *, name: str) -> None:
    """A connector of the tenant delivering to its own path of `receiver`."""
    path = f"/cad/{tenant.tenant_id}/{name}"
    bearer = f"bearer-{uuid.uuid4().hex}"
    os.environ["SURGE_CAD_BEARER"] = bearer
    created = _admin(
        stack,
        *("connector", "create", "--tenant", tenant.tenant_id, "--name", name),
        *("--url", receiver.base_url + path, "--local-dev", "--bearer-env", "SURGE_CAD_BEARER"),
    )
    receiver.register(path, Endpoint(created.strip().splitlines()[-1], bearer))
    tenant.paths.append(path)


# ---------------------------------------------------------------------------- traffic


@dataclass
class Submission:
    tenant: Tenant
    sent: float
    status: int = 0
    receipt: str = ""
    accepted_at: float = 0.0


def _submit(client: httpx.Client, base: str, tenant: Tenant) -> Submission:
    event = {
        "specversion": "1.0",
        "id": f"surge-{uuid.uuid4().hex}",
        "source": "urn:cad:surge",
        "type": "incident.created",
        "time": "2026-11-23T02:32:15.123Z",
        "tenantId": int(tenant.tenant_id),
        "data": {"number": f"S-{uuid.uuid4().hex[:12]}", "incidentType": "Medical"},
    }
    submission = Submission(tenant, time.monotonic())
    answer = client.post(
        f"{base}/cad/v1/incidents",
        headers={"Authorization": f"Bearer {tenant.cad}"},
        json=event,
    )
    submission.accepted_at = time.monotonic()
    submission.status = answer.status_code
    if answer.status_code == 202:
        submission.receipt = str(answer.json()["receiptId"])
    return submission


def _paced(
    base: str, tenants: Callable[[int], Tenant], rate: float, *, count: int, workers: int = 8
) -> list[Submission]:
    """`count` submissions at `rate` per second (the n-th from tenants(n)), sent from a pool
    so that a slow answer does not slow the pace."""
    started = time.monotonic()
    local = threading.local()

    def one(number: int) -> Submission:
        time.sleep(max(0.0, started + number / rate - time.monotonic()))
        if not hasattr(local, "client"):
            local.client = httpx.Client(timeout=60)
        return _submit(local.client, base, tenants(number))

    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, range(count)))


def _upload(base: str, tenant: Tenant, rows: int) -> tuple[int, float]:
    """(status, seconds) of an incident upload of `rows` rows."""
    lines = ["number,priority,incidentType,location,incidentDate\n"]
    lines += [
        f"U-{n:07d},{1 + n % 4},Medical,{100 + n} Main St,2026-11-23T02:{n % 60:02d}:15Z\n"
        for n in range(rows)
    ]
    started = time.monotonic()
    with httpx.Client(timeout=120) as client:
        answer = client.post(
            f"{base}/api/v1/external/incidents/upload",
            headers={"Authorization": f"Bearer {tenant.partner}", "Content-Type": "text/csv"},
            content="".join(lines).encode(),
        )
    return answer.status_code, time.monotonic() - started


@dataclass
class Outcome:
    """What became of a phase's submissions at their receivers."""

    submissions: int = 0
    latencies: list[float] = field(default_factory=list)  # 202 -> arrival, per connector
    answers: list[float] = field(default_factory=list)  # the intake's answer times
    refused: int = 0  # not answered 202
    lost: int = 0  # accepted, never arrived at one of the tenant's connectors
    doubled: int = 0  # arrived as two deliveries or more at one connector

    def percentile(self, share: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]

    def answer_p50(self) -> float:
        return statistics.median(self.answers) if self.answers else float("nan")


def _outcome(
    receiver: StampedReceiver, submissions: list[Submission], *, skip: set[str] | None = None
) -> Outcome:
    """Waits (up to DRAIN_SECONDS) for every accepted submission's update at each of its
    tenant's connectors, then counts; paths in `skip` are not expected to receive."""
    skip = skip or set()
    deadline = time.monotonic() + DRAIN_SECONDS
    expected = [
        (submission, path)
        for submission in submissions
        if submission.status == 202
        for path in submission.tenant.paths
        if path not in skip
    ]
    while time.monotonic() < deadline:
        if all(receiver.arrived(path, s.receipt) for s, path in expected):
            break
        time.sleep(0.5)
    time.sleep(2)  # a late duplicate would arrive now
    outcome = Outcome(
        submissions=len(submissions),
        answers=[s.accepted_at - s.sent for s in submissions],
        refused=sum(1 for s in submissions if s.status != 202),
    )
    for submission, path in expected:
        arrivals = receiver.arrived(path, submission.receipt)
        if not arrivals:
            outcome.lost += 1
            continue
        if len({delivery for _, delivery in arrivals}) > 1:
            outcome.doubled += 1
        outcome.latencies.append(min(at for at, _ in arrivals) - submission.accepted_at)
    return outcome


# ---------------------------------------------------------------------------- the report


def _peaks(report: dict[str, Any]) -> list[tuple[float, str, str, float, float, int]]:
    """(share of the limit, table, pattern, full-scale WCU, RCU, throttled), hottest first."""
    found = []
    for table, patterns in report.get("tables", {}).items():
        short = table.removeprefix("psap-local-")
        for pattern, entry in patterns.items():
            wcu, rcu = entry["peakWcu"] * SCALE, entry["peakRcu"] * SCALE
            share = max(wcu / PARTITION_WCU, rcu / PARTITION_RCU)
            found.append((share, short, pattern, wcu, rcu, int(entry["throttled"])))
    return sorted(found, reverse=True)


def _peak_rows(phase: str, report: dict[str, Any]) -> list[Row]:
    rows = []
    for share, table, pattern, wcu, rcu, throttled in _peaks(report)[:PEAKS_SHOWN]:
        # A throttled key's peak is the limit itself (the rest was refused): a MISS.
        rows.append(
            Row(
                f"{phase}: {table} {pattern}",
                f"{wcu:.0f} WCU / {rcu:.0f} RCU"
                + (f", {throttled} throttled" if throttled else ""),
                f"<= {PARTITION_WCU} / {PARTITION_RCU}",
                share <= 1.0 and not throttled,
            )
        )
    return rows


def _latency(outcome: Outcome) -> str:
    return f"{outcome.percentile(0.5):.2f} / {outcome.percentile(0.95):.2f} s"


# ---------------------------------------------------------------------------- phases


def _at_rest(base: str, probe: Tenant, receiver: StampedReceiver) -> Outcome:
    count = int(PROBE_RATE * REST_SECONDS)
    return _outcome(receiver, _paced(base, lambda _: probe, PROBE_RATE, count=count, workers=2))


def _surge(
    base: str, surging: Tenant, probe: Tenant, *, receiver: StampedReceiver, progress: Progress
) -> tuple[Outcome, Outcome, tuple[int, float]]:
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        upload = pool.submit(_upload, base, surging, UPLOAD_ROWS)
        probing = pool.submit(
            _paced,
            base,
            lambda _: probe,
            PROBE_RATE,
            count=int(PROBE_RATE * SURGE_SECONDS),
            workers=2,
        )
        surge = _paced(
            base, lambda _: surging, SURGE_RATE, count=int(SURGE_RATE * SURGE_SECONDS), workers=16
        )
        probed = probing.result()
        upload_status = upload.result()
    progress(f"surge sent: {len(surge)} submissions; upload answered {upload_status[0]}")
    return _outcome(receiver, surge), _outcome(receiver, probed), upload_status


@contextlib.contextmanager
def _counted_reads() -> Iterator[list[str]]:
    """The DynamoDB read requests this process's service code makes (its one client)."""
    from psap.storage.dynamodb import dynamodb  # noqa: PLC0415 - loads the service's layer

    calls: list[str] = []

    def count(model: Any, **_: Any) -> None:
        if model.name in {"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"}:
            calls.append(model.name)

    events = dynamodb().meta.events
    events.register("before-call.dynamodb", count)
    try:
        yield calls
    finally:
        events.unregister("before-call.dynamodb", count)


def _scheduler_run(stack: RunningStack) -> tuple[int, int, float]:
    """(enqueued, read requests, RCU) of one scheduler run, in this process as the
    scheduler's code runs on Lambda, at a time when every pending delivery is due."""
    from psap.clock import utc_now  # noqa: PLC0415 - loads the service's layer
    from psap.webhooks.dispatcher import enqueue_due  # noqa: PLC0415

    endpoint = str(stack.state["awsEndpointUrl"])
    fetch_report(endpoint, reset=True)
    with _counted_reads() as reads:
        # An hour on: the failed deliveries' first retries (5 s, 30 s) are all due.
        enqueued = enqueue_due(utc_now() + timedelta(hours=1))
    recent = fetch_report(endpoint, seconds=10).get("recent", [])
    units = sum(entry["rcu"] for second in recent for entry in second["consumed"])
    return enqueued, len(reads), units


def run(_options: Options) -> list[Row]:
    progress = Progress("surge")
    receiver = StampedReceiver()
    receiver.start()
    with (
        tempfile.TemporaryDirectory() as folder,
        running_stack(
            Path(folder), "--no-demo", "--partition-capacity", str(SCALE), timeout=300
        ) as stack,
    ):
        progress(f"local stack started, partition capacity at 1/{SCALE}")
        base = str(stack.state["baseUrl"])
        endpoint = str(stack.state["awsEndpointUrl"])
        surging = _tenant(stack, "Surge: the state-wide tenant", partner=True)
        _connect(stack, surging, receiver, name="primary-cad")
        _connect(stack, surging, receiver, name="backup-cad")
        probe = _tenant(stack, "Surge: the probe")
        _connect(stack, probe, receiver, name="cad")
        _paced(base, lambda _: probe, PROBE_RATE, count=4, workers=2)  # warm the functions
        time.sleep(3)
        fetch_report(endpoint, reset=True)
        rest = _at_rest(base, probe, receiver)
        progress(f"at rest: p50/p95 {_latency(rest)}")
        report_rest = fetch_report(endpoint, reset=True)
        surge, probed, upload_status = _surge(
            base, surging, probe, receiver=receiver, progress=progress
        )
        report_a = fetch_report(endpoint, reset=True)
        progress(f"(a) surge: probe p50/p95 {_latency(probed)}, throttled {report_a['throttled']}")
        tenants = [_tenant(stack, f"Surge: tenant {n}") for n in range(TENANTS)]
        for number, tenant in enumerate(tenants):
            _connect(stack, tenant, receiver, name="cad")
            if number < DUE_DELIVERIES:
                receiver.failing.add(tenant.paths[0])
        progress(f"{TENANTS} tenants with a connector each")
        fetch_report(endpoint, reset=True)
        many = _paced(base, lambda n: tenants[n], TENANT_RATE, count=TENANTS, workers=8)
        spread = _outcome(receiver, many, skip=receiver.failing)
        report_b = fetch_report(endpoint, reset=True)
        progress(f"(b) {TENANTS} tenants: throttled {report_b['throttled']}")
        enqueued, reads, units = _scheduler_run(stack)
        progress(f"(c) scheduler: {reads} reads, {units:g} RCU, {enqueued} enqueued")
        throttled_lines = [
            line
            for line in stack.log_file.read_text(errors="replace").splitlines()
            if "DynamoDB throttled " in line
        ]
        throttle_lines = len(throttled_lines)
        for line in sorted({line[line.index("DynamoDB throttled ") :] for line in throttled_lines}):
            progress(line[:200])  # the keys behind the count, between the phases too
    receiver.stop()
    throttled = sum(int(report["throttled"]) for report in (report_rest, report_a, report_b))
    failures = surge.lost + surge.doubled + spread.lost + spread.doubled + rest.lost + probed.lost
    per_due = reads / DUE_DELIVERIES
    return [
        Row("scale (rates / SCALE, peaks x SCALE)", f"1/{SCALE}"),
        *_peak_rows("(a) surge", report_a),
        *_peak_rows(f"(b) {TENANTS} tenants", report_b),
        Row(
            "(a) surge sent: CAD submissions, upload rows",
            f"{surge.submissions} at {SURGE_RATE:g}/s"
            f" ({SURGE_RATE * SCALE:g}/s full scale); {UPLOAD_ROWS} rows: answer"
            f" {upload_status[0]} in {upload_status[1]:.1f} s",
        ),
        Row(
            "throttled DynamoDB requests (rest, a, b; log lines)",
            f"{report_rest['throttled']}, {report_a['throttled']}, {report_b['throttled']};"
            f" {throttle_lines}",
            "0",
            throttled == 0,
        ),
        Row(
            "updates lost / doubled (every connector)",
            f"{surge.lost + spread.lost + rest.lost + probed.lost}"
            f" / {surge.doubled + spread.doubled + rest.doubled + probed.doubled}",
            "0 / 0",
            failures == 0,
        ),
        Row(
            "CAD submissions not accepted (a, b)",
            f"{surge.refused}, {spread.refused}",
            "0",
            surge.refused + spread.refused == 0,
        ),
        Row(
            f"(c) scheduler run, {TENANTS} tenants, {DUE_DELIVERIES} due: reads, RCU, enqueued",
            f"{reads} requests, {units:g} RCU, {enqueued} enqueued",
        ),
        Row(
            "(c) scheduler reads per due delivery",
            f"{per_due:.1f}",
            f"O(1): <= {SCHEDULER_READS_PER_DUE:g}",
            per_due <= SCHEDULER_READS_PER_DUE,
        ),
        Row(
            "202 -> update at the CAD receiver, p50 / p95, at rest (2/s)",
            _latency(rest),
            f"p95 <= {LATENCY_TARGET:g} s",
            rest.percentile(0.95) <= LATENCY_TARGET,
        ),
        Row(
            "202 -> update at the CAD receiver, p50 / p95, probe (2/s) during the surge",
            _latency(probed),
            f"p95 <= {LATENCY_TARGET:g} s",
            probed.percentile(0.95) <= LATENCY_TARGET,
        ),
        Row("202 -> update, p50 / p95, the surging tenant's own", _latency(surge)),
        Row("202 -> update, p50 / p95, the many tenants'", _latency(spread)),
        Row(
            "CAD intake answer (202) p50, at rest / surge",
            f"{1000 * rest.answer_p50():.0f} / {1000 * surge.answer_p50():.0f} ms",
        ),
    ]


SECTION = Section(
    "surge",
    "CAD surge against DynamoDB's per-partition capacity (1,000 WCU / 3,000 RCU per key)",
    run,
)
