"""A longer randomized chaos run: the local stack with random faults for `--chaos-seconds`.

The short seeded run is tests/e2e/test_chaos.py; this one draws its seed from the clock
(printed, so a finding can be run again with it), crashes the CAD worker, the dispatcher,
the audit writer and the digest worker at random at every fault point, times them out now
and then, throttles and fails their tables, answers S3 SlowDown and duplicates messages,
while rounds of the CAD flow and knowledge writes run; then an upload and an export. After
the drain it checks what the short run checks (docs/faults.md) and reports a MISS for any
difference from a clean run.

The upload and export workers are throttled and duplicated, not crashed: the time scale
cannot shorten the upload's five-minute heartbeat, so a crashed upload would wait minutes.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from local.stack_process import running_stack
from tools.bench.core import Options, Progress, Row, Section
from tools.chaos import (
    FAULT_POINTS,
    CadEndpoint,
    ChaosViolation,
    aws_faults,
    cad_flow,
    check_cad,
    check_job,
    check_knowledge,
    knowledge_writes,
    new_tenant,
    server_errors,
    start_export,
    upload,
)

TIME_SCALE = 20
ANSWER_SECONDS = 240
CRASH_PROBABILITY = 0.05
TIMEOUT_PROBABILITY = 0.02
AWS_FAULT_PROBABILITY = 0.1
CRASHED = ("CadWorkerFunction", "WebhookDispatcherFunction", "AuditWriterFunction")


def random_plan(seed: int) -> dict[str, Any]:
    crashed = (*CRASHED, "KnowledgeDigestFunction")
    rules: list[dict[str, Any]] = [
        {
            "fault": "crash",
            "function": function_id,
            "point": point,
            "probability": CRASH_PROBABILITY,
        }
        for function_id in crashed
        for point in FAULT_POINTS[function_id]
    ]
    rules += [
        {"fault": "timeout", "function": function_id, "probability": TIMEOUT_PROBABILITY}
        for function_id in crashed
    ]
    rules += aws_faults(AWS_FAULT_PROBABILITY)
    return {"seed": seed, "timeScale": TIME_SCALE, "rules": rules}


def run(options: Options) -> list[Row]:
    progress = Progress("chaos")
    seed = options.chaos_seed if options.chaos_seed is not None else int(time.time())
    rounds = submissions = 0
    finding = ""
    with tempfile.TemporaryDirectory() as folder:
        faults = Path(folder) / "faults.json"
        faults.write_text(json.dumps(random_plan(seed)))
        with running_stack(
            Path(folder), "--no-demo", "--faults", str(faults), timeout=600
        ) as stack:
            progress(f"local stack started with seed {seed}")
            partner, cad, tenant = new_tenant(stack)
            endpoint = CadEndpoint()
            endpoint.connect(partner)
            expected: dict[str, str] = {}
            numbers: list[str] = []
            knowledge_ids: list[str] = []
            try:
                ends = time.monotonic() + options.chaos_seconds
                while time.monotonic() < ends:
                    # Correctness, not speed: an answer may take long on a busy machine.
                    answers, incidents = cad_flow(cad, tenant, endpoint, wait=ANSWER_SECONDS)
                    expected.update(answers)
                    numbers += incidents
                    knowledge_ids += knowledge_writes(partner, 2)
                    rounds += 1
                    progress(f"round {rounds}: {len(expected)} submissions answered")
                upload_location, _ = upload(partner)
                export_location = start_export(partner)
                check_cad(partner, endpoint, expected, numbers=numbers)
                check_knowledge(partner, knowledge_ids)
                check_job(partner, upload_location)
                check_job(partner, export_location)
                errors = server_errors(partner, cad)
                if errors:
                    finding = f"server errors: {errors[:3]}"
            except ChaosViolation as violation:
                finding = str(violation)[:300]
            submissions = len(expected)
            log = stack.log_file.read_text(errors="replace")
    fired = log.count("[FAULT] ")
    return [
        Row("seed (run again with it to reproduce)", str(seed)),
        Row("rounds of the CAD flow and knowledge writes", str(rounds)),
        Row("CAD submissions answered", str(submissions)),
        Row("crashes and timeouts fired", str(fired)),
        Row("duplicate deliveries", str(log.count("delivered twice"))),
        Row(
            "records and answers as a clean run's",
            finding or "all",
            "no difference",
            not finding,
        ),
    ]


SECTION = Section("chaos", "Chaos: a randomized run through crashes, throttles, duplicates", run)
