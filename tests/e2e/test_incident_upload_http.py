"""Incident upload over real HTTP through the local stack: a CSV applied synchronously and
read back through the incidents endpoint, and a large file through a presigned S3 POST (its
policy bounding the file's size), the start call, the upload worker (the stack's SQS poller)
and the status resource."""

import time
import uuid
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.e2e

BASE = "/api/v1/external"


def admin(stack: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {stack['tenants'][0]['credentials']['admin']}"}


def test_a_csv_upload_is_read_back_through_the_incidents_endpoint(stack: dict[str, Any]) -> None:
    # Given a CSV of two new incidents
    prefix = f"E2E-{uuid.uuid4().hex[:8]}"
    body = (
        "number,priority,incidentType,location,incidentDate\n"
        f"{prefix}-1,1,Structure Fire,1200 Main St,2026-11-23T02:32:15Z\n"
        f"{prefix}-2,2,Welfare Check,88 Oak Ave,not-a-time\n"
    )
    # When it is POSTed
    answer = httpx.post(
        stack["baseUrl"] + BASE + "/incidents/upload",
        content=body.encode(),
        headers={**admin(stack), "Content-Type": "text/csv"},
        timeout=60,
    )
    # Then one is created and the bad row reported with its line
    assert answer.status_code == 200, answer.text
    report = answer.json()
    assert (report["created"], report["rejected"]) == (1, 1)
    assert report["rejections"][0]["line"] == 3
    # And the incident reads back through GET /mcp/resources/incidents/{id}
    incident_id = report["incidents"][0]["id"]
    read = httpx.get(
        f"{stack['baseUrl']}{BASE}/mcp/resources/incidents/{incident_id}",
        headers=admin(stack),
        timeout=30,
    )
    assert read.status_code == 200
    assert read.json()["number"] == f"{prefix}-1"
    assert read.json()["incidentDate"] == "2026-11-23T02:32:15.000Z"


def test_a_large_file_goes_through_a_presigned_post_and_the_status_resource(
    stack: dict[str, Any],
) -> None:
    # Given an upload created for a CSV file
    created = httpx.post(
        stack["baseUrl"] + BASE + "/incidents/uploads",
        json={"format": "csv"},
        headers=admin(stack),
        timeout=30,
    )
    assert created.status_code == 201, created.text
    ticket = created.json()
    assert ticket["status"] == "AWAITING_FILE"
    # When the file is POSTed with the ticket's form (no Authorization header) and started
    prefix = f"BIG-{uuid.uuid4().hex[:8]}"
    rows = 600
    body = "number,priority,location\n" + "".join(
        f"{prefix}-{n},3,{n} Elm St\n" for n in range(rows)
    )
    posted = httpx.post(
        ticket["uploadUrl"],
        data=ticket["uploadFields"],
        files={"file": ("incidents.csv", body.encode())},
        timeout=60,
    )
    assert posted.status_code == 204, posted.text
    started = httpx.post(
        f"{stack['baseUrl']}{BASE}/incidents/uploads/{ticket['uploadId']}/start",
        headers=admin(stack),
        timeout=30,
    )
    assert started.status_code == 202, started.text
    # Then the status resource reaches SUCCEEDED with every row created
    status: dict[str, Any] = {}
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = httpx.get(
            stack["baseUrl"] + started.headers["Location"], headers=admin(stack), timeout=30
        ).json()
        if status["status"] in ("SUCCEEDED", "FAILED"):
            break
        time.sleep(0.5)
    assert status["status"] == "SUCCEEDED", status
    assert (status["rows"], status["created"], status["rejected"]) == (rows, rows, 0)
    # And another tenant cannot see it
    other = {"Authorization": f"Bearer {stack['tenants'][1]['credentials']['admin']}"}
    hidden = httpx.get(stack["baseUrl"] + started.headers["Location"], headers=other, timeout=30)
    assert hidden.status_code == 404
