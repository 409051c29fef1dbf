"""Tenant offboarding (psap-admin tenant offboard / verify-archive): everything a tenant owns
leaves in one signed archive, then nothing of it remains but its audit trail and its revoked
credentials; another tenant is untouched; a crash resumes; credentials in force refuse it."""

import argparse
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from local.demo_tenant_data import generate, write_jsonl
from psap import clock
from psap.audit import store as audit_store
from psap.audit.recording import AuditRecord
from psap.auth import issuing
from psap.auth import store as tenants
from psap.auth.credentials import CredentialKind
from psap.auth.permissions import Permission
from psap.config import auth_table, knowledge_table
from psap.knowledge.models import KnowledgeType
from psap.knowledge.store import NewEntry, create_entry, read_entry
from psap.offboarding import job
from psap.resource_center.store import grant_license, tenant_licenses
from psap.webhooks import store as webhooks
from psap.webhooks.connectors import create_connector
from psap.webhooks.secrets import read_secret, secret_name
from psap.webhooks.signing import SigningProfile
from tests.integration.tenant_data_api import table
from tools import admin_audit
from tools.admin import main
from tools.tenant_import import import_files

KEY = "offboarding-test-archive-key"


@pytest.fixture
def world(aws: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[Any, Any]:
    monkeypatch.setenv("WEBHOOK_LOCAL_DEV", "true")
    monkeypatch.setenv("PSAP_ARCHIVE_KEY", KEY)
    leaving = tenants.create_tenant("Leaving County 911").tenant_id
    staying = tenants.create_tenant("Staying County 911").tenant_id
    seeded: dict[Any, Any] = {"leaving": leaving, "staying": staying}
    for tenant, base in ((leaving, 1_000), (staying, 2_000)):
        dataset = generate(3, tenant, base, user_count=3, evaluation_count=4, incident_count=2)
        import_files(write_jsonl(dataset, tmp_path / str(tenant)), tenant)
        entry = create_entry(
            tenant,
            NewEntry(
                name=f"Chest pain {tenant}",
                provider="APCO",
                knowledge_type=KnowledgeType.GUIDE_CARD,
                external_id=f"x-{tenant}",
            ),
            clock.utc_now(),
        )
        connector = create_connector(
            tenant,
            name="County CAD",
            url="http://127.0.0.1:9/cad",
            profile=SigningProfile.BASELINE,
            event_types=None,
            bearer_credential="cad-bearer-secret-value",
            local_dev=True,
            now=clock.utc_now(),
        ).connector
        grant_license(tenant, "APCO", clock.utc_now())
        record = admin_audit.operator_record(
            argparse.Namespace(area="credential", action="revoke", tenant=tenant),
            200,
            clock.utc_now(),
            clock.utc_now(),
        )
        audit_store.append_records([AuditRecord.model_validate(record)], retention_days=365)
        seeded[tenant] = {"dataset": dataset, "entry": entry.id, "connector": connector}
    return seeded


def offboard(
    capsys: pytest.CaptureFixture[str], tenant: int, out: Path, *extra: str
) -> tuple[int, str, str]:
    tables = ["--auth-table", auth_table(), "--knowledge-table", knowledge_table()]
    code = main([*tables, "tenant", "offboard", "--tenant", str(tenant), "--out", str(out), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def members(archive: Path) -> dict[str, list[dict[str, Any]]]:
    with tarfile.open(archive, "r:gz") as opened:
        found = {}
        for member in opened.getmembers():
            data = opened.extractfile(member)
            assert data is not None
            if member.name.endswith(".jsonl"):
                found[member.name] = [json.loads(line) for line in data.read().splitlines()]
    return found


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


@pytest.mark.xfail(strict=True, reason="a deleted evaluation is in no listing: not found yet")
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
    files = members(archive)
    assert len(files["incidents.jsonl"]) == len(dataset.incidents)
    assert len(files["events.jsonl"]) == len(dataset.events)
    users = [line for line in files["users.jsonl"] if line["sk"] == "USER"]
    assert sorted(line["id"] for line in users) == sorted(user.id for user in dataset.users)
    numbers = {line["number"] for line in files["incidents.jsonl"]}
    assert numbers == {incident.number for incident in dataset.incidents}
    listed = [item for item in dataset.evaluations if not item.deleted]
    evaluations = {line["pk"] for line in files["evaluations.jsonl"]}
    assert len(evaluations) == len(listed)
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
    # And nothing of the leaving tenant remains, but its audit records (and the evaluations
    # it deleted, which no listing names: see the xfail below)
    assert tenant_items(leaving) == unlisted_evaluations(world, leaving)
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
    files = members(archive)
    dataset = world[leaving]["dataset"]
    assert len(files["incidents.jsonl"]) == len(dataset.incidents)
    assert len(files["events.jsonl"]) == len(dataset.events)
    users = [line for line in files["users.jsonl"] if line["sk"] == "USER"]
    assert len(users) == len(dataset.users)
    assert main(["tenant", "verify-archive", str(archive)]) == 0
    assert tenant_items(leaving) == unlisted_evaluations(world, leaving)
    assert tenant_items(world["staying"])
