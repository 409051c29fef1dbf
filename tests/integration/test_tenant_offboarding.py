"""Tenant offboarding (psap-admin tenant offboard / verify-archive): everything a tenant owns
leaves in one signed archive, then nothing of it remains but its audit trail and its revoked
credentials; another tenant is untouched; a crash resumes; credentials in force refuse it."""

import argparse
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from psap import clock
from psap.audit import store as audit_store
from psap.audit.recording import AuditRecord
from psap.auth import issuing
from psap.auth import store as tenants
from psap.auth.credentials import CredentialKind
from psap.auth.permissions import Permission
from psap.config import auth_table, cad_table, knowledge_table
from psap.events.store import EVENTS
from psap.incidents.store import INCIDENTS
from psap.knowledge.store import read_entry
from psap.media.store import MEDIA_SEQUENCE
from psap.offboarding import job
from psap.resource_center.store import grant_license, tenant_licenses
from psap.storage.sequences import raise_floor
from psap.webhooks import store as webhooks
from psap.webhooks.connectors import NewConnector, create_connector
from psap.webhooks.secrets import read_secret, secret_name
from psap.webhooks.signing import SigningProfile
from tests.conftest import TEMPLATE
from tests.support.audit import AUDIT_FUNCTIONS, ApiCaller
from tests.support.tenant_data import table
from tests.support.tenant_records import (
    archive_members,
    audited_operator_action,
    imported_tenant,
)
from tools import admin_audit
from tools.admin import main

KEY = "offboarding-test-archive-key"

# The `api` fixture (below) is this harness, with the archived functions' environment.
pytestmark = pytest.mark.harness(api=ApiCaller)


@pytest.fixture
def world(aws: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[Any, Any]:
    monkeypatch.setenv("WEBHOOK_LOCAL_DEV", "true")
    monkeypatch.setenv("PSAP_ARCHIVE_KEY", KEY)
    leaving = tenants.create_tenant("Leaving County 911").tenant_id
    staying = tenants.create_tenant("Staying County 911").tenant_id
    seeded: dict[Any, Any] = {"leaving": leaving, "staying": staying}
    for tenant, base in ((leaving, 1_000), (staying, 2_000)):
        dataset, entry_id = imported_tenant(tenant, base, tmp_path, users=3, evaluations=4)
        connector = create_connector(
            tenant,
            NewConnector(
                name="County CAD",
                url="http://127.0.0.1:9/cad",
                profile=SigningProfile.BASELINE,
                event_types=None,
                bearer_credential="cad-bearer-secret-value",
                local_dev=True,
            ),
            now=clock.utc_now(),
        ).connector
        grant_license(tenant, "APCO", clock.utc_now())
        audited_operator_action(tenant)
        seeded[tenant] = {"dataset": dataset, "entry": entry_id, "connector": connector}
    return seeded


def offboard(
    capsys: pytest.CaptureFixture[str], tenant: int, out: Path, *extra: str
) -> tuple[int, str, str]:
    tables = ["--auth-table", auth_table(), "--knowledge-table", knowledge_table()]
    code = main([*tables, "tenant", "offboard", "--tenant", str(tenant), "--out", str(out), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def tenant_items(tenant: int) -> list[str]:
    """Every key of the tenant in the tenant-data table (a test may scan; the job never does)."""
    from psap.storage.dynamodb import dynamodb

    keys = []
    for page in dynamodb().get_paginator("scan").paginate(TableName=table()):
        keys += [i["pk"]["S"] for i in page["Items"] if i["pk"]["S"].startswith(f"T#{tenant}#")]
    return keys


def unlisted_evaluations(world: dict[Any, Any], tenant: int) -> list[str]:
    dataset = world[tenant]["dataset"]
    return sorted(f"T#{tenant}#EVAL#{item.id}" for item in dataset.evaluations if item.deleted)


def test_deleted_evaluations_are_purged_too(
    world: dict[Any, Any], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    leaving = world["leaving"]
    assert unlisted_evaluations(world, leaving)
    assert offboard(capsys, leaving, tmp_path / "leaving.tar.gz")[0] == 0
    assert tenant_items(leaving) == []


def audit_count(tenant: int) -> int:
    start = clock.utc_now().replace(hour=0, minute=0, second=0, microsecond=0)
    return sum(len(page) for page in audit_store.chains_between(tenant, start, start))


def test_offboarding_archives_everything_then_purges_only_that_tenant(
    world: dict[Any, Any], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Given two tenants with every kind of data, the leaving one's data all in the tables
    leaving, staying = world["leaving"], world["staying"]
    dataset = world[leaving]["dataset"]
    staying_keys = tenant_items(staying)
    assert tenant_items(leaving) and staying_keys
    # When the leaving tenant is offboarded
    archive = tmp_path / "leaving.tar.gz"
    code, out, err = offboard(capsys, leaving, archive)
    # Then the archive holds each kind, with its content
    assert code == 0, err
    files = archive_members(archive)
    assert len(files["incidents.jsonl"]) == len(dataset.incidents)
    assert len(files["events.jsonl"]) == len(dataset.events)
    users = [line for line in files["users.jsonl"] if line["sk"] == "USER"]
    assert sorted(line["id"] for line in users) == sorted(user.id for user in dataset.users)
    numbers = {line["number"] for line in files["incidents.jsonl"]}
    assert numbers == {incident.number for incident in dataset.incidents}
    listed = [item for item in dataset.evaluations if not item.deleted]
    evaluations = {line["pk"] for line in files["evaluations.jsonl"]}
    assert len(evaluations) == len(dataset.evaluations) > len(listed)
    assert any(line["sk"] == "ENTRY" for line in files["knowledge.jsonl"])
    connectors = files["connectors.jsonl"]
    assert [line["sk"] for line in connectors] == [world[leaving]["connector"].connector_id]
    assert "cad-bearer-secret-value" not in archive.read_bytes().decode("latin-1")
    assert files["resourceCenter.jsonl"]
    audit = [line for line in files["audit.jsonl"] if "tenantId" in line]
    assert [line["tenantId"] for line in audit] == [leaving]
    (tmp_path / "audit.ndjson").write_text(
        "".join(json.dumps(line) + "\n" for line in files["audit.jsonl"]), encoding="utf-8"
    )
    assert main(["audit", "verify", str(tmp_path / "audit.ndjson")]) == 0
    assert "incidents\t2\t" in out
    # ... which verifies, and fails verification with one byte altered
    assert main(["tenant", "verify-archive", str(archive)]) == 0
    altered = bytearray(archive.read_bytes())
    altered[len(altered) // 2] ^= 0x01
    (tmp_path / "altered.tar.gz").write_bytes(bytes(altered))
    assert main(["tenant", "verify-archive", str(tmp_path / "altered.tar.gz")]) == 1
    # And nothing of the leaving tenant remains, but its audit records
    assert tenant_items(leaving) == []
    assert read_entry(leaving, world[leaving]["entry"]) is None
    assert webhooks.list_connectors(leaving) == []
    assert tenant_licenses(leaving) == frozenset()
    with pytest.raises(Exception, match=r"(?i)not"):
        read_secret(secret_name(leaving, world[leaving]["connector"].connector_id), fresh=True)
    assert audit_count(leaving) == 1
    # And the staying tenant is untouched
    assert tenant_items(staying) == staying_keys
    assert read_entry(staying, world[staying]["entry"]) is not None
    assert len(webhooks.list_connectors(staying)) == 1
    assert tenant_licenses(staying) == frozenset({"APCO"})
    assert read_secret(secret_name(staying, world[staying]["connector"].connector_id))
    assert audit_count(staying) == 1


def test_active_credentials_refuse_offboarding_unless_forced(
    world: dict[Any, Any], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Given a credential in force
    leaving = world["leaving"]
    issued = issuing.issue(
        leaving,
        issuing.CredentialRequest(
            kind=CredentialKind.PARTNER,
            permissions=frozenset({Permission.VIEW_KNOWLEDGE}),
            label="sync",
            expires_in_days=30,
        ),
        clock.utc_now(),
        issued_by="operator",
    )
    before = tenant_items(leaving)
    # When offboarding is asked without --force
    code, _, err = offboard(capsys, leaving, tmp_path / "a.tar.gz")
    # Then it is refused in one line naming the credential, and nothing changed
    assert code == 2
    assert err.count("\n") == 1 and issued.credential.credential_id in err
    assert tenant_items(leaving) == before
    assert not (tmp_path / "a.tar.gz").exists()
    # When forced, the credential is revoked (kept) and the tenant offboarded
    code, out, _ = offboard(capsys, leaving, tmp_path / "a.tar.gz", "--force")
    assert code == 0
    assert issued.credential.credential_id in out
    assert [c.revoked for c in tenants.list_credentials(leaving)] == [True]


def test_an_unknown_tenant_is_named(
    aws: None, capsys: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PSAP_ARCHIVE_KEY", KEY)
    code, out, err = offboard(capsys, 99, tmp_path / "x.tar.gz")
    assert (code, out) == (2, "")
    assert err == "error: Tenant 99 does not exist\n"


def test_a_crash_between_steps_resumes(
    world: dict[Any, Any], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Given an offboarding that crashes after a few steps of its export and of its purge
    leaving = world["leaving"]
    archive = tmp_path / "leaving.tar.gz"
    for crash_at in (3, 12):
        steps: list[str] = []

        def crash(name: str, steps: list[str] = steps, crash_at: int = crash_at) -> None:
            steps.append(name)
            if len(steps) == crash_at:
                raise RuntimeError("injected crash")

        with pytest.raises(RuntimeError, match="injected"):
            job.offboard(leaving, archive, KEY.encode(), on_step=crash)
    assert job.read_checkpoint(leaving) is not None
    # When it runs again
    code, _, err = offboard(capsys, leaving, archive)
    # Then it ends, with an archive holding every record exactly once
    assert code == 0, err
    files = archive_members(archive)
    dataset = world[leaving]["dataset"]
    assert len(files["incidents.jsonl"]) == len(dataset.incidents)
    assert len(files["events.jsonl"]) == len(dataset.events)
    users = [line for line in files["users.jsonl"] if line["sk"] == "USER"]
    assert len(users) == len(dataset.users)
    assert main(["tenant", "verify-archive", str(archive)]) == 0
    assert tenant_items(leaving) == []
    assert tenant_items(world["staying"])


@pytest.fixture
def api(api: ApiCaller, monkeypatch: pytest.MonkeyPatch) -> ApiCaller:
    for function in (
        "CadIntakeFunction",
        "IncidentUploadCreateFunction",
        *AUDIT_FUNCTIONS.values(),
    ):
        for name, value in TEMPLATE.functions[function].environment.items():
            monkeypatch.setenv(name, value)
    return api


def cad_tables_keys(tenant: int) -> list[str]:
    from psap.storage.dynamodb import dynamodb

    keys = []
    for page in dynamodb().get_paginator("scan").paginate(TableName=cad_table()):
        keys += [i["pk"]["S"] for i in page["Items"] if i["pk"]["S"].startswith(f"T#{tenant}#")]
    return keys


def objects(bucket: str, prefix: str) -> list[str]:
    from psap.storage.s3 import s3

    answer = s3().list_objects_v2(Bucket=bucket, Prefix=prefix)
    return [found["Key"] for found in answer.get("Contents", [])]


def test_cad_submissions_upload_and_audit_export_jobs_are_archived_then_purged(
    world: dict[Any, Any], api: ApiCaller, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Given the leaving tenant's CAD submission (a raw body naming a caller), an incident
    # upload job with its file, and an audit export job with its file
    leaving, staying = world["leaving"], world["staying"]
    raw = api.load_event("cad_intake")["body"]
    for tenant in (leaving, staying):
        body = json.loads(raw) | {"tenantId": tenant, "id": f"caller-{tenant}"}
        body["data"]["notes"][0]["note"] = f"Caller Jane Roe {tenant} reports smoke"
        status, _, _ = api.call("cad_intake", tenant=tenant, permissions="", body=body)
        assert status == 202
        status, upload, _ = api.call(
            "incident_upload_create", tenant=tenant, permissions="MANAGE_EVENTS"
        )
        assert status in (200, 201), upload
        status, export, _ = api.call(
            "audit_export_create",
            tenant=tenant,
            body={"from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z"},
        )
        assert status == 202, export
    uploads = TEMPLATE.buckets["IncidentUploadBucket"].name
    exports = TEMPLATE.buckets["AuditExportBucket"].name
    from psap.storage.s3 import s3

    for tenant in (leaving, staying):
        for bucket, kind in ((uploads, "incident-uploads"), (exports, "audit-exports")):
            s3().put_object(Bucket=bucket, Key=f"tenants/{tenant}/{kind}/f.jsonl", Body=b"{}")
    assert any("#SUB#" in pk for pk in cad_tables_keys(leaving))
    staying_cad, staying_data = cad_tables_keys(staying), tenant_items(staying)
    # When the leaving tenant is offboarded
    archive = tmp_path / "leaving.tar.gz"
    code, _, err = offboard(capsys, leaving, archive)
    # Then the archive holds the submission, the upload job and the export job
    assert code == 0, err
    files = archive_members(archive)
    # (its record and, beside it, its raw body: two lines of one submission)
    submissions = files["cadSubmissions.jsonl"]
    assert {line["eventId"] for line in submissions} == {f"caller-{leaving}"}
    assert [line["sk"] for line in submissions] == ["BODY", "STATE"]
    assert len(files["incidentUploads.jsonl"]) == 1
    assert len(files["auditExports.jsonl"]) == 1
    # And none of them remains, nor their files, while the staying tenant's are untouched
    assert cad_tables_keys(leaving) == []
    assert tenant_items(leaving) == []
    for bucket in (uploads, exports):
        assert objects(bucket, f"tenants/{leaving}/") == []
        assert objects(bucket, f"tenants/{staying}/")
    assert cad_tables_keys(staying) == staying_cad
    assert tenant_items(staying) == staying_data


def test_the_export_reads_the_tenant_s_keys_not_the_platform_s_sequences(
    world: dict[Any, Any], tmp_path: Path
) -> None:
    # Given shared id sequences far ahead of the leaving tenant's ids (other tenants' work)
    for where, sequence in (
        (knowledge_table(), "KNOWLEDGE"),
        (table(), INCIDENTS.sequence),
        (table(), EVENTS.sequence),
        (table(), MEDIA_SEQUENCE),
    ):
        raise_floor(where, sequence, 5_000_000)
    steps: list[str] = []
    audit_step = [kind for kind, _ in job.STEPS].index(job.Kind.AUDIT)

    def bounded(name: str) -> None:
        # The audit's steps are a day each, whatever the data: counted apart.
        state = job.read_checkpoint(world["leaving"])
        if name == "export" and state and state["kind"] < audit_step:
            steps.append(name)
        if len(steps) > 40:
            raise RuntimeError("the export walks the platform's ids")

    # When the leaving tenant is offboarded
    report = job.offboard(world["leaving"], tmp_path / "a.tar.gz", KEY.encode(), on_step=bounded)
    # Then its steps are a handful, whatever the sequences' values, and everything was read
    assert report.exported["incidents"] == len(world[world["leaving"]]["dataset"].incidents)
    assert report.exported["knowledge"] > 0


def test_the_audit_archive_reads_the_days_with_records_not_every_day_of_retention(
    world: dict[Any, Any], tmp_path: Path
) -> None:
    # Given the leaving tenant's audit records of today and of 200 days ago (no others)
    leaving = world["leaving"]
    long_ago = clock.utc_now() - timedelta(days=200)
    record = admin_audit.operator_record(
        argparse.Namespace(area="credential", action="revoke", tenant=leaving),
        200,
        long_ago,
        finished=long_ago,
    )
    audit_store.append_records([AuditRecord.model_validate(record)], retention_days=365)
    audit_step = [kind for kind, _ in job.STEPS].index(job.Kind.AUDIT)
    audit_steps: list[str] = []

    def count(name: str) -> None:
        state = job.read_checkpoint(leaving)
        if name == "export" and state and state["kind"] == audit_step:
            audit_steps.append(name)

    # When the tenant is offboarded
    job.offboard(leaving, tmp_path / "a.tar.gz", KEY.encode(), on_step=count)
    # Then the audit file holds both days' records, read in one step per day with records
    # (a walk of the retention window took 365 steps of 16 Queries each)
    files = archive_members(tmp_path / "a.tar.gz")
    days = {line["time"][:10] for line in files["audit.jsonl"] if "tenantId" in line}
    assert days == {long_ago.date().isoformat(), clock.utc_now().date().isoformat()}
    assert audit_store.days_with_records(leaving) == sorted(
        {long_ago.date(), clock.utc_now().date()}
    )
    assert len(audit_steps) <= 2
