"""The audit log over real HTTP through the local stack: a call's audit record travels through
the template's audit queue to the writer, and an Admin's export, run by the SQS worker, is
downloaded through its presigned URL from the embedded S3; `psap-admin audit verify` checks
it, and names the first bad line of a copy with one record altered, removed or added."""

import json
import os
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
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


def _file(export: dict[str, Any]) -> str:
    assert export["status"] == "SUCCEEDED", export
    download = httpx.get(export["downloadUrl"], timeout=30)
    assert download.status_code == 200
    return download.text


def _records(export: dict[str, Any]) -> list[dict[str, Any]]:
    """The records asked for (not the other records' links, nor the chains' heads)."""
    lines = [json.loads(line) for line in _file(export).splitlines()]
    return [line for line in lines if "requestId" in line]


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


def _verify(path: Path, state_file: Path) -> subprocess.CompletedProcess[str]:
    # The installed command, as an auditor runs it. A file the stack's sealer has sealed
    # (every five minutes) is checked with the sealing key's public key, from the stack.
    command = [str(Path(sys.executable).parent / "psap-admin"), "audit", "verify", str(path)]
    environment = {**os.environ, "PSAP_LOCAL_STATE_FILE": str(state_file)}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=60, check=False, env=environment
    )


def test_a_refused_login_is_in_the_export_whose_chains_verify_until_one_record_changes(
    stack: dict[str, Any], stack_state_file: Path, tmp_path: Path
) -> None:
    # Given a partner credential of tenant 0, revoked, then used on the data interface
    # (its authorizer reads it and refuses it: a refusal of a known credential). A token
    # refused unread (malformed, of the other interface by its prefix) is a metric only.
    token = _admin(stack, 0)
    base = stack["baseUrl"]
    headers = {"Authorization": f"Bearer {token}"}
    issued = httpx.post(
        f"{base}{BASE}/admin/credentials",
        json={
            "kind": "partner",
            "permissions": ["VIEW_KNOWLEDGE"],
            "label": f"e2e refused {uuid.uuid4()}",
            "expiresInDays": 30,
        },
        headers=headers,
        timeout=30,
    )
    assert issued.status_code == 201, issued.text
    revoked_token = issued.json()["token"]
    credential_id = issued.json()["credential"]["credentialId"]
    revoked = httpx.post(
        f"{base}{BASE}/admin/credentials/{credential_id}/revoke", headers=headers, timeout=30
    )
    assert revoked.status_code == 200, revoked.text
    refused = httpx.get(
        f"{base}{BASE}/mcp/resources/incidents/1",
        headers={"Authorization": f"Bearer {revoked_token}"},
        timeout=30,
    )
    assert refused.status_code == 401
    # When the tenant's Admin exports the last hour (records arrive in seconds)
    deadline = time.monotonic() + 60
    mine: list[dict[str, Any]] = []
    while not mine and time.monotonic() < deadline:
        export = _export(stack, token)
        mine = [r for r in _records(export) if r["credentialId"] == credential_id]
        if not mine:
            time.sleep(1)
    # Then the refusal is there: the credential, 401, never the token
    (record,) = mine
    assert (record["operation"], record["status"], record["tenantId"]) == (
        "authenticate",
        401,
        stack["tenants"][0]["id"],
    )
    text = _file(export)
    assert revoked_token not in text
    # And the file verifies; a copy with one record altered, removed or added does not
    lines = text.splitlines()
    intact = tmp_path / "intact.ndjson"
    intact.write_text(text, encoding="utf-8")
    verified = _verify(intact, stack_state_file)
    assert verified.returncode == 0, verified.stderr
    # (the refusal's own line: the revocation's record names the credential too, with a 200)
    index = next(i for i, line in enumerate(lines) if json.loads(line) == record)
    altered = json.loads(lines[index])
    altered["status"] = 200
    removed_copy = [*lines[:index], *lines[index + 1 :]]
    added = {**json.loads(lines[index]), "requestId": str(uuid.uuid4())}
    copies = {
        "altered": [*lines[:index], json.dumps(altered), *lines[index + 1 :]],
        "removed": removed_copy,
        "added": [*lines[: index + 1], json.dumps(added), *lines[index + 1 :]],
    }
    for name, copy in copies.items():
        path = tmp_path / f"{name}.ndjson"
        path.write_text("\n".join(copy) + "\n", encoding="utf-8")
        outcome = _verify(path, stack_state_file)
        assert outcome.returncode == 1, (name, outcome.stdout)
        assert f"line {index + 1} " in outcome.stderr or f"line {index + 2} " in outcome.stderr, (
            name,
            outcome.stderr,
        )
