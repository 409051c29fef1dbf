"""Signed digests over the audit chains: an export verifies with the sealing key's public
key, and a chain rewritten with correct hashes (by whoever can write the table, without the
key) fails on its seal. The writer, sealer and export worker run against the embedded AWS
under their own roles (IAM enforced)."""

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from local.iam_enforcement import paused
from psap.audit import store as audit_store
from psap.audit.chain import link_hash
from psap.audit.sealing import kms, seal_due
from psap.audit.seals import PERIOD, SEAL_GRACE, period_of, period_text
from psap.config import audit_seal_key, audit_seal_table, audit_table
from psap.storage.dynamodb import dynamodb
from tests.support.audit import TEMPLATE, audit_record, set_function_environment
from tests.support.harness import HandlerHarness
from tools.admin_audit import verify_main

NOW = datetime.now(UTC)
# The sealer's first run, just after the writer's period has closed.
SEALED = period_of(NOW) + PERIOD + SEAL_GRACE + timedelta(seconds=1)


@pytest.fixture(autouse=True)
def _audit_functions_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    set_function_environment(monkeypatch)


def _append(tenant: int, count: int, prefix: str = "req") -> None:
    """The writer's appends: every record in one chain (shard 0), at NOW."""
    appender = audit_store.RecordAppender(365)
    for index in range(count):
        appender.append(audit_record(tenant, NOW, f"{prefix}-{index}"))


def _seal(call_as_function: Callable[..., Any], when: datetime = SEALED) -> Any:
    return call_as_function(
        "AuditSealerFunction",
        lambda: seal_due(when, key_id=audit_seal_key(), retention_days=365),
    )


class _Exports(HandlerHarness):
    def prepare(self) -> None:
        self.handler("audit_export_worker")


def _export(tenant: int, tmp_path: Path) -> Path:
    """The tenant's NDJSON export of today, as the worker writes it, in a file."""
    from psap.audit.exports import AuditExportRequest, create_export, run_export
    from psap.audit.exports.jobs import object_key, read_export
    from psap.storage.s3 import s3

    start = NOW.replace(hour=0, minute=0, second=0, microsecond=0)
    request = AuditExportRequest.model_validate(
        {"from": start.isoformat(), "to": (start + timedelta(days=1)).isoformat()}
    )
    export = create_export(tenant, request, "cred-admin")
    assert str(run_export(tenant, export.export_id, False)) == "SUCCEEDED"
    done = read_export(tenant, export.export_id)
    assert done is not None
    bucket = TEMPLATE.buckets["AuditExportBucket"].name
    body = s3().get_object(Bucket=bucket, Key=object_key(tenant, done))["Body"].read()
    path = tmp_path / f"audit-{tenant}.ndjson"
    path.write_bytes(body)
    return path


def _rewrite_chain(tenant: int, seq: int, **changes: Any) -> None:
    """What an account administrator (or a restored backup) can do without the key: change
    record `seq` of the tenant's chain and recompute every link after it."""
    pk = audit_store.chain_key(tenant, NOW.date(), 0)
    items = dynamodb().query(
        TableName=audit_table(),
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": pk}},
    )["Items"]
    prev = items[seq - 2]["hash"]["S"] if seq > 1 else "0" * 64
    chain = f"{tenant}/{NOW.date().isoformat()}/00"
    for item in items[seq - 1 :]:
        record = json.loads(item["record"]["S"])
        if int(item["sk"]["S"]) == seq:
            record.update(changes)
        hashed = link_hash(chain, int(item["sk"]["S"]), prev, record=record)
        item.update(record={"S": json.dumps(record)}, prev={"S": prev}, hash={"S": hashed})
        dynamodb().put_item(TableName=audit_table(), Item=item)
        prev = hashed


@pytest.fixture
def one_shard(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every record in shard 0, and the writer's clock at NOW: its markers fall in NOW's
    period whenever the test runs."""
    monkeypatch.setattr(audit_store, "shard_of", lambda _request_id: 0)
    monkeypatch.setattr(audit_store, "utc_now", lambda: NOW)
    yield


def test_an_export_of_sealed_chains_verifies_with_the_sealing_key(
    aws: None,
    one_shard: None,
    call_as_function: Callable[..., Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given records of two tenants appended by the writer, and the sealer's run after their
    # period has closed
    _append(41, 5)
    _append(42, 3)
    run = _seal(call_as_function)
    assert len(run.sealed) == 1
    # When tenant 41 exports the day and an auditor verifies the file
    path = _export(41, tmp_path)
    code = verify_main([str(path)])
    # Then it verifies: the chain, one signed digest and the tenant's seal, nothing unsealed
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "5 records" in printed.out
    assert "sealed: 1 seals in 1 signed digests" in printed.out
    assert "not yet sealed" not in printed.out
    # And the file names no other tenant's chain
    assert '"42/' not in path.read_text()
    # And it verifies offline with the public key in a file (DER, as `aws kms get-public-key`
    # gives it), the key pinned; another key's public key fails it
    der = tmp_path / "seal.der"
    der.write_bytes(kms().get_public_key(KeyId=audit_seal_key())["PublicKey"])
    key_arn = kms().describe_key(KeyId=audit_seal_key())["KeyMetadata"]["Arn"]
    pinned = ["--public-key", str(der), "--key-id", key_arn]
    assert verify_main([str(path), *pinned]) == 0, capsys.readouterr().err
    other = tmp_path / "other.pem"
    other.write_bytes(
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    assert verify_main([str(path), "--public-key", str(other)]) == 1
    assert "signature does not verify" in capsys.readouterr().err


def test_a_chain_rewritten_with_correct_hashes_fails_on_its_seal(
    aws: None,
    one_shard: None,
    call_as_function: Callable[..., Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given a sealed chain of five records
    _append(43, 5)
    _seal(call_as_function)
    # When someone who can write the table (not the key) changes record 3's status and
    # recomputes every link after it, so the chain alone still verifies
    with paused():
        _rewrite_chain(43, 3, status=204)
    path = _export(43, tmp_path)
    # Then verify fails, in one line, on the sealed head (record 5), whose link is no longer
    # the one the signed digest names
    assert verify_main([str(path)]) == 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1
    assert "record 5" in error and "rewritten" in error


def test_a_sealed_record_removed_from_the_end_fails(
    aws: None,
    one_shard: None,
    call_as_function: Callable[..., Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given a sealed chain of four records, whose last one is then deleted from the table
    _append(44, 4)
    _seal(call_as_function)
    with paused():
        dynamodb().delete_item(
            TableName=audit_table(),
            Key={
                "pk": {"S": audit_store.chain_key(44, NOW.date(), 0)},
                "sk": {"S": f"{4:012d}"},
            },
        )
    path = _export(44, tmp_path)
    # When it is verified, Then the seal says the chain went further: records removed
    assert verify_main([str(path)]) == 1
    assert "records removed" in capsys.readouterr().err


def test_records_after_the_last_seal_are_reported_as_not_yet_sealed(
    aws: None,
    one_shard: None,
    call_as_function: Callable[..., Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given a sealed chain, then two more records appended after the seal
    _append(45, 3)
    _seal(call_as_function)
    _append(45, 2, prefix="later")
    path = _export(45, tmp_path)
    # When it is verified, Then it holds, and says two records are not yet sealed
    assert verify_main([str(path)]) == 0
    assert "not yet sealed: 2 records" in capsys.readouterr().out
    # And an auditor who asks for every record sealed is refused
    assert verify_main([str(path), "--require-sealed"]) == 1


def test_a_digest_signed_by_another_key_or_altered_fails(
    aws: None,
    one_shard: None,
    call_as_function: Callable[..., Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given a verified export whose digest is then changed (its root) in the file
    _append(46, 2)
    _seal(call_as_function)
    path = _export(46, tmp_path)
    lines = path.read_text().splitlines()
    forged = []
    for line in lines:
        parsed = json.loads(line)
        if "digest" in parsed:
            parsed["digest"]["root"] = "f" * 64
        forged.append(json.dumps(parsed))
    path.write_text("\n".join(forged) + "\n")
    # When it is verified, Then the signature does not hold
    assert verify_main([str(path)]) == 1
    assert "signature does not verify" in capsys.readouterr().err


def test_only_the_sealers_role_may_sign_with_the_sealing_key(
    aws: None, call_as_function: Callable[..., Any]
) -> None:
    # Given the audit writer's role (it may write the table)
    def sign() -> None:
        kms().sign(
            KeyId=audit_seal_key(),
            Message=b"a forged digest",
            MessageType="RAW",
            SigningAlgorithm="ECDSA_SHA_256",
        )

    # When it asks KMS to sign, Then KMS refuses; the sealer's role may
    with pytest.raises(ClientError) as refused:
        call_as_function("AuditWriterFunction", sign)
    assert "AccessDenied" in str(refused.value)
    call_as_function("AuditSealerFunction", sign)


def test_the_sealer_reads_only_the_chains_that_advanced(
    aws: None, one_shard: None, call_as_function: Callable[..., Any]
) -> None:
    # Given one tenant's records in the period and a sealed period before
    _append(47, 2)
    first = _seal(call_as_function)
    # When the sealer runs again two periods later with nothing new
    again = _seal(call_as_function, SEALED + 2 * PERIOD)
    # Then it signed the period with records once, and no digest for the empty ones
    assert len(first.sealed) == 1
    assert (again.sealed, again.empty) == ([], 2)


def _kinds(table: str) -> set[str]:
    """AUDITDIGEST, AUDITSEAL, DAY (a record), ...: what the table's keys name."""
    with paused():
        items = dynamodb().scan(TableName=table)["Items"]
    return {
        pk.split("#")[2] if pk.startswith("T#") else pk.split("#")[0]
        for pk in (item["pk"]["S"] for item in items)
    }


def test_the_sealer_writes_its_own_table_and_cannot_overwrite_an_audit_record(
    aws: None, one_shard: None, call_as_function: Callable[..., Any]
) -> None:
    # Given a sealed chain of two records
    _append(50, 2)
    _seal(call_as_function)
    # Then the digest head, the digest, the seal and the sealed position are in the seal
    # table; the audit table keeps the records and the writer's markers, none of those
    assert _kinds(audit_seal_table()) == {"AUDITDIGEST", "AUDITSEAL", "AUDITSEALED", "AUDITCLAIM"}
    assert _kinds(audit_table()).isdisjoint({"AUDITDIGEST", "AUDITSEAL", "AUDITSEALED"})
    assert {"AUDITADV", "DAY"} <= _kinds(audit_table())
    # When the sealer's role puts over record 1 of the chain
    record = {
        "pk": {"S": audit_store.chain_key(50, NOW.date(), 0)},
        "sk": {"S": f"{1:012d}"},
        "record": {"S": "{}"},
    }
    with pytest.raises(ClientError) as refused:
        call_as_function(
            "AuditSealerFunction",
            lambda: dynamodb().put_item(TableName=audit_table(), Item=record),
        )
    # Then IAM refuses it: only the writer's role puts into the audit table
    assert "AccessDenied" in str(refused.value)


def test_a_run_beside_one_that_holds_the_period_leaves_its_seals_alone(
    aws: None,
    one_shard: None,
    call_as_function: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from psap.audit import sealing
    from psap.errors import StoreUnavailable
    from psap.storage.sqs import send_messages as queue_up

    def queue_down(*_args: Any) -> None:
        raise StoreUnavailable("archive queue down")

    # Given a run that wrote tenant 51's seal of two records and stopped before the digest
    _append(51, 2)
    monkeypatch.setattr(sealing, "send_messages", queue_down)
    with pytest.raises(StoreUnavailable):
        _seal(call_as_function)
    monkeypatch.setattr(sealing, "send_messages", queue_up)
    _append(51, 1, prefix="later")
    # When a second run starts while the first could still be running
    beside = _seal(call_as_function)
    # Then it seals nothing of the period and leaves the first run's seal as it was
    assert (beside.sealed, beside.empty) == ([], 0)
    seal = call_as_function(
        "AuditSealerFunction", sealing.read_seal, 51, NOW.date(), period_of(NOW)
    )
    assert [head["seq"] for head in seal["heads"]] == [2]
    # And a run after the first one's claim has lapsed seals the period whole: the export
    # verifies, its seal naming the chain's head then
    later = _seal(call_as_function, SEALED + timedelta(minutes=4))
    assert period_text(period_of(NOW)) in later.sealed
    assert verify_main([str(_export(51, tmp_path)), "--require-sealed"]) == 0, (
        capsys.readouterr().err
    )


# ---------------------------------------------------------------- the write-once archive


def _archive_messages() -> list[dict[str, Any]]:
    from psap.config import audit_archive_queue_url
    from psap.storage.sqs import sqs

    bodies = []
    while (
        messages := sqs()
        .receive_message(QueueUrl=audit_archive_queue_url(), MaxNumberOfMessages=10)
        .get("Messages")
    ):
        for message in messages:
            bodies.append(json.loads(message["Body"]))
            sqs().delete_message(
                QueueUrl=audit_archive_queue_url(), ReceiptHandle=message["ReceiptHandle"]
            )
    return bodies


def test_each_sealed_period_is_archived_write_once_with_its_seal_and_digest(
    aws: None, one_shard: None, call_as_function: Callable[..., Any]
) -> None:
    from psap.audit.archive import ArchiveMessage, archive_key, archive_seal
    from psap.storage.s3 import s3

    # Given three sealed records of tenant 48
    _append(48, 3)
    _seal(call_as_function)
    first = _archive_messages()
    # When the archiver copies each seal the sealer queued
    assert [m["tenantId"] for m in first] == [48]
    messages = [ArchiveMessage.model_validate(m) for m in first]
    counts = [call_as_function("AuditArchiverFunction", archive_seal, m) for m in messages]
    # Then the archive holds the period's records, chained, with the seal and the digest
    assert counts == [3]
    bucket = TEMPLATE.buckets["AuditArchiveBucket"].name
    key = archive_key(messages[0])
    lines = [
        json.loads(line)
        for line in s3().get_object(Bucket=bucket, Key=key)["Body"].read().decode().splitlines()
    ]
    assert [line["chain"]["seq"] for line in lines[:3]] == [1, 2, 3]
    assert "seal" in lines[3] and "digest" in lines[4]
    assert lines[3]["seal"]["heads"][0]["hash"] == lines[2]["chain"]["hash"]
    # And the object is locked in compliance mode for the retention: no one deletes it
    head = s3().head_object(Bucket=bucket, Key=key)
    assert head["ObjectLockMode"] == "COMPLIANCE"
    assert head["ObjectLockRetainUntilDate"] >= NOW + timedelta(days=364)
    version = s3().list_object_versions(Bucket=bucket, Prefix=key)["Versions"][0]["VersionId"]
    with paused(), pytest.raises(ClientError):
        s3().delete_object(Bucket=bucket, Key=key, VersionId=version)


def test_an_archive_message_waits_for_its_digest_and_is_dropped_once_the_sealer_passed(
    aws: None, one_shard: None, call_as_function: Callable[..., Any]
) -> None:
    from psap.audit.archive import ArchiveMessage, archive_seal
    from psap.audit.seals import period_text
    from psap.errors import StoreUnavailable

    # Given a message for a period the sealer has not reached
    message = ArchiveMessage(period=period_text(period_of(NOW)), tenant_id=49, day=NOW.date())
    # When the archiver takes it, Then it fails, so SQS gives it again later
    with pytest.raises(StoreUnavailable, match="not sealed yet"):
        call_as_function("AuditArchiverFunction", archive_seal, message)
    # And once the sealer has passed that period (in which tenant 49 wrote nothing), the
    # message has nothing to archive and is done
    _seal(call_as_function)
    assert call_as_function("AuditArchiverFunction", archive_seal, message) == 0
