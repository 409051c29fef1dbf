"""The local stack over a day of work: memory and time per request stay flat.

Starts `python -m local.stack` (no demo data) on free ports, issues an admin credential with
the admin CLI, then creates 600 knowledge entries over HTTP, each a DynamoDB transaction.
Reports what the stack's processes (the stack and its function workers) added to their
resident memory, and how long the 6th hundred took against the 1st, next to the targets.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from local.stack_process import running_stack
from tools.bench.core import Options, Progress, Row, Section, ratio_row

ROOT = Path(__file__).resolve().parents[2]
CREATES = 600
HUNDRED = 100
MEMORY_LIMIT_MB = 200
RATIO_LIMIT = 1.2
SETTLE_SECONDS = 5


def process_children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                # The command may hold spaces and parentheses: the parent id follows the last ")".
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
                tree.setdefault(int(fields[1]), []).append(int(entry.name))
    return tree


def resident_mb(pid: int) -> float:
    """The resident memory of a process and all its descendants, in MB."""
    tree = process_children()
    pending, total_kb = [pid], 0
    while pending:
        current = pending.pop()
        pending.extend(tree.get(current, []))
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kb += int(line.split()[1])
    return total_kb / 1024


@contextlib.contextmanager
def stack_without_demo(
    progress: Progress,
) -> Iterator[tuple[subprocess.Popen[bytes], dict[str, Any]]]:
    with (
        tempfile.TemporaryDirectory() as folder,
        running_stack(Path(folder), "--no-demo", timeout=120) as running,
    ):
        progress("local stack started")
        yield running.process, running.state


def _admin(state: dict[str, Any], *arguments: str) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as state_copy:
        json.dump(state, state_copy)
    answer = subprocess.run(
        [sys.executable, "-m", "tools.admin", "--state-file", state_copy.name, *arguments],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(["layers/shared", "."])},
        capture_output=True,
        text=True,
        check=True,
    )
    Path(state_copy.name).unlink()
    return answer.stdout


def _admin_token(state: dict[str, Any]) -> str:
    created = _admin(state, "tenant", "create", "--name", "Bench County 911")
    tenant = created.split()[2]
    issued = _admin(
        state,
        "credential",
        "issue",
        "--tenant",
        tenant,
        "--kind",
        "partner",
        "--permissions",
        "MANAGE_KNOWLEDGE,VIEW_KNOWLEDGE",
        "--label",
        "bench",
        "--expires-in-days",
        "1",
    )
    return next(word for word in issued.split() if word.startswith("psap_partner_"))


def run(_options: Options) -> list[Row]:
    progress = Progress("local-stack")
    sample = json.loads(json.loads((ROOT / "events" / "knowledge_create.json").read_text())["body"])
    # A guide card of ten questions: the sample's own refer to media and entries it lacks here.
    body = {
        **{key: sample[key] for key in ("name", "description", "provider", "knowledgeType")},
        "apiControl": {key: key == "questionList" for key in sample["apiControl"]},
        "questionList": [
            {"questionText": f"Question {n}: is the caller safe?", "isCritical": n == 0}
            for n in range(10)
        ],
    }
    with stack_without_demo(progress) as (process, state):
        token = _admin_token(state)
        headers = {"Authorization": f"Bearer {token}"}
        seconds: list[float] = []
        with httpx.Client(base_url=state["baseUrl"], headers=headers, timeout=60) as client:
            # Warm-up first: the API's workers, and those the creates set going behind it (the
            # card digest worker, the audit writer), start here, so that a process starting
            # is not counted as growth.
            for number in range(20):
                client.post(
                    "/api/v1/external/knowledge", json={**body, "externalId": f"w-{number}"}
                )
            time.sleep(SETTLE_SECONDS)
            before_mb = resident_mb(process.pid)
            for hundred in range(CREATES // HUNDRED):
                started = time.perf_counter()
                for number in range(HUNDRED):
                    entry = {**body, "externalId": f"bench-{hundred}-{number}"}
                    answer = client.post("/api/v1/external/knowledge", json=entry)
                    if answer.status_code != 201:
                        raise RuntimeError(f"create answered {answer.status_code}: {answer.text}")
                seconds.append(time.perf_counter() - started)
                progress(f"hundred {hundred + 1}: {seconds[-1]:.1f} s")
            time.sleep(SETTLE_SECONDS)  # the digests and audit lines still on their way
            after_mb = resident_mb(process.pid)
    added = after_mb - before_mb
    return [
        Row("resident memory before (stack + workers)", f"{before_mb:.0f} MB"),
        Row(
            f"memory added by {CREATES} creates",
            f"{added:.0f} MB",
            f"<= {MEMORY_LIMIT_MB} MB",
            added <= MEMORY_LIMIT_MB,
        ),
        Row("1st hundred", f"{seconds[0]:.2f} s"),
        Row(f"{len(seconds)}th hundred", f"{seconds[-1]:.2f} s"),
        ratio_row("6th hundred / 1st hundred", seconds[-1], seconds[0], limit=RATIO_LIMIT),
    ]


SECTION = Section(
    "local-stack", "Local stack: memory and time over 600 knowledge creates over HTTP", run
)
