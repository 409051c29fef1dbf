"""The audit log over real HTTP through the local stack: a call's audit line travels through
the template's log subscription to the writer, and an Admin's export, run by the SQS
worker, is downloaded through its presigned URL from the embedded S3."""

import json
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.e2e

BASE = "/api/v1/external"


def _admin(stack: dict[str, Any], index: int) -> str:
    return str(stack["tenants"][index]["credentials"]["admin"])


def _export(stack: dict[str, Any], token: str, **filters: Any) -> dict[str, Any]:
    """Starts an export of the last hour and waits for the worker to finish it."""
    now = datetime.now(UTC)
    body = {
        "from": (now - timedelta(hours=1)).isoformat(),
        "to": (now + timedelta(minutes=5)).isoformat(),
        **filters,
    }
    headers = {"Authorization": f"Bearer {token}"}
    started = httpx.post(
        stack["baseUrl"] + BASE + "/audit-log/exports", json=body, headers=headers, timeout=30
    )
    assert started.status_code == 202, started.text
    location = stack["baseUrl"] + started.headers["Location"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = httpx.get(location, headers=headers, timeout=30).json()
        if status["status"] in ("SUCCEEDED", "FAILED"):
            result: dict[str, Any] = status
            return result
        time.sleep(0.5)
    raise AssertionError(f"export still {status['status']} after 60 s")


def _records(export: dict[str, Any]) -> list[dict[str, Any]]:
    assert export["status"] == "SUCCEEDED", export
    download = httpx.get(export["downloadUrl"], timeout=30)
    assert download.status_code == 200
    return [json.loads(line) for line in download.text.splitlines()]


def test_a_call_is_audited_and_exported_through_a_presigned_url(stack: dict[str, Any]) -> None:
    # Given a call of tenant 0's admin with a user agent no other call has
    agent = f"e2e-audit/{uuid.uuid4()}"
    token = _admin(stack, 0)
    answer = httpx.get(
        stack["baseUrl"] + BASE + "/mcp/resources/incidents/987654321",
        headers={"Authorization": f"Bearer {token}", "User-Agent": agent},
        timeout=30,
    )
    assert answer.status_code == 404
    # When the admin exports the last hour's getIncident calls (records arrive in seconds)
    deadline = time.monotonic() + 60
    mine: list[dict[str, Any]] = []
    while not mine and time.monotonic() < deadline:
        export = _export(stack, token, operation="getIncident")
        mine = [record for record in _records(export) if record["userAgent"] == agent]
        if not mine:
            time.sleep(1)
    # Then the file holds the call with who, what and the outcome
    (record,) = mine
    assert record["tenantId"] == stack["tenants"][0]["id"]
    assert record["status"] == 404
    assert record["resourceIds"] == {"incidentId": "987654321"}
    assert record["sourceIp"] == "127.0.0.1"
    assert export["recordCount"] >= 1
    # And another tenant's export of the same hour never contains it
    if len(stack["tenants"]) > 1:
        other = _records(_export(stack, _admin(stack, 1)))
        assert all(record["userAgent"] != agent for record in other)
        assert {record["tenantId"] for record in other} <= {stack["tenants"][1]["id"]}
