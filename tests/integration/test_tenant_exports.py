"""Tenant exports over the Admin API (POST/GET /api/v1/external/admin/tenant-exports):
everything a tenant owns in the offboarding's signed archive, run by the export worker in
steps, one at a time per tenant, and nothing deleted.

Given/When/Then in each test; the handlers and the worker run as Lambda would run them
(their sample events, under their roles), against moto.
"""

import hashlib
import json
import urllib.request
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from psap import clock
from psap.auth import store as tenants
from psap.auth.credentials import OPERATOR, CredentialKind
from psap.auth.permissions import parse_permissions
from psap.config import audit_export_queue_url, settings
from psap.media.models import RadioTrafficMedia
from psap.media.store import create_radio_traffic, next_media_id
from psap.offboarding.archive import verify_archive
from psap.offboarding.exports import running_key
from psap.storage.dynamodb import dynamodb
from psap.storage.sqs import sqs
from tests.conftest import TEMPLATE
from tests.support.harness import HandlerHarness, answer_of, json_body
from tests.support.tenant_records import (
    archive_members,
    audited_operator_action,
    imported_tenant,
)
from tools.admin import main

FUNCTIONS = (
    "AdminTenantExportCreateFunction",
    "AdminTenantExportGetFunction",
    "AuditExportWorkerFunction",
)


class TenantExportApi(HandlerHarness):
    """The two routes, called with their sample events as a real credential of the tenant
    (the admin API re-reads its caller's), and the worker fed from its queue."""

    def prepare(self) -> None:
        self.callers: dict[tuple[int, str], str] = {}

    def caller(self, tenant: int, permissions: str) -> str:
        if (tenant, permissions) not in self.callers:
            issued = tenants.issue_credential(
                tenant,
                CredentialKind.PARTNER,
                parse_permissions(permissions),
                label="tenant export test",
                expires_at=clock.utc_now() + timedelta(days=1),
                issued_by=OPERATOR,
            )
            self.callers[(tenant, permissions)] = issued.credential.credential_id
        return self.callers[(tenant, permissions)]

    def start(
        self, tenant: int, body: Any = None, *, raw: str | None = None, permissions: str = "ADMIN"
    ) -> tuple[int, Any, dict[str, str]]:
        event = self.proxy_event(
            "admin_tenant_export_create",
            tenant=tenant,
            permissions=permissions,
            credential_id=self.caller(tenant, permissions),
            body=json_body(body, raw),
        )
        return answer_of(self.call_handler("admin_tenant_export_create", event))

    def read(self, tenant: int, export_id: str) -> tuple[int, Any]:
        event = self.proxy_event(
            "admin_tenant_export_get",
            tenant=tenant,
            permissions="ADMIN",
            credential_id=self.caller(tenant, "ADMIN"),
            path={"exportId": export_id},
        )
        status, body, _ = answer_of(self.call_handler("admin_tenant_export_get", event))
        return status, body

    def work(self) -> int:
        """Runs the worker on every queued message until none is left; the steps run."""
        steps = 0
        while messages := sqs().receive_message(QueueUrl=audit_export_queue_url()).get("Messages"):
            event = self.load_event("audit_export_worker")
            event["Records"][0].update(messageId=messages[0]["MessageId"], body=messages[0]["Body"])
            answer = self.call_handler("audit_export_worker", event)
            assert answer["batchItemFailures"] == []
            sqs().delete_message(
                QueueUrl=audit_export_queue_url(), ReceiptHandle=messages[0]["ReceiptHandle"]
            )
            steps += 1
            assert steps < 200, "the export never finished"
        return steps


@pytest.fixture
def api(
    monkeypatch: pytest.MonkeyPatch,
    import_function: Callable[[str], ModuleType],
    load_event: Callable[[str], dict[str, Any]],
    lambda_context: Any,
) -> TenantExportApi:
    for logical_id in FUNCTIONS:
        for name, value in TEMPLATE.functions[logical_id].environment.items():
            monkeypatch.setenv(name, value)
    return TenantExportApi(import_function, load_event, lambda_context)


def _seed(tenant: int, base: int, tmp_path: Path) -> dict[str, Any]:
    """Users, evaluations, incidents and events (the import), a knowledge entry, a media
    record of one event, and an audit record: each kind the export must carry."""
    dataset, entry_id = imported_tenant(tenant, base, tmp_path, users=2, evaluations=2)
    event_id = dataset.events[0].id
    assert event_id is not None
    media_id = next_media_id()
    srt = f"1\n00:00:00,000 --> 00:00:02,000\nEngine {tenant} responding\n".encode()
    create_radio_traffic(
        str(settings().media_bucket),
        tenant,
        RadioTrafficMedia(
            id=media_id,
            event_id=event_id,
            channel=f"FIRE-{tenant}",
            recording_started_at=clock.utc_now(),
            duration_seconds=2.0,
            cue_count=1,
            content_sha256=f"{tenant:064x}",
            size_bytes=len(srt),
            created_at=clock.utc_now(),
        ),
        original=srt,
    )
    audited_operator_action(tenant)
    return {"dataset": dataset, "entry": entry_id, "media": media_id}


def _every_item() -> dict[str, list[tuple[str, str]]]:
    """Every key of every table (a test may scan; the export never does)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for table in TEMPLATE.tables.values():
        keys: list[tuple[str, str]] = []
        for page in dynamodb().get_paginator("scan").paginate(TableName=table.name):
            keys += [(i["pk"]["S"], i.get("sk", {}).get("S", "")) for i in page["Items"]]
        found[table.name] = sorted(keys)
    return found


def test_an_export_holds_everything_the_tenant_owns_signed_and_deletes_nothing(
    aws_server: str, api: TenantExportApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given two tenants with knowledge, incidents, events, media and audit records
    mine = tenants.create_tenant("Exporting County 911").tenant_id
    other = tenants.create_tenant("Other County 911").tenant_id
    seeded = _seed(mine, 1_000, tmp_path)
    _seed(other, 2_000, tmp_path)
    before = _every_item()
    # When the tenant's Admin starts an export and the worker runs it
    status, export, headers = api.start(mine, {"reason": "yearly copy"})
    assert status == 202, export
    assert export["state"] == "QUEUED"
    assert export["startedAt"].endswith("Z")
    assert headers["Location"].endswith(export["exportId"])
    # (the test's run has 10 s left, under the step margin: every page hands over)
    messages = api.work()
    status, done = api.read(mine, export["exportId"])
    # Then it SUCCEEDED, in steps that each went on from the last one's checkpoint, with a
    # short-lived download of an archive whose digest and signature are in the answer
    assert status == 200, done
    assert done["state"] == "SUCCEEDED", done
    assert done["progress"]["steps"] == messages > 5
    assert done["progress"]["collecting"] == "seal"
    assert done["downloadUrlExpiresAt"].endswith("Z")
    with urllib.request.urlopen(done["downloadUrl"], timeout=10) as answer:
        data = answer.read()
    archive = tmp_path / "export.tar.gz"
    archive.write_bytes(data)
    assert hashlib.sha256(data).hexdigest() == done["archive"]["sha256"]
    assert done["archive"]["sizeBytes"] == len(data)
    key = done["archive"]["verificationKey"]
    manifest = verify_archive(archive, key.encode())
    assert manifest["tenantId"] == mine
    # ... which the operator's tool verifies with the answer's key, and refuses altered
    monkeypatch.setenv("PSAP_ARCHIVE_KEY", key)
    assert main(["tenant", "verify-archive", str(archive)]) == 0
    altered = bytearray(data)
    altered[len(altered) // 2] ^= 0x01
    (tmp_path / "altered.tar.gz").write_bytes(bytes(altered))
    assert main(["tenant", "verify-archive", str(tmp_path / "altered.tar.gz")]) == 1
    # And it holds the tenant's knowledge, incidents, events, media and audit records
    files = archive_members(archive)
    dataset = seeded["dataset"]
    assert {line["number"] for line in files["incidents.jsonl"]} == {
        incident.number for incident in dataset.incidents
    }
    events = [line["id"] for line in files["events.jsonl"] if line["sk"] == "RECORD"]
    assert sorted(events) == sorted(event.id for event in dataset.events)
    assert any(line["sk"] == "ENTRY" for line in files["knowledge.jsonl"])
    assert [line["id"] for line in files["media.jsonl"] if "id" in line] == [seeded["media"]]
    audit = [line for line in files["audit.jsonl"] if "tenantId" in line]
    assert [line["tenantId"] for line in audit] == [mine]
    assert done["archive"]["records"]["incidents"] == len(dataset.incidents)
    # And nothing of the other tenant
    text = "\n".join(json.dumps(line) for lines in files.values() for line in lines)
    assert f"T#{other}#" not in text
    assert f"Chest pain {other}" not in text
    assert f"FIRE-{other}" not in text
    # And nothing was deleted: every item before is there after
    after = _every_item()
    for table, keys in before.items():
        assert set(keys) <= set(after[table]), table


def test_a_second_start_while_one_runs_is_409_and_the_next_after_it_is_202(
    aws: None,
    api: TenantExportApi,
) -> None:
    # Given a tenant whose export is queued
    tenant = tenants.create_tenant("Busy County 911").tenant_id
    other = tenants.create_tenant("Quiet County 911").tenant_id
    status, first, _ = api.start(tenant)
    assert status == 202, first
    # When its Admin starts another
    status, refused, _ = api.start(tenant)
    # Then it is refused, 409 ErrorInfo, while another tenant may start its own
    assert status == 409, refused
    assert set(refused) == {"info", "reason"}
    assert api.start(other)[0] == 202
    # And once the first is done, a new one starts
    api.work()
    assert api.read(tenant, first["exportId"])[1]["state"] == "SUCCEEDED"
    assert api.start(tenant)[0] == 202


def test_another_tenant_s_export_id_is_404(aws: None, api: TenantExportApi) -> None:
    # Given an export of one tenant
    owner = tenants.create_tenant("Owner County 911").tenant_id
    stranger = tenants.create_tenant("Stranger County 911").tenant_id
    _, export, _ = api.start(owner)
    # When another tenant reads its id, or an id that is no export at all
    status, answer = api.read(stranger, export["exportId"])
    # Then both are 404 ErrorInfo, as for an id that does not exist
    assert status == 404, answer
    assert set(answer) == {"info", "reason"}
    assert api.read(owner, "not-an-export")[0] == 404
    assert api.read(owner, export["exportId"])[0] == 200


def test_bad_input_is_400_naming_the_field(aws: None, api: TenantExportApi) -> None:
    tenant = tenants.create_tenant("Careless County 911").tenant_id
    # When the body has an unknown field, or a reason too long, or is not JSON
    unknown = api.start(tenant, {"purge": True})
    long = api.start(tenant, {"reason": "x" * 501})
    broken = api.start(tenant, raw="{not json")
    array = api.start(tenant, raw="[null, null]")  # found by the contract run: was 202
    # Then each is 400 ErrorInfo naming what is wrong, and no export started
    assert unknown[0] == 400 and "purge" in unknown[1]["info"], unknown
    assert long[0] == 400 and "reason" in long[1]["info"], long
    assert broken[0] == 400, broken
    assert array[0] == 400 and "JSON object" in array[1]["info"], array
    assert api.start(tenant)[0] == 202


def test_only_admins_start_or_read_exports(aws: None, api: TenantExportApi) -> None:
    tenant = tenants.create_tenant("Reader County 911").tenant_id
    status, answer, _ = api.start(tenant, permissions="BROWSE_EVENTS")
    assert status == 403, answer


def test_a_hold_whose_export_was_lost_lapses(aws: None, api: TenantExportApi) -> None:
    # Given an export whose message was lost for good: its hold's time has passed
    tenant = tenants.create_tenant("Lost County 911").tenant_id
    status, lost, _ = api.start(tenant)
    assert status == 202, lost
    sqs().purge_queue(QueueUrl=audit_export_queue_url())
    assert api.start(tenant)[0] == 409
    dynamodb().update_item(
        TableName=settings().tenant_data_table or "",
        Key=running_key(tenant),
        UpdateExpression="SET heldUntil = :past",
        ExpressionAttributeValues={":past": {"S": "2020-01-01T00:00:00.000Z"}},
    )
    # When its Admin starts another, Then it starts and runs to its end
    status, export, _ = api.start(tenant)
    assert status == 202, export
    api.work()
    assert api.read(tenant, export["exportId"])[1]["state"] == "SUCCEEDED"
    assert api.read(tenant, lost["exportId"])[1]["state"] == "QUEUED"
