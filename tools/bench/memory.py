"""The whole local stack's memory: after a README-like walk, and over a mixed soak.

Starts `python -m local.stack` with its demo tenants and a cap on live workers
(`--max-workers`, docs/faults.md), walks the README's calls once (knowledge, its card,
resource-center search, an incident read, users, a CAD submission answered by webhook, an
incident upload, the OpenAPI document), then measures the resident memory of the stack's
whole process tree (the stack, the embedded AWS, every function worker). Then a mixed soak
of the same calls for `--soak-seconds`: the memory it adds, and the p95 latency of its last
third against its first.
"""

from __future__ import annotations

import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from local.stack_process import running_stack
from tools.bench.core import Options, Progress, Row, Section, ratio_row
from tools.bench.local_stack import process_children, resident_mb

WALK_LIMIT_MB = 1536
SOAK_GROWTH_LIMIT_MB = 150
DRIFT_LIMIT = 1.2
MAX_WORKERS = 10
SETTLE_SECONDS = 5
START_SECONDS = 900
BASE = "/api/v1/external"

type Call = Callable[[httpx.Client], httpx.Response]


def _calls(state: dict[str, Any]) -> list[tuple[str, Call]]:
    """The README's calls, as a demo tenant makes them."""
    tenant = state["tenants"][0]
    admin = {"Authorization": f"Bearer {tenant['credentials']['admin']}"}
    cad = {"Authorization": f"Bearer {tenant['credentials']['cad']}"}

    def create(client: httpx.Client) -> httpx.Response:
        body = {
            "name": f"Soak card {uuid.uuid4().hex[:6]}",
            "provider": "NENA",
            "knowledgeType": "INSTRUCTION_CARD",
            "externalId": f"soak-{uuid.uuid4().hex}",
            "apiControl": {},
            "spokenInstructions": [{"instructionText": "Push hard and fast."}],
        }
        return client.post(BASE + "/knowledge", json=body, headers=admin)

    def submit(client: httpx.Client) -> httpx.Response:
        body = {
            "specversion": "1.0",
            "id": f"soak-{uuid.uuid4().hex}",
            "source": "urn:cad:soak",
            "type": "incident.created",
            "time": "2026-11-23T02:32:15Z",
            "tenantId": tenant["id"],
            "data": {"number": f"SOAK-{uuid.uuid4().hex[:8]}", "incidentType": "Fire"},
        }
        return client.post("/cad/v1/incidents", json=body, headers=cad)

    def upload(client: httpx.Client) -> httpx.Response:
        rows = f"number,priority,location\nUP-{uuid.uuid4().hex[:8]},2,1 Main St\n"
        return client.post(
            BASE + "/incidents/upload",
            content=rows.encode(),
            headers={**admin, "Content-Type": "text/csv"},
        )

    return [
        ("knowledge list", lambda c: c.get(BASE + "/knowledge", headers=admin)),
        ("knowledge create", create),
        (
            "resource-center search",
            lambda c: c.get(
                BASE + "/mcp/resources/resource-center/search",
                params={"q": "cardiac arrest"},
                headers=admin,
            ),
        ),
        ("users", lambda c: c.get(BASE + "/user", headers=admin)),
        ("CAD submission", submit),
        ("incident upload", upload),
        ("OpenAPI document", lambda c: c.get(BASE + "/openapi.json")),
    ]


def _walk(client: httpx.Client, calls: list[tuple[str, Call]], progress: Progress) -> None:
    for name, call in calls:
        answer = call(client)
        if answer.status_code >= 500:
            raise RuntimeError(f"{name} answered {answer.status_code}: {answer.text}")
    progress("README-like walk done")


def _own_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _descendants(pid: int) -> int:
    tree = process_children()
    pending, count = list(tree.get(pid, [])), 0
    while pending:
        current = pending.pop()
        count += 1
        pending.extend(tree.get(current, []))
    return count


def run(options: Options) -> list[Row]:
    progress = Progress("memory")
    with (
        tempfile.TemporaryDirectory() as folder,
        running_stack(
            Path(folder), "--max-workers", str(MAX_WORKERS), timeout=START_SECONDS
        ) as running,
        httpx.Client(base_url=running.state["baseUrl"], timeout=60) as client,
    ):
        progress("local stack started (demo tenants seeded)")
        calls = _calls(running.state)
        _walk(client, calls, progress)
        time.sleep(SETTLE_SECONDS)  # the webhook, digest and audit work the walk set going
        walked_mb = resident_mb(running.process.pid)
        stack_mb, processes = _own_mb(running.process.pid), _descendants(running.process.pid)
        latencies: list[float] = []
        ends = time.monotonic() + options.soak_seconds
        while time.monotonic() < ends:
            for _, call in calls:
                started = time.perf_counter()
                call(client)
                latencies.append(time.perf_counter() - started)
        progress(f"soak done: {len(latencies)} requests")
        time.sleep(SETTLE_SECONDS)
        soaked_mb = resident_mb(running.process.pid)
    third = max(1, len(latencies) // 3)
    first = statistics.quantiles(latencies[:third], n=20)[18] if third > 1 else latencies[0]
    last = statistics.quantiles(latencies[-third:], n=20)[18] if third > 1 else latencies[-1]
    growth = soaked_mb - walked_mb
    return [
        Row("of which the stack process (embedded AWS, gateway, pollers)", f"{stack_mb:.0f} MB"),
        Row("worker processes alive after the walk", str(processes)),
        Row(
            f"stack process tree after the walk (--max-workers {MAX_WORKERS})",
            f"{walked_mb:.0f} MB",
            f"<= {WALK_LIMIT_MB} MB",
            walked_mb <= WALK_LIMIT_MB,
        ),
        Row(
            f"growth over a {options.soak_seconds:.0f} s mixed soak ({len(latencies)} requests)",
            f"{growth:.0f} MB",
            f"<= {SOAK_GROWTH_LIMIT_MB} MB",
            growth <= SOAK_GROWTH_LIMIT_MB,
        ),
        Row("p95 latency, first third of the soak", f"{first * 1000:.0f} ms"),
        Row("p95 latency, last third of the soak", f"{last * 1000:.0f} ms"),
        ratio_row("p95 drift (last third / first)", last, first, limit=DRIFT_LIMIT),
    ]


SECTION = Section(
    "memory", "Local stack: whole process tree after a README walk, and over a soak", run
)
