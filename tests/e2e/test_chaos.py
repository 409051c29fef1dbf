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
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from local.stack_process import RunningStack, StackDidNotStart, running_stack

pytestmark = pytest.mark.e2e

BIN = Path(sys.executable).parent
BASE = "/api/v1/external"
TIME_SCALE = 20
DRAIN_SECONDS = 150
START_SECONDS = 300
SEED = 2026


def crash_at_every_point(function_id: str, *points: str) -> list[dict[str, Any]]:
    return [
        {"fault": "crash", "function": function_id, "point": point, "times": 1} for point in points
    ]


def fault_plan() -> dict[str, Any]:
    rules: list[dict[str, Any]] = [
        *crash_at_every_point(
            "CadWorkerFunction",
            "cad.before_incident_write",
            "cad.after_incident_write",
            "cad.after_outcome_recorded",
        ),
        *crash_at_every_point(
            "WebhookDispatcherFunction",
            "webhook.after_claim",
            "webhook.after_send",
            "webhook.after_attempt_recorded",
        ),
        *crash_at_every_point("AuditWriterFunction", "audit.after_append"),
        *crash_at_every_point(
            "KnowledgeDigestFunction", "digest.before_complete", "digest.after_complete"
        ),
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
    ]
    throttles = [
        ("CadWorkerFunction", "CadTable", "ProvisionedThroughputExceededException"),
        ("CadWorkerFunction", "TenantDataTable", "InternalServerError"),
        ("WebhookDispatcherFunction", "CadTable", "TransactionCanceledException"),
        (
            "IncidentUploadWorkerFunction",
            "TenantDataTable",
            "ProvisionedThroughputExceededException",
        ),
        ("AuditExportWorkerFunction", "AuditTable", "ProvisionedThroughputExceededException"),
        ("KnowledgeDigestFunction", "KnowledgeTable", "InternalServerError"),
    ]
    rules += [
        {
            "fault": "dynamodb-error",
            "function": function_id,
            "table": table,
            "error": error,
            "probability": 0.15,
        }
        for function_id, table, error in throttles
    ]
    rules += [
        {"fault": "s3-slowdown", "function": function_id, "probability": 0.2}
        for function_id in ("IncidentUploadWorkerFunction", "AuditExportWorkerFunction")
    ]
    rules += [
        {"fault": "sqs-duplicate", "queue": queue, "probability": 0.3}
        for queue in (
            "CadIntakeQueue",
            "WebhookQueue",
            "AuditQueue",
            "KnowledgeDigestQueue",
            "IncidentUploadQueue",
            "AuditExportQueue",
        )
    ]
    return {"seed": SEED, "timeScale": TIME_SCALE, "rules": rules}


# ---------------------------------------------------------------- the CAD's endpoint


class CadEndpoint:
    """The CAD's webhook endpoint: records every delivery (id, body) and answers 200."""

    def __init__(self) -> None:
        self.deliveries: list[tuple[str, bytes]] = []
        self._lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with endpoint._lock:
                    endpoint.deliveries.append((self.headers["X-SVC-Delivery-Id"], body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/cad-updates"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def snapshot(self) -> list[tuple[str, bytes]]:
        with self._lock:
            return list(self.deliveries)


# ---------------------------------------------------------------- the stack and a tenant


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


class Client:
    """HTTP to the stack, remembering every status it answered."""

    def __init__(self, base_url: str, token: str) -> None:
        self.base_url = base_url
        self.headers = {"Authorization": f"Bearer {token}"}
        self.statuses: list[tuple[str, int]] = []  # list.append is atomic: threads share it
        self._http = httpx.Client(timeout=60)

    def call(self, method: str, path: str, **options: Any) -> httpx.Response:
        url = path if path.startswith("http") else self.base_url + path
        headers = {**self.headers, **options.pop("headers", {})}
        answer = self._http.request(method, url, headers=headers, **options)
        self.statuses.append((f"{method} {path}", answer.status_code))
        return answer


def psap_admin(state_file: Path, *arguments: str) -> str:
    done = subprocess.run(
        [str(BIN / "psap-admin"), "--state-file", str(state_file), *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def issue(state_file: Path, tenant: str, kind: str, permissions: str) -> str:
    lines = psap_admin(
        state_file,
        *("credential", "issue", "--tenant", tenant, "--kind", kind),
        *("--permissions", permissions, "--label", f"chaos {kind}", "--expires-in-days", "1"),
    ).splitlines()
    return lines[lines.index("token (shown once, store it now):") + 1].strip()


def until(check: Callable[[], bool], seconds: float = DRAIN_SECONDS) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.5)
    return check()


def submission(tenant_id: str, number: str, event_id: str, kind: str, minute: int) -> Any:
    return {
        "specversion": "1.0",
        "id": event_id,
        "source": "urn:cad:chaos",
        "type": kind,
        "time": f"2026-11-23T03:{minute:02d}:00Z",
        "tenantId": int(tenant_id),
        "data": {"number": number, "incidentType": f"Type at {minute}", "location": "1 Main St"},
    }


# ---------------------------------------------------------------- the run


def test_faults_change_neither_what_happened_nor_what_the_cad_is_told(
    chaos_stack: RunningStack,
) -> None:
    partner, cad, tenant = _tenant(chaos_stack)
    endpoint = CadEndpoint()
    connector = partner.call(
        "POST",
        BASE + "/admin/connectors",
        json={
            "name": "Chaos CAD",
            "url": endpoint.url,
            "profile": "baseline",
            "bearerCredential": "cad-issued-bearer",
            "localDev": True,
        },
    )
    assert connector.status_code == 201, connector.text
    # When the CAD flow, knowledge writes, an upload and an export run through the faults
    expected, numbers = _cad_flow(cad, tenant, endpoint)
    knowledge_ids = _knowledge_writes(partner)
    upload_location, rows = _upload(partner)
    export = partner.call(
        "POST",
        BASE + "/audit-log/exports",
        json={
            "from": (datetime.now(UTC) - timedelta(hours=1)).isoformat(),
            "to": (datetime.now(UTC) + timedelta(minutes=5)).isoformat(),
        },
    )
    assert export.status_code == 202, export.text
    # Then, after the drain, each is as a clean run leaves it
    _check_cad(partner, endpoint, expected, numbers)
    _check_knowledge(partner, knowledge_ids)
    upload = _finished(partner, upload_location)
    assert upload["status"] == "SUCCEEDED" or upload.get("failure"), upload
    if upload["status"] == "SUCCEEDED":
        assert (upload["rows"], upload["created"]) == (rows, rows)
    exported = _finished(partner, export.headers["Location"])
    assert exported["status"] == "SUCCEEDED" or exported.get("failure"), exported
    # And no answer was a server error, and the faults did fire
    assert [call for call in partner.statuses + cad.statuses if call[1] >= 500] == []
    log = chaos_stack.log_file.read_text(errors="replace")
    assert log.count("[FAULT] crash") >= 4, "the crash rules never fired"
    assert "delivered twice" in log


def _tenant(stack: RunningStack) -> tuple[Client, Client, str]:
    created = psap_admin(stack.state_file, "tenant", "create", "--name", "Chaos County")
    found = re.search(r"created tenant (\d+) ", created)
    assert found, created
    tenant = found.group(1)
    permissions = "VIEW_KNOWLEDGE,MANAGE_KNOWLEDGE,ADMIN,BROWSE_EVENTS,MANAGE_EVENTS"
    partner = Client(
        stack.state["baseUrl"], issue(stack.state_file, tenant, "partner", permissions)
    )
    # The CAD's key through the admin API: one process start fewer than psap-admin.
    issued = partner.call(
        "POST",
        BASE + "/admin/credentials",
        json={"kind": "cad", "label": "chaos cad", "expiresInDays": 1},
    )
    assert issued.status_code == 201, issued.text
    return partner, Client(stack.state["baseUrl"], issued.json()["token"]), tenant


def _cad_flow(cad: Client, tenant: str, endpoint: CadEndpoint) -> tuple[dict[str, str], list[str]]:
    """Per incident a creation and two updates, the newer sent before the older (out of
    order), one submission sent twice (a CAD retry); each answered before the next of its
    incident is sent, so a clean run's outcome of each is defined. The incidents run side
    by side. Returns receipt -> that outcome, and the incident numbers."""
    numbers = [f"CH-{uuid.uuid4().hex[:6]}-{n}" for n in range(3)]
    plan = [
        ("incident.created", 10, "CREATED"),
        ("incident.updated", 30, "UPDATED"),
        ("incident.updated", 20, "STALE_IGNORED"),
    ]

    def one_incident(number: str) -> dict[str, str]:
        expected: dict[str, str] = {}
        body: Any = None
        for kind, minute, outcome in plan:
            body = submission(tenant, number, f"{number}-{minute}", kind, minute)
            answer = cad.call("POST", "/cad/v1/incidents", json=body)
            assert answer.status_code == 202, answer.text
            receipt = answer.json()["receiptId"]
            expected[receipt] = outcome
            assert until(lambda r=receipt: _answered(endpoint, r), 60), f"no update for {receipt}"
        again = cad.call("POST", "/cad/v1/incidents", json=body)
        assert again.status_code == 202 and again.json()["receiptId"] in expected
        return expected

    with ThreadPoolExecutor(len(numbers)) as pool:
        answers = list(pool.map(one_incident, numbers))
    return {receipt: outcome for part in answers for receipt, outcome in part.items()}, numbers


def _knowledge_writes(partner: Client) -> list[str]:
    ids = []
    for n in range(3):
        written = partner.call(
            "POST",
            BASE + "/knowledge",
            json={
                "name": f"Chaos card {n}",
                "provider": "NENA",
                "knowledgeType": "INSTRUCTION_CARD",
                "externalId": f"chaos-{uuid.uuid4().hex[:8]}",
                "apiControl": {},
                "spokenInstructions": [{"instructionText": f"Step {n}."}],
            },
        )
        assert written.status_code == 201, written.text
        ids.append(str(written.json()["id"]))
    return ids


def _upload(partner: Client) -> tuple[str, int]:
    """An incident upload through the presigned form and the worker; its status location."""
    ticket = partner.call("POST", BASE + "/incidents/uploads", json={"format": "csv"}).json()
    rows = 120
    prefix = f"UP-{uuid.uuid4().hex[:6]}"
    lines = "".join(f"{prefix}-{n},3,{n} Elm St\n" for n in range(rows))
    posted = httpx.post(
        ticket["uploadUrl"],
        data=ticket["uploadFields"],
        files={"file": ("f.csv", ("number,priority,location\n" + lines).encode())},
        timeout=60,
    )
    assert posted.status_code == 204, posted.text
    started = partner.call("POST", f"{BASE}/incidents/uploads/{ticket['uploadId']}/start")
    assert started.status_code == 202, started.text
    return started.headers["Location"], rows


def _check_cad(
    partner: Client, endpoint: CadEndpoint, expected: dict[str, str], numbers: list[str]
) -> None:
    assert until(lambda: all(_answered(endpoint, receipt) for receipt in expected))
    bodies: dict[str, set[bytes]] = {}
    for delivery_id, body in endpoint.snapshot():
        bodies.setdefault(delivery_id, set()).add(body)
    assert all(len(copies) == 1 for copies in bodies.values()), "a delivery id with two bodies"
    told: dict[str, list[str]] = {}
    incident_ids: dict[str, set[int]] = {}
    for copies in bodies.values():
        event = json.loads(next(iter(copies)))
        if event["type"] == "incident.accepted":
            data = event["data"]
            told.setdefault(data["receiptId"], []).append(data["outcome"])
            incident_ids.setdefault(data["cadIncidentNumber"], set()).add(data["incidentId"])
    assert told == {receipt: [outcome] for receipt, outcome in expected.items()}
    for number in numbers:
        (incident_id,) = incident_ids[number]
        incident = partner.call("GET", f"{BASE}/mcp/resources/incidents/{incident_id}").json()
        assert (incident["number"], incident["incidentType"]) == (number, "Type at 30")


def _check_knowledge(partner: Client, knowledge_ids: list[str]) -> None:
    for knowledge_id in knowledge_ids:
        card = f"{BASE}/mcp/resources/knowledge/{knowledge_id}/card"
        assert until(
            lambda c=card: partner.call("GET", c).json().get("processingStatus") == "READY"
        ), card
    listed = partner.call("GET", BASE + "/knowledge", params={"size": 50}).json()
    assert listed["totalItems"] == len(knowledge_ids)
    assert sorted(entry["name"] for entry in listed["items"]) == [
        f"Chaos card {n}" for n in range(len(knowledge_ids))
    ]


def _answered(endpoint: CadEndpoint, receipt: str) -> bool:
    return any(receipt.encode() in body for _, body in endpoint.snapshot())


def _finished(client: Client, location: str) -> dict[str, Any]:
    status: dict[str, Any] = {}

    def done() -> bool:
        nonlocal status
        status = client.call("GET", location).json()
        return status.get("status") in ("SUCCEEDED", "FAILED")

    assert until(done), status
    return status
