"""Chaos: the local stack over real HTTP with the fault injector on (docs/faults.md).

A stack of its own, started with a seeded fault plan: every queue consumer crashes at its
fault points (once each), the CAD worker also times out once and meets latency, their tables
answer throttles, server errors and cancelled transactions, S3 answers SlowDown, and the
queues deliver messages twice. Through it run the CAD flow, knowledge writes, an incident
upload through the worker and an audit export. After the drain:
- every CAD submission is answered once, with the outcome a clean run gives (CREATED for a
  number's first update, UPDATED after, STALE_IGNORED for an older one), and every delivery
  the CAD receives has one id and one body, however often it arrives;
- every incident exists once per number and holds the newest update;
- every knowledge entry written is there once, its card READY;
- the upload and the export end SUCCEEDED (or FAILED with a reason);
- no answer was a 5xx, and the faults did fire (the log shows them).

Timeouts and visibility timeouts run at 1/TIME_SCALE so a crash costs seconds; the upload
and export workers are only throttled and duplicated, not crashed: their queues' visibility
timeouts (90 and 30 minutes, for 15- and 5-minute jobs) would keep a crashed job waiting
longer than a test should, even scaled (`make bench ARGS="--only chaos"` crashes them too).
"""

import json
from collections.abc import Iterator
from typing import Any

import pytest

from local.stack_process import RunningStack, StackDidNotStart, running_stack
from tools.chaos import (
    FAULT_POINTS,
    CadEndpoint,
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

pytestmark = pytest.mark.e2e

TIME_SCALE = 20
START_SECONDS = 300
SEED = 2026
# Their queues' visibility timeouts stay long even scaled (see above).
NOT_CRASHED = ("IncidentUploadWorkerFunction", "AuditExportWorkerFunction")


def fault_plan() -> dict[str, Any]:
    rules: list[dict[str, Any]] = [
        {"fault": "crash", "function": function_id, "point": point, "times": 1}
        for function_id, points in FAULT_POINTS.items()
        if function_id not in NOT_CRASHED
        for point in points
    ]
    rules += [
        {
            "fault": "timeout",
            "function": "CadWorkerFunction",
            "point": "cad.after_incident_write",
            "times": 1,
        },
        {
            "fault": "latency",
            "function": "CadWorkerFunction",
            "milliseconds": 100,
            "probability": 0.2,
        },
        *aws_faults(0.15),
    ]
    return {"seed": SEED, "timeScale": TIME_SCALE, "rules": rules}


@pytest.fixture(scope="module")
def chaos_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    folder = tmp_path_factory.mktemp("chaos")
    faults = folder / "faults.json"
    faults.write_text(json.dumps(fault_plan(), indent=1))
    try:
        with running_stack(
            folder, "--no-demo", "--faults", str(faults), timeout=START_SECONDS
        ) as running:
            yield running
    except StackDidNotStart as failure:
        pytest.fail(str(failure), pytrace=False)


def test_faults_change_neither_what_happened_nor_what_the_cad_is_told(
    chaos_stack: RunningStack,
) -> None:
    partner, cad, tenant = new_tenant(chaos_stack)
    endpoint = CadEndpoint()
    endpoint.connect(partner)
    # When the CAD flow, knowledge writes, an upload and an export run through the faults
    expected, numbers = cad_flow(cad, tenant, endpoint)
    knowledge_ids = knowledge_writes(partner)
    upload_location, rows = upload(partner)
    export_location = start_export(partner)
    # Then, after the drain, each is as a clean run leaves it
    check_cad(partner, endpoint, expected, numbers=numbers)
    check_knowledge(partner, knowledge_ids)
    uploaded = check_job(partner, upload_location)
    if uploaded["status"] == "SUCCEEDED":
        assert (uploaded["rows"], uploaded["created"]) == (rows, rows)
    check_job(partner, export_location)
    # And no answer was a server error, and the faults did fire
    assert server_errors(partner, cad) == []
    log = chaos_stack.log_file.read_text(errors="replace")
    assert log.count("[FAULT] crash") >= 4, "the crash rules never fired"
    assert "delivered twice" in log
