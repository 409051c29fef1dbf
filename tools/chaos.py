"""The chaos run's pieces: a CAD endpoint that records deliveries, an HTTP client that
remembers every status, the CAD flow with the outcome a clean run gives, and the checks made
after the drain (docs/faults.md). Used by tests/e2e/test_chaos.py (a short seeded run) and
`make bench ARGS="--only chaos"` (a longer randomized one)."""

import json
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from local.stack_process import RunningStack

BIN = Path(sys.executable).parent
BASE = "/api/v1/external"
DRAIN_SECONDS = 150
# Every fault point of each consumer (docs/faults.md).
FAULT_POINTS = {
    "CadWorkerFunction": (
        "cad.before_incident_write",
        "cad.after_incident_write",
        "cad.after_outcome_recorded",
    ),
    "WebhookDispatcherFunction": (
        "webhook.after_claim",
        "webhook.after_send",
        "webhook.after_attempt_recorded",
    ),
    "AuditWriterFunction": ("audit.after_append",),
    "KnowledgeDigestFunction": ("digest.before_complete", "digest.after_complete"),
    "IncidentUploadWorkerFunction": (
        "upload.after_claim",
        "upload.after_rows_applied",
        "upload.before_finish",
    ),
    "AuditExportWorkerFunction": ("export.after_file_written",),
}
THROTTLES = [
    ("CadWorkerFunction", "CadTable", "ProvisionedThroughputExceededException"),
    ("CadWorkerFunction", "TenantDataTable", "InternalServerError"),
    ("WebhookDispatcherFunction", "CadTable", "TransactionCanceledException"),
    ("IncidentUploadWorkerFunction", "TenantDataTable", "ProvisionedThroughputExceededException"),
    ("AuditExportWorkerFunction", "AuditTable", "ProvisionedThroughputExceededException"),
    ("KnowledgeDigestFunction", "KnowledgeTable", "InternalServerError"),
]
DUPLICATED_QUEUES = (
    "CadIntakeQueue",
    "WebhookQueue",
    "AuditQueue",
    "KnowledgeDigestQueue",
    "IncidentUploadQueue",
    "AuditExportQueue",
)


class ChaosViolation(AssertionError):
    """What a clean run would not have left: the run's finding, not a crash of the tool."""


def expect(condition: object, detail: object) -> None:
    if not condition:
        raise ChaosViolation(str(detail))


def aws_faults(probability: float) -> list[dict[str, Any]]:
    """Throttles and errors on the consumers' tables, SlowDown from S3, duplicate messages."""
    rules: list[dict[str, Any]] = [
        {
            "fault": "dynamodb-error",
            "function": function_id,
            "table": table,
            "error": error,
            "probability": probability,
        }
        for function_id, table, error in THROTTLES
    ]
    rules += [
        {"fault": "s3-slowdown", "function": function_id, "probability": probability}
        for function_id in ("IncidentUploadWorkerFunction", "AuditExportWorkerFunction")
    ]
    rules += [
        {"fault": "sqs-duplicate", "queue": queue, "probability": 2 * probability}
        for queue in DUPLICATED_QUEUES
    ]
    return rules


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

    def connect(self, partner: "Client") -> None:
        """A connector of the partner's tenant that delivers here."""
        connector = partner.call(
            "POST",
            BASE + "/admin/connectors",
            json={
                "name": "Chaos CAD",
                "url": self.url,
                "profile": "baseline",
                "bearerCredential": "cad-issued-bearer",
                "localDev": True,
            },
        )
        expect(connector.status_code == 201, connector.text)

    def snapshot(self) -> list[tuple[str, bytes]]:
        with self._lock:
            return list(self.deliveries)


# ---------------------------------------------------------------- the stack and a tenant


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
    expect(done.returncode == 0, done.stdout + done.stderr)
    return done.stdout


def issue(state_file: Path, tenant: str, kind: str, *, permissions: str) -> str:
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


def submission(tenant_id: str, number: str, event_id: str, *, kind: str, minute: int) -> Any:
    return {
        "specversion": "1.0",
        "id": event_id,
        "source": "urn:cad:chaos",
        "type": kind,
        "time": f"2026-11-23T03:{minute:02d}:00Z",
        "tenantId": int(tenant_id),
        "data": {"number": number, "incidentType": f"Type at {minute}", "location": "1 Main St"},
    }


def new_tenant(stack: RunningStack) -> tuple[Client, Client, str]:
    created = psap_admin(stack.state_file, "tenant", "create", "--name", "Chaos County")
    found = re.search(r"created tenant (\d+) ", created)
    if found is None:
        raise ChaosViolation(created)
    tenant = found.group(1)
    permissions = "VIEW_KNOWLEDGE,MANAGE_KNOWLEDGE,ADMIN,BROWSE_EVENTS,MANAGE_EVENTS"
    partner = Client(
        stack.state["baseUrl"], issue(stack.state_file, tenant, "partner", permissions=permissions)
    )
    # The CAD's key through the admin API: one process start fewer than psap-admin.
    issued = partner.call(
        "POST",
        BASE + "/admin/credentials",
        json={"kind": "cad", "label": "chaos cad", "expiresInDays": 1},
    )
    expect(issued.status_code == 201, issued.text)
    return partner, Client(stack.state["baseUrl"], issued.json()["token"]), tenant


def cad_flow(
    cad: Client, tenant: str, endpoint: CadEndpoint, *, incidents: int = 3, wait: float = 60
) -> tuple[dict[str, str], list[str]]:
    """Per incident a creation and two updates, the newer sent before the older (out of
    order), one submission sent twice (a CAD retry); each answered before the next of its
    incident is sent, so a clean run's outcome of each is defined. The incidents run side
    by side. Returns receipt -> that outcome, and the incident numbers."""
    numbers = [f"CH-{uuid.uuid4().hex[:6]}-{n}" for n in range(incidents)]
    plan = [
        ("incident.created", 10, "CREATED"),
        ("incident.updated", 30, "UPDATED"),
        ("incident.updated", 20, "STALE_IGNORED"),
    ]

    def one_incident(number: str) -> dict[str, str]:
        expected: dict[str, str] = {}
        body: Any = None
        for kind, minute, outcome in plan:
            body = submission(tenant, number, f"{number}-{minute}", kind=kind, minute=minute)
            answer = cad.call("POST", "/cad/v1/incidents", json=body)
            expect(answer.status_code == 202, answer.text)
            receipt = answer.json()["receiptId"]
            expected[receipt] = outcome
            expect(until(_answered_by(endpoint, receipt), wait), f"no update for {receipt}")
        again = cad.call("POST", "/cad/v1/incidents", json=body)
        expect(
            again.status_code == 202 and again.json()["receiptId"] in expected,
            'again.status_code == 202 and again.json()["receiptId"] in expected',
        )
        return expected

    with ThreadPoolExecutor(len(numbers)) as pool:
        answers = list(pool.map(one_incident, numbers))
    return {receipt: outcome for part in answers for receipt, outcome in part.items()}, numbers


def knowledge_writes(partner: Client, entries: int = 3) -> list[str]:
    ids = []
    for n in range(entries):
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
        expect(written.status_code == 201, written.text)
        ids.append(str(written.json()["id"]))
    return ids


def upload(partner: Client) -> tuple[str, int]:
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
    expect(posted.status_code == 204, posted.text)
    started = partner.call("POST", f"{BASE}/incidents/uploads/{ticket['uploadId']}/start")
    expect(started.status_code == 202, started.text)
    return started.headers["Location"], rows


def check_cad(
    partner: Client, endpoint: CadEndpoint, expected: dict[str, str], *, numbers: list[str]
) -> None:
    unanswered = [receipt for receipt in expected if not until(_answered_by(endpoint, receipt))]
    expect(not unanswered, f"no update for {unanswered}")
    bodies: dict[str, set[bytes]] = {}
    for delivery_id, body in endpoint.snapshot():
        bodies.setdefault(delivery_id, set()).add(body)
    expect(all(len(copies) == 1 for copies in bodies.values()), "a delivery id with two bodies")
    told: dict[str, list[str]] = {}
    incident_ids: dict[str, set[int]] = {}
    for copies in bodies.values():
        event = json.loads(next(iter(copies)))
        if event["type"] == "incident.accepted":
            data = event["data"]
            told.setdefault(data["receiptId"], []).append(data["outcome"])
            incident_ids.setdefault(data["cadIncidentNumber"], set()).add(data["incidentId"])
    clean_run = {receipt: [outcome] for receipt, outcome in expected.items()}
    expect(told == clean_run, f"the CAD was told {told}; a clean run tells {clean_run}")
    for number in numbers:
        (incident_id,) = incident_ids[number]
        incident = partner.call("GET", f"{BASE}/mcp/resources/incidents/{incident_id}").json()
        held = (incident["number"], incident["incidentType"])
        expect(held == (number, "Type at 30"), f"incident {number} holds {held}")


def check_knowledge(partner: Client, knowledge_ids: list[str]) -> None:
    for knowledge_id in knowledge_ids:
        card = f"{BASE}/mcp/resources/knowledge/{knowledge_id}/card"
        expect(until(_card_ready(partner, card)), f"{card} never READY")
    listed = partner.call("GET", BASE + "/knowledge", params={"size": 100}).json()
    expect(listed["totalItems"] == len(knowledge_ids), f"{listed['totalItems']} entries listed")
    ids = sorted(str(entry["id"]) for entry in listed["items"])
    expect(ids == sorted(knowledge_ids), f"listed {ids}, written {sorted(knowledge_ids)}")


def _card_ready(partner: Client, card: str) -> Callable[[], bool]:
    return lambda: partner.call("GET", card).json().get("processingStatus") == "READY"


def _answered_by(endpoint: CadEndpoint, receipt: str) -> Callable[[], bool]:
    return lambda: answered(endpoint, receipt)


def answered(endpoint: CadEndpoint, receipt: str) -> bool:
    return any(receipt.encode() in body for _, body in endpoint.snapshot())


def finished(client: Client, location: str) -> dict[str, Any]:
    status: dict[str, Any] = {}

    def done() -> bool:
        nonlocal status
        status = client.call("GET", location).json()
        return status.get("status") in ("SUCCEEDED", "FAILED")

    expect(until(done), status)
    return status


def start_export(partner: Client) -> str:
    """An audit export of the last hour; its status location."""
    export = partner.call(
        "POST",
        BASE + "/audit-log/exports",
        json={
            "from": (datetime.now(UTC) - timedelta(hours=1)).isoformat(),
            "to": (datetime.now(UTC) + timedelta(minutes=5)).isoformat(),
        },
    )
    expect(export.status_code == 202, export.text)
    return str(export.headers["Location"])


def check_job(partner: Client, location: str) -> dict[str, Any]:
    """The job ended SUCCEEDED, or FAILED with a reason."""
    job = finished(partner, location)
    expect(job["status"] == "SUCCEEDED" or job.get("failure"), job)
    return job


def server_errors(*clients: Client) -> list[tuple[str, int]]:
    return [call for client in clients for call in client.statuses if call[1] >= 500]
