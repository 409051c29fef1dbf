"""The audit log: every tenant call leaves a record (one message to the audit
queue, no store write on the request path), the writer appends them, Admins export a range.

Given/When/Then in each test; the audit writer and the export worker run as Lambda would run
them (their handlers), against moto.
"""

import csv
import io
import json
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from moto.s3 import models as moto_s3_models

from local.iam import default_function_roles
from psap.audit import store as audit_store
from psap.audit.chain import SHARDS, shard_of, verify_lines
from psap.audit.exports import worker as export_worker_module
from psap.audit.recording import AuditRecord
from psap.config import audit_export_queue_url, audit_table
from psap.storage.dynamodb import dynamodb
from psap.storage.s3 import s3
from psap.storage.sqs import sqs
from tests.support.audit import (
    TEMPLATE,
    ApiCaller,
    audit_queue_event,
    audit_record,
    queued_messages,
    queued_records,
    set_function_environment,
)
from tests.support.harness import HandlerHarness

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime.now(UTC)


pytestmark = pytest.mark.harness(api=ApiCaller)


@pytest.fixture
def api(api: ApiCaller, monkeypatch: pytest.MonkeyPatch) -> ApiCaller:
    set_function_environment(monkeypatch)
    return api


def _stored(tenant: int, day: datetime) -> list[dict[str, Any]]:
    """Every chain item of the tenant's day, shard after shard."""
    items: list[dict[str, Any]] = []
    for shard in range(SHARDS):
        answer = dynamodb().query(
            TableName=audit_table(),
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={
                ":pk": {"S": audit_store.chain_key(tenant, day.date(), shard)}
            },
        )
        items.extend(answer["Items"])
    return items


class ExportWorker(HandlerHarness):
    """The export worker's handler, fed with the export queue's messages as SQS feeds it."""

    def prepare(self) -> None:
        self.handler("audit_export_worker")  # imported here, as it always was

    def take(self) -> dict[str, Any]:
        messages = sqs().receive_message(QueueUrl=audit_export_queue_url())["Messages"]
        return dict(messages[0])

    def run(self, message: dict[str, Any], receive_count: int = 1) -> list[dict[str, Any]]:
        """Delivers one message; returns the batch item failures."""
        event = self.load_event("audit_export_worker")
        event["Records"][0].update(messageId=message["MessageId"], body=message["Body"])
        event["Records"][0]["attributes"]["ApproximateReceiveCount"] = str(receive_count)
        answer = self.call_handler("audit_export_worker", event)
        failures: list[dict[str, Any]] = answer["batchItemFailures"]
        return failures

    def run_next(self) -> list[dict[str, Any]]:
        return self.run(self.take())


@pytest.fixture
def export_worker(
    api: ApiCaller,
    import_function: Callable[[str], ModuleType],
    load_event: Callable[[str], dict[str, Any]],
    lambda_context: Any,
) -> ExportWorker:
    return ExportWorker(import_function, load_event, lambda_context)


# ---------------------------------------------------------------- recording


def test_every_tenant_call_leaves_one_audit_line_with_who_what_and_outcome(
    aws: None, api: ApiCaller, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given an unknown incident of tenant 7
    # When a partner reads it (404), and a credential without the permission tries (403)
    status, _, _ = api.call(
        "incident_get",
        tenant=7,
        permissions="BROWSE_EVENTS",
        credential_id="cred-reader",
        path={"incidentId": "424242"},
    )
    refused, _, _ = api.call(
        "incident_get", tenant=7, permissions="MANAGE_USERS", path={"incidentId": "424242"}
    )
    # Then each call sent exactly one audit record, refusals included
    assert (status, refused) == (404, 403)
    lines = queued_records()
    assert [line["status"] for line in lines] == [404, 403]
    first = lines[0]
    assert first["tenantId"] == 7
    assert first["credentialId"] == "cred-reader"
    assert first["principal"] == "partner sync"
    assert first["operation"] == "getIncident"
    assert first["method"] == "GET"
    assert first["path"] == "/api/v1/external/mcp/resources/incidents/424242"
    assert first["resourceIds"] == {"incidentId": "424242"}
    assert first["sourceIp"] == "203.0.113.10"
    assert first["userAgent"] == "partner-sync/1.0"
    assert first["requestId"]
    assert first["time"].endswith("Z")
    # And the token never appears, only the credential id
    assert "psap_partner_example-token" not in json.dumps(lines)


def test_a_call_whose_route_fails_is_audited_as_500(
    aws: None,
    api: ApiCaller,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given a read whose store call fails unexpectedly
    from psap.incidents import store as incident_store

    def broken(*_args: Any) -> Any:
        raise RuntimeError("store exploded")

    monkeypatch.setattr(incident_store, "get_incident", broken)
    # When the partner calls it
    status, answer, _ = api.call(
        "incident_get", tenant=10, permissions="BROWSE_EVENTS", path={"incidentId": "1"}
    )
    # Then the caller gets a 500 ErrorInfo without the cause, and the call is audited as such
    assert status == 500
    assert "exploded" not in json.dumps(answer)
    (line,) = queued_records()
    assert (line["operation"], line["status"]) == ("getIncident", 500)


def test_audit_recording_makes_no_store_write_on_a_read(
    aws: None, api: ApiCaller, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given every DynamoDB write call counted
    writes: list[str] = []
    client = dynamodb()
    for name in ("put_item", "batch_write_item", "transact_write_items", "update_item"):
        original = getattr(client, name)

        def counted(*args: Any, _name: str = name, _original: Any = original, **kw: Any) -> Any:
            writes.append(_name)
            return _original(*args, **kw)

        monkeypatch.setattr(client, name, counted)
    # When a partner reads an incident
    api.call("incident_get", tenant=8, permissions="BROWSE_EVENTS", path={"incidentId": "1"})
    # Then the request wrote nothing: its record left as a message to the audit queue
    assert writes == []
    assert len(queued_records()) == 1


def test_a_write_records_the_ids_and_versions_it_changed_not_the_payload(
    aws: None, api: ApiCaller, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a knowledge entry created by a partner
    body = {
        "name": "Chest Pain",
        "provider": "NENA-Standards",
        "knowledgeType": "GUIDE_CARD",
        "apiControl": {"questionList": True},
        "questionList": [{"questionText": "Is the patient awake and breathing normally?"}],
    }
    status, created, _ = api.call(
        "knowledge_create", tenant=9, permissions="MANAGE_KNOWLEDGE", body=body
    )
    assert status == 201, created
    # Then its audit line names the entry and its version, and none of its content
    (line,) = queued_records()
    assert line["changes"] == [
        {"resource": "knowledge", "id": str(created["id"]), "action": "CREATED", "version": 1}
    ]
    assert created["name"] not in json.dumps(line)


def test_a_cad_submission_is_audited_with_its_receipt(
    aws: None,
    api: ApiCaller,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given the CAD intake function's environment
    for name, value in TEMPLATE.functions["CadIntakeFunction"].environment.items():
        monkeypatch.setenv(name, value)
    # When a CAD submits an incident
    status, receipt, _ = api.call(
        "cad_intake", tenant=1, permissions="", credential_id="cred-00cad0000000cad0"
    )
    # Then its audit line is the CAD credential's, naming the receipt it was given
    assert status == 202, receipt
    (line,) = queued_records()
    assert (line["operation"], line["credentialKind"], line["status"]) == (
        "submitCadIncident",
        "cad",
        202,
    )
    assert line["changes"] == [
        {
            "resource": "cadSubmission",
            "id": receipt["receiptId"],
            "action": "ACCEPTED",
            "version": None,
        }
    ]


# ---------------------------------------------------------------- the writer


def test_the_writer_appends_each_record_once_even_when_delivered_twice(
    aws: None,
    api: ApiCaller,
    import_function: Callable[[str], ModuleType],
    lambda_context: Any,
) -> None:
    # Given two calls' audit records, as the audit queue holds them
    api.call("incident_get", tenant=11, permissions="BROWSE_EVENTS", path={"incidentId": "1"})
    api.call("incident_get", tenant=11, permissions="BROWSE_EVENTS", path={"incidentId": "2"})
    bodies = queued_messages()
    writer = import_function("audit_writer")
    # When the event source delivers them, then delivers the same batch again
    first = writer.handler(audit_queue_event(bodies), lambda_context)
    again = writer.handler(audit_queue_event(bodies), lambda_context)
    # Then the tenant's day holds exactly the two records, readable as they were written
    assert first == again == {"batchItemFailures": []}
    items = _stored(11, datetime.now(UTC))
    assert sorted(json.loads(item["record"]["S"])["path"][-1] for item in items) == ["1", "2"]


def test_records_expire_after_the_retention(
    aws: None, api: ApiCaller, import_function: Callable[[str], ModuleType], lambda_context: Any
) -> None:
    # Given the writer with the template's retention
    writer = import_function("audit_writer")
    retention = int(TEMPLATE.functions["AuditWriterFunction"].environment["AUDIT_RETENTION_DAYS"])
    when = NOW.replace(microsecond=0)
    line = audit_record(12, when, "req-ttl").model_dump_json(by_alias=True)
    # When the queue delivers a record
    writer.handler(audit_queue_event([line]), lambda_context)
    # Then the record's TTL is its time plus the retention
    (item,) = _stored(12, when)
    assert int(item["expiresAt"]["N"]) == int((when + timedelta(days=retention)).timestamp())


def test_audit_records_are_append_only_in_code() -> None:
    # Given the audit package's sources
    sources = "".join(path.read_text() for path in (ROOT / "layers/shared/psap/audit").glob("*.py"))
    # Then no code path updates, deletes or batch-writes an audit record
    for forbidden in (
        "update_item",
        "delete_item",
        "batch_write",
        "batch_put",
        "DeleteRequest",
        '"Update"',
        '"Delete"',
    ):
        assert forbidden not in sources
    # (the roles: tests/integration/test_audit_integrity.py)
    # (besides the audit key's use, through DynamoDB and SQS only: template.yaml AuditKeyUsers)
    writer = default_function_roles()["AuditWriterFunction"].actions()
    assert writer - {"kms:Decrypt", "kms:GenerateDataKey"} == {
        "dynamodb:PutItem",
        "dynamodb:Query",
        "dynamodb:GetItem",
    }


# ---------------------------------------------------------------- exports


def _export_body(**fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "from": (NOW - timedelta(days=1)).isoformat(),
        "to": (NOW + timedelta(hours=1)).isoformat(),
    }
    body.update(fields)
    return body


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"from": None}, "from"),
        ({"to": (NOW - timedelta(days=2)).isoformat()}, "'to' must be after 'from'"),
        ({"from": (NOW - timedelta(days=40)).isoformat()}, "at most 31 days"),
        ({"format": "xml"}, "format"),
        ({"status": 99}, "status"),
        ({"to": "yesterday"}, "to"),
    ],
)
def test_export_request_is_checked_before_anything_is_stored(
    aws: None, api: ApiCaller, fields: dict[str, Any], fragment: str
) -> None:
    # Given a bad export request
    body = {key: value for key, value in _export_body(**fields).items() if value is not None}
    # When an Admin sends it
    status, answer, _ = api.call("audit_export_create", tenant=20, body=body)
    # Then it is 400 with an ErrorInfo naming the problem, and nothing was queued
    assert status == 400, answer
    assert set(answer) == {"info", "reason"}
    assert fragment in answer["info"]
    queued = sqs().receive_message(QueueUrl=audit_export_queue_url()).get("Messages", [])
    assert queued == []


def test_only_admins_start_or_read_exports(aws: None, api: ApiCaller) -> None:
    # Given a credential with every data permission but Admin
    others = "MANAGE_KNOWLEDGE,MANAGE_EVENTS,BROWSE_EVENTS,MANAGE_USERS,VIEW_QA"
    # When it asks for an export or its status
    started, _, _ = api.call("audit_export_create", tenant=21, permissions=others, body={})
    read, _, _ = api.call(
        "audit_export_get",
        tenant=21,
        permissions=others,
        path={"exportId": "0b5e8a52-5a3c-4d55-9f0e-6c3f1d2a9b11"},
    )
    # Then both are 403
    assert (started, read) == (403, 403)


def _seed(tenant: int, records: list[AuditRecord]) -> None:
    audit_store.append_records(records, retention_days=365)


def _download(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return str(answer.read().decode("utf-8"))


def test_an_export_streams_the_tenants_records_in_range_to_a_presigned_file(
    aws_server: str,
    api: ApiCaller,
    export_worker: ExportWorker,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given 123 records of tenant 30 over two days (chains of more than one Query page), one
    # before the range, and records of tenant 31 at the same times
    monkeypatch.setattr(audit_store, "_PAGE", 4)
    start = (NOW - timedelta(days=1)).replace(hour=12, minute=0, second=0, microsecond=0)
    inside = [
        audit_record(30, start + timedelta(seconds=index * 600), f"req-{index:05d}")
        for index in range(123)
    ]
    _seed(30, [*inside, audit_record(30, start - timedelta(seconds=1), "req-before")])
    _seed(
        31,
        [audit_record(31, r.time, f"other-{r.request_id}", credential_id="cred-b") for r in inside],
    )
    # When tenant 30's Admin exports the range and the worker runs
    end = start + timedelta(days=2)
    status, export, headers = api.call(
        "audit_export_create",
        tenant=30,
        body={"from": start.isoformat(), "to": end.isoformat()},
    )
    assert status == 202, export
    assert headers["Location"].endswith(export["exportId"])
    assert export["status"] == "QUEUED"
    assert export_worker.run_next() == []
    status, done, _ = api.call("audit_export_get", tenant=30, path={"exportId": export["exportId"]})
    # Then the status says SUCCEEDED with the count, and the presigned file holds exactly the
    # tenant's records in the range, each chain whole (the record before the range as its
    # link only) and verifiable
    assert status == 200
    assert done["status"] == "SUCCEEDED"
    assert done["recordCount"] == 123
    text = _download(done["downloadUrl"])
    lines = [json.loads(line) for line in text.splitlines()]
    records = [line for line in lines if "requestId" in line]
    assert sorted(line["requestId"] for line in records) == [r.request_id for r in inside]
    assert {line["tenantId"] for line in records} == {30}
    verified = verify_lines(text.splitlines())
    assert (verified.records, verified.omitted) == (123, 1)
    assert done["sizeBytes"] > 0
    assert done["downloadUrlExpiresAt"].endswith("Z")
    # And tenant 31 cannot see tenant 30's export
    other, answer, _ = api.call(
        "audit_export_get", tenant=31, path={"exportId": export["exportId"]}
    )
    assert other == 404, answer


def test_a_long_export_runs_in_steps_that_hand_over_with_a_checkpoint(
    aws: None,
    api: ApiCaller,
    export_worker: ExportWorker,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given 90 records of tenant 36 over two days, file parts of ~2 KB (S3's least lowered
    # alike) and a run whose time is always nearly up (the test context has 10 s left)
    monkeypatch.setattr(audit_store, "_PAGE", 5)
    monkeypatch.setattr(export_worker_module, "PART_BYTES", 2048)
    monkeypatch.setattr(moto_s3_models, "S3_UPLOAD_PART_MIN_SIZE", 256)
    start = (NOW - timedelta(days=1)).replace(hour=12, minute=0, second=0, microsecond=0)
    inside = [
        audit_record(36, start + timedelta(seconds=index * 1200), f"req-{index:05d}")
        for index in range(90)
    ]
    _seed(36, inside)
    body = {"from": start.isoformat(), "to": (start + timedelta(days=2)).isoformat()}
    status, export, _ = api.call("audit_export_create", tenant=36, body=body)
    assert status == 202, export
    # When the worker takes the first message
    first = export_worker.take()
    assert export_worker.run(first) == []
    _, running, _ = api.call("audit_export_get", tenant=36, path={"exportId": export["exportId"]})
    # Then the step wrote a part, stored its checkpoint, shows its progress and handed over
    assert running["status"] == "RUNNING"
    assert running["progress"]["steps"] == 1
    assert 0 < running["progress"]["recordsExported"] < 90
    assert running["progress"]["bytesWritten"] >= 2048
    # And a second delivery of the first message while the next step's is queued does no harm
    assert export_worker.run(first) == []
    # When the worker takes every step's message until none is left
    steps = 1
    while messages := sqs().receive_message(QueueUrl=audit_export_queue_url()).get("Messages"):
        assert export_worker.run(dict(messages[0])) == []
        sqs().delete_message(
            QueueUrl=audit_export_queue_url(), ReceiptHandle=messages[0]["ReceiptHandle"]
        )
        steps += 1
        assert steps < 100, "the export never finished"
    _, done, _ = api.call("audit_export_get", tenant=36, path={"exportId": export["exportId"]})
    # Then the export finished in several steps, and the one file holds every record once,
    # every chain whole and verifiable
    assert done["status"] == "SUCCEEDED"
    assert done["recordCount"] == 90
    assert done["progress"]["steps"] > 2
    key = f"tenants/36/audit-exports/{export['exportId']}.ndjson"
    bucket = TEMPLATE.buckets["AuditExportBucket"].name
    text = s3().get_object(Bucket=bucket, Key=key)["Body"].read().decode("utf-8")
    assert len(text.encode("utf-8")) == done["sizeBytes"]
    records = [json.loads(line) for line in text.splitlines() if "requestId" in line]
    assert sorted(line["requestId"] for line in records) == [r.request_id for r in inside]
    assert verify_lines(text.splitlines()).records == 90


def test_export_filters_and_csv_keep_spreadsheets_safe(
    aws_server: str,
    api: ApiCaller,
    export_worker: ExportWorker,
) -> None:
    # Given records of two operations and statuses, one with a formula-like user agent
    when = NOW - timedelta(minutes=30)
    _seed(
        32,
        [
            audit_record(32, when, "req-a", status=404, user_agent="=HYPERLINK(1)"),
            audit_record(32, when + timedelta(seconds=1), "req-b", status=200),
            audit_record(
                32, when + timedelta(seconds=2), "req-c", status=404, operation="listUsers"
            ),
        ],
    )
    # When the Admin exports getIncident calls answered 404, as CSV
    status, export, _ = api.call(
        "audit_export_create",
        tenant=32,
        body=_export_body(format="csv", operation="getIncident", status=404),
    )
    assert status == 202, export
    export_worker.run_next()
    _, done, _ = api.call("audit_export_get", tenant=32, path={"exportId": export["exportId"]})
    # Then the file has the header and the one matching record, its agent neutralized
    rows = list(csv.DictReader(io.StringIO(_download(done["downloadUrl"]))))
    assert done["recordCount"] == 1
    assert [row["requestId"] for row in rows] == ["req-a"]
    assert rows[0]["userAgent"] == "'=HYPERLINK(1)"
    assert json.loads(rows[0]["resourceIds"]) == {"incidentId": "1"}
    assert done["filters"] == {"operation": "getIncident", "credentialId": None, "status": 404}


def test_a_failing_export_is_retried_then_marked_failed_on_the_last_attempt(
    aws: None,
    api: ApiCaller,
    export_worker: ExportWorker,
) -> None:
    # Given an export whose bucket is gone
    status, export, _ = api.call("audit_export_create", tenant=33, body=_export_body())
    assert status == 202
    bucket = TEMPLATE.buckets["AuditExportBucket"].name
    s3().delete_bucket(Bucket=bucket)
    message = export_worker.take()
    # When the first attempt fails, then the last one
    first = export_worker.run(message, receive_count=1)
    _, running, _ = api.call("audit_export_get", tenant=33, path={"exportId": export["exportId"]})
    last = export_worker.run(message, receive_count=3)
    _, failed, _ = api.call("audit_export_get", tenant=33, path={"exportId": export["exportId"]})
    # Then the first is retried (batch item failure), the last records FAILED with a reason
    assert first == [{"itemIdentifier": message["MessageId"]}]
    assert running["status"] == "RUNNING"
    assert last == []
    assert failed["status"] == "FAILED"
    assert failed["failure"]
    assert failed["downloadUrl"] is None


def test_a_finished_export_ignores_a_redelivered_message(
    aws: None,
    api: ApiCaller,
    export_worker: ExportWorker,
) -> None:
    # Given an export that succeeded
    _seed(34, [audit_record(34, NOW - timedelta(minutes=5), "req-1")])
    _, export, _ = api.call("audit_export_create", tenant=34, body=_export_body())
    message = export_worker.take()
    export_worker.run(message)
    _, first, _ = api.call("audit_export_get", tenant=34, path={"exportId": export["exportId"]})
    # When the same message arrives again after more records exist
    _seed(34, [audit_record(34, NOW - timedelta(minutes=4), "req-2")])
    export_worker.run(message)
    _, again, _ = api.call("audit_export_get", tenant=34, path={"exportId": export["exportId"]})
    # Then the export is unchanged
    assert first["recordCount"] == again["recordCount"] == 1
    assert first["finishedAt"] == again["finishedAt"]


def test_unknown_export_ids_are_404(aws: None, api: ApiCaller) -> None:
    for export_id in ("0b5e8a52-5a3c-4d55-9f0e-6c3f1d2a9b11", "not-a-uuid"):
        status, answer, _ = api.call("audit_export_get", tenant=35, path={"exportId": export_id})
        assert status == 404, answer
        assert set(answer) == {"info", "reason"}


def test_a_poison_record_marks_the_export_failed_with_a_reason_at_once(
    aws: None,
    api: ApiCaller,
    export_worker: ExportWorker,
) -> None:
    # Given a good record and, beside it, a stored record that is not JSON (a poison row)
    good = audit_record(35, NOW - timedelta(minutes=5), "req-good")
    _seed(35, [good])
    chain = audit_store.chain_key(35, good.time.date(), shard_of("req-good"))
    poison = {"pk": {"S": chain}, "sk": {"S": f"{2:012d}"}, "record": {"S": "{not json"}}
    dynamodb().put_item(
        TableName=audit_table(), Item={**poison, "prev": {"S": "0"}, "hash": {"S": "0"}}
    )
    status, export, _ = api.call("audit_export_create", tenant=35, body=_export_body())
    assert status == 202
    # When the worker takes its first (not last) attempt
    failures = export_worker.run(export_worker.take(), receive_count=1)
    _, after, _ = api.call("audit_export_get", tenant=35, path={"exportId": export["exportId"]})
    # Then the export is FAILED with a reason now: no retry can read that record, and no job
    # is left RUNNING behind a message in the dead-letter queue
    assert failures == []
    assert after["status"] == "FAILED"
    assert after["failure"]
    assert after["finishedAt"] is not None
