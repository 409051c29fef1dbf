"""Incident upload through its Lambda handlers on moto: the synchronous
path, the inline and presigned asynchronous paths with their worker, every bad-input class,
idempotency, the CAD's ordering guard, incident.updated webhooks and tenant isolation."""

import base64
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

import pytest

from psap import clock
from psap.audit.changes import take_changes
from psap.config import incident_upload_bucket
from psap.incidents import store as incidents
from psap.incidents.models import Incident
from psap.incidents.upload import service
from psap.incidents.upload import store as upload_store
from psap.incidents.upload.applying import Applier
from psap.incidents.upload.models import RowOutcome, UploadReport
from psap.incidents.upload.parsing import ParsedRow
from psap.limits import (
    INCIDENT_UPLOAD_INLINE_MAX_BYTES,
)
from psap.storage.ordering import SourceOrder, UpsertOutcome
from psap.storage.s3 import ObjectChanged, iter_object_lines, s3
from psap.webhooks import store as webhook_store
from tests.support.cad import TEMPLATE, drain
from tests.support.webhooks import add_connector

TENANT = 41
OTHER_TENANT = 42
CSV = "text/csv"
JSONL = "application/x-ndjson"
HEADER = "number,priority,incidentType,location,incidentDate,notes\n"
NOTE = '"[{""note"": ""Smoke from the roof"", ""noteAt"": ""2026-11-23T02:33:00Z""}]"'
ROWS = (
    f"2026-000123,1,Structure Fire,1200 Main St,2026-11-23T02:32:15Z,{NOTE}\n"
    "2026-000124,3,Welfare Check,88 Oak Ave,2026-11-23T03:10:00+01:00,\n"
)

type Call = Callable[..., tuple[int, Any, dict[str, str]]]


@pytest.fixture
def upload_env(aws: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for function in ("IncidentUploadFunction", "IncidentUploadWorkerFunction"):
        for name, value in TEMPLATE.functions[function].environment.items():
            monkeypatch.setenv(name, value)
    take_changes()
    yield


@pytest.fixture
def call(
    upload_env: None,
    import_function: Callable[[str], ModuleType],
    load_event: Callable[[str], dict[str, Any]],
    lambda_context: Any,
) -> Call:
    handlers: dict[str, Any] = {}

    def invoke(
        function: str,
        body: str | None = None,
        content_type: str | None = None,
        path: dict[str, str] | None = None,
        tenant: int = TENANT,
        permissions: str = "MANAGE_EVENTS",
        raw: bytes | None = None,
    ) -> tuple[int, Any, dict[str, str]]:
        if function not in handlers:
            handlers[function] = import_function(function).handler
        event = load_event(function)
        event["body"] = body
        if raw is not None:
            event["body"], event["isBase64Encoded"] = base64.b64encode(raw).decode(), True
        if content_type is not None:
            event["headers"]["Content-Type"] = content_type
            event["multiValueHeaders"]["Content-Type"] = [content_type]
        if path is not None:
            event["pathParameters"] = path
            event["path"] = event["resource"]
            for name, value in path.items():
                event["path"] = event["path"].replace("{" + name + "}", value)
        event["requestContext"]["authorizer"].update(tenantId=str(tenant), permissions=permissions)
        answer = handlers[function](event, lambda_context)
        headers = dict(answer.get("headers") or {})
        headers.update({k: v[0] for k, v in (answer.get("multiValueHeaders") or {}).items()})
        return answer["statusCode"], json.loads(answer["body"]), headers

    return invoke


@pytest.fixture
def small_sync_line(monkeypatch: pytest.MonkeyPatch) -> int:
    """The synchronous line lowered, so async tests stay fast on moto (its transactions
    copy the table)."""
    monkeypatch.setattr(service, "INCIDENT_UPLOAD_SYNC_MAX_ROWS", 10)
    return 10


def upload(call: Call, body: str, content_type: str = CSV, **extra: Any) -> tuple[int, Any]:
    status, answer, _ = call("incident_upload", body, content_type, **extra)
    return status, answer


def job(call: Call, upload_id: str, tenant: int = TENANT) -> tuple[int, Any]:
    status, answer, _ = call("incident_upload_get", path={"uploadId": upload_id}, tenant=tenant)
    return status, answer


def stored(number: str, tenant: int = TENANT) -> Incident | None:
    incident_id = incidents.find_incident_id(tenant, number)
    if incident_id is None:
        return None
    return incidents.get_incident(tenant, incident_id)


def found(number: str) -> Incident:
    incident = stored(number)
    assert incident is not None, number
    return incident


def run_worker(remaining_ms: int = 600_000) -> list[str]:
    """Runs the worker for each message waiting on the upload queue, as SQS would."""
    return [
        service.run_upload(service.UploadMessage.model_validate(body), lambda: remaining_ms)
        for body in drain("IncidentUploadQueue")
    ]


def many_rows(count: int, start: int = 0, priority: str = "2") -> str:
    lines = ["number,priority,incidentType,location\n"]
    lines += [f"N-{n:06d},{priority},Medical,Main St {n}\n" for n in range(start, start + count)]
    return "".join(lines)


# ---------------------------------------------------------------- the synchronous path


def test_csv_upload_creates_incidents_readable_through_the_incidents_endpoint(call: Call) -> None:
    # Given a CSV of two incidents
    # When it is uploaded
    status, report = upload(call, HEADER + ROWS)
    # Then both are created, with the counts and every row's outcome
    assert status == 200
    counts = (report["created"], report["updated"], report["unchanged"], report["rejected"])
    assert counts == (2, 0, 0, 0)
    assert report["rows"] == 2
    assert [(i["line"], i["number"], i["outcome"]) for i in report["incidents"]] == [
        (2, "2026-000123", "CREATED"),
        (3, "2026-000124", "CREATED"),
    ]
    # And each reads back through GET /mcp/resources/incidents/{id}
    incident_id = str(report["incidents"][0]["id"])
    status, incident, _ = call(
        "incident_get", path={"incidentId": incident_id}, permissions="BROWSE_EVENTS"
    )
    assert status == 200
    assert incident["number"] == "2026-000123"
    assert incident["incidentType"] == "Structure Fire"
    assert incident["notes"][0]["note"] == "Smoke from the roof"
    assert incident["notes"][0]["noteAt"] == "2026-11-23T02:33:00.000Z"
    # An offset is converted to UTC
    assert found("2026-000124").incident_date == datetime(2026, 11, 23, 2, 10, tzinfo=UTC)


def test_reuploading_the_same_file_changes_nothing(call: Call) -> None:
    # Given a file uploaded once
    upload(call, HEADER + ROWS)
    first = incidents.read_incidents_by_number(TENANT, ["2026-000123"])
    # When the same file is uploaded again
    status, report = upload(call, HEADER + ROWS)
    # Then every row is UNCHANGED and nothing was written
    assert status == 200
    assert (report["created"], report["updated"], report["unchanged"]) == (0, 0, 2)
    again = incidents.read_incidents_by_number(TENANT, ["2026-000123"])
    assert again["2026-000123"].updated_at == first["2026-000123"].updated_at


def test_a_row_updates_the_fields_it_carries_and_keeps_the_others(call: Call) -> None:
    # Given an incident with notes and a location
    upload(call, HEADER + ROWS)
    # When a CSV without the notes and location columns changes its priority
    status, report = upload(call, "number,priority,disposition\n2026-000123,2,\n")
    # Then it is UPDATED; priority changed, disposition cleared, notes and location kept
    assert status == 200
    assert report["incidents"][0]["outcome"] == "UPDATED"
    incident = stored("2026-000123")
    assert incident is not None
    assert incident.priority == "2"
    assert incident.location == "1200 Main St"
    assert [note.note for note in incident.notes] == ["Smoke from the roof"]


def test_jsonl_rows_carry_notes_and_responders_and_null_clears(call: Call) -> None:
    # Given a JSON Lines file with responders
    line = {
        "number": "J-1",
        "priority": "1",
        "responders": [
            {"unitName": "ENGINE 5", "dispatchedAt": "2026-11-23T02:35:00Z"},
        ],
        "notes": [{"note": "Caller hung up", "noteAt": "2026-11-23T02:34:00.5Z"}],
    }
    status, report = upload(call, json.dumps(line) + "\n", JSONL)
    assert status == 200 and report["created"] == 1
    incident = stored("J-1")
    assert incident is not None and incident.responders[0].unit_name == "ENGINE 5"
    # When a later line sets notes to null and priority to null
    status, report = upload(
        call, json.dumps({"number": "J-1", "notes": None, "priority": None}), "application/jsonl"
    )
    # Then notes are empty, priority is null, responders are kept
    assert report["incidents"][0]["outcome"] == "UPDATED"
    incident = stored("J-1")
    assert incident is not None
    assert incident.notes == [] and incident.priority is None
    assert len(incident.responders) == 1


def test_service_owned_fields_are_ignored(call: Call) -> None:
    # Given an incident
    upload(call, json.dumps({"number": "S-1"}), JSONL)
    before = stored("S-1")
    assert before is not None
    # When a line sends another id, createdAt and event for it (as a GET answer would)
    line = {"number": "S-1", "id": 999999, "createdAt": "2001-01-01T00:00:00Z", "event": {"id": 7}}
    status, report = upload(call, json.dumps(line), JSONL)
    # Then nothing changes: they are the service's
    assert status == 200
    assert report["incidents"][0] == {
        "line": 1,
        "number": "S-1",
        "id": before.id,
        "outcome": "UNCHANGED",
    }
    assert stored("S-1") == before


BAD_JSONL_ROWS = [
    ('{"number": "B-1", "unitName": "E5"}', "Unknown field 'unitName'"),
    ('{"number": "B-1", "incidentDate": "23/11/2026"}', "Invalid field 'incidentDate'"),
    ('{"number": "B-1", "closedAt": "2026-11-23T02:32:15"}', "Invalid field 'closedAt'"),
    ('{"number": "B-1", "callPickupTime": "1700000000"}', "Invalid field 'callPickupTime'"),
    ('{"number": "B-1", "notes": [{"noteAt": "yesterday"}]}', "Invalid field 'notes[0].noteAt'"),
    ('{"number": "B-1", "notes": [{"text": "x"}]}', "Unknown field 'notes[0].text'"),
    ('{"number": "B-1", "notes": "x"}', "Invalid field 'notes'"),
    ('{"number": "B-1", "priority": 1}', "Invalid field 'priority'"),
    ('{"priority": "1"}', "Missing field 'number'"),
    ('{"number": "  "}', "Missing field 'number'"),
    ('{"number": 5}', "Missing field 'number'"),
    ("{not json", "Not valid JSON"),
    ('["B-1"]', "one JSON object"),
]


@pytest.mark.parametrize(("line", "reason"), BAD_JSONL_ROWS)
def test_a_bad_jsonl_row_is_rejected_with_its_line_and_reason(
    call: Call, line: str, reason: str
) -> None:
    # Given a good row, then a bad one on line 3 (line 2 is blank)
    body = json.dumps({"number": "G-1"}) + "\n\n" + line + "\n"
    # When uploaded
    status, report = upload(call, body, JSONL)
    # Then the good row is created and the bad one reported with its line and reason
    assert status == 200
    assert (report["created"], report["rejected"]) == (1, 1)
    assert report["rejections"][0]["line"] == 3
    assert reason in report["rejections"][0]["reason"]
    assert stored("B-1") is None


BAD_CSV_ROWS = [
    ("B-1,1,Fire,Main St,2026-11-23 02:32,\n", "Invalid field 'incidentDate'"),
    ("B-1,1,Fire,Main St\n", "4 cells; the header has 6 columns"),
    ("B-1,1,Fire,Main St,,[not json\n", "Invalid field 'notes'"),
    (",1,Fire,Main St,,\n", "Missing field 'number'"),
]


@pytest.mark.parametrize(("row", "reason"), BAD_CSV_ROWS)
def test_a_bad_csv_row_is_rejected_with_its_line_and_reason(
    call: Call, row: str, reason: str
) -> None:
    status, report = upload(call, HEADER + ROWS + row)
    assert status == 200
    assert (report["created"], report["rejected"]) == (2, 1)
    assert report["rejections"][0]["line"] == 4
    assert reason in report["rejections"][0]["reason"]


def test_a_line_that_is_not_utf8_is_rejected_and_the_others_applied(call: Call) -> None:
    raw = b'{"number": "U-1"}\n{"number": "U-\xff"}\n'
    status, report, _ = call("incident_upload", content_type=JSONL, raw=raw)
    assert status == 200
    assert report["created"] == 1
    assert report["rejections"] == [{"line": 2, "number": None, "reason": "Not valid UTF-8"}]


def test_a_number_repeated_in_one_file_is_rejected_naming_the_first_line(call: Call) -> None:
    body = HEADER + ROWS + "2026-000123,2,Fire,Elm St,,\n"
    status, report = upload(call, body)
    assert status == 200
    assert report["rejections"] == [
        {"line": 4, "number": "2026-000123", "reason": "Number '2026-000123' is already on line 2"}
    ]
    incident = stored("2026-000123")
    assert incident is not None and incident.priority == "1"


FILE_ERRORS = [
    ("number,priorty\nA-1,1\n", CSV, 400, "Unknown CSV column 'priorty'"),
    ("priority\n1\n", CSV, 400, "no 'number' column"),
    ("number,number\nA-1,A-2\n", CSV, 400, "Repeated CSV column 'number'"),
    ('number,location\nA-1,"open\n', CSV, 400, "malformed"),
    ("", CSV, 400, "empty"),
    ("\n \n", JSONL, 400, "empty"),
    ("number,priority\n", CSV, 400, "no incidents"),
    ('{"number": "A-1"}', "application/json", 415, "Content-Type"),
    ("number\nA-1\n", "text/plain", 415, "Content-Type"),
    ("number\nA-1\n", "text/csv; charset=latin-1", 415, "UTF-8"),
]


@pytest.mark.parametrize(("body", "content_type", "status", "info"), FILE_ERRORS)
def test_a_file_level_error_answers_errorinfo_and_writes_nothing(
    call: Call, body: str, content_type: str, status: int, info: str
) -> None:
    answer_status, answer = upload(call, body, content_type)
    assert answer_status == status
    assert set(answer) == {"info", "reason"}
    assert info in answer["info"]
    assert stored("A-1") is None


def test_a_body_over_the_inline_limit_is_413(call: Call) -> None:
    body = "number\n" + "x" * (INCIDENT_UPLOAD_INLINE_MAX_BYTES + 1)
    status, answer = upload(call, body)
    assert status == 413
    assert answer["reason"] == "PAYLOAD_TOO_LARGE"


def test_upload_needs_manage_events(call: Call) -> None:
    status, answer = upload(call, HEADER + ROWS, permissions="BROWSE_EVENTS")
    assert status == 403
    assert answer["info"] == "Access denied — Manage Events permission required"
    assert stored("2026-000123") is None


def test_tenants_are_isolated_by_number_and_by_upload(call: Call) -> None:
    # Given tenant A's incident
    upload(call, HEADER + ROWS)
    # When tenant B uploads the same number
    status, report = upload(call, "number,priority\n2026-000123,5\n", tenant=OTHER_TENANT)
    assert status == 200
    # Then B gets its own incident and A's is untouched
    assert report["incidents"][0]["outcome"] == "CREATED"
    mine, theirs = stored("2026-000123"), stored("2026-000123", OTHER_TENANT)
    assert mine is not None and theirs is not None
    assert mine.id != theirs.id and mine.priority == "1" and theirs.priority == "5"
    # And an upload job of A is 404 for B
    _status, answer, _ = call(
        "incident_upload_create", json.dumps({"format": "csv"}), "application/json"
    )
    assert job(call, answer["uploadId"], tenant=OTHER_TENANT)[0] == 404
    assert job(call, answer["uploadId"])[0] == 200


def test_a_sync_upload_notes_its_changes_for_the_audit_record(upload_env: None) -> None:
    # When a file of two incidents is applied
    report = service.upload_incidents(TENANT, CSV, (HEADER + ROWS).encode())
    # Then the audit record gets each incident (ids only) and one summary for the upload
    changes = [(c.resource, c.id, c.action) for c in take_changes()]
    assert isinstance(report, UploadReport)
    assert changes == [
        ("incident", str(report.incidents[0].id), "CREATED"),
        ("incident", str(report.incidents[1].id), "CREATED"),
        ("incidentUpload", report.upload_id, "ACCEPTED"),
    ]


# ---------------------------------------------------------------- the CAD's ordering guard


def test_an_upload_applies_over_cad_data_and_later_cad_updates_still_apply(call: Call) -> None:
    # Given an incident the CAD wrote with a source order
    t1 = datetime(2026, 11, 23, 2, 0, tzinfo=UTC)
    incidents.upsert_incident(
        TENANT, Incident(number="C-1", priority="1"), SourceOrder(t1), now=clock.utc_now()
    )
    # When an operator's upload corrects it
    _status, report = upload(call, "number,priority\nC-1,2\n")
    # Then it applies whatever the CAD's guard holds
    assert report["incidents"][0]["outcome"] == "UPDATED"
    assert found("C-1").priority == "2"
    # And the CAD's order is kept: an older CAD update is still STALE, a newer one applies
    older = incidents.upsert_incident(
        TENANT, Incident(number="C-1", priority="9"), SourceOrder(t1), now=clock.utc_now()
    )
    assert older.outcome is UpsertOutcome.STALE
    newer = incidents.upsert_incident(
        TENANT, Incident(number="C-1", priority="3"), SourceOrder(t1, 1), now=clock.utc_now()
    )
    assert newer.outcome is UpsertOutcome.UPDATED and found("C-1").priority == "3"


def test_a_concurrent_cad_update_is_never_lost(upload_env: None) -> None:
    # Given an incident read by an upload, then changed by the CAD before the upload writes
    incidents.upsert_incident(
        TENANT,
        Incident(number="R-1", priority="1"),
        SourceOrder(datetime(2026, 1, 1, tzinfo=UTC)),
        now=clock.utc_now(),
    )
    read = incidents.read_incidents_by_number(TENANT, ["R-1"])["R-1"]
    incidents.upsert_incident(
        TENANT,
        Incident(number="R-1", priority="1", location="Elm St"),
        SourceOrder(datetime(2026, 1, 2, tzinfo=UTC)),
        now=clock.utc_now(),
    )
    # When the upload's row is applied on what it read
    applier = Applier(TENANT, "upl-test", clock.utc_now)
    result = applier._update(ParsedRow(1, "R-1", {"number": "R-1", "priority": "2"}), read)
    # Then it is laid over the CAD's new state: both changes are there
    assert result.outcome is RowOutcome.UPDATED
    incident = stored("R-1")
    assert incident is not None and (incident.priority, incident.location) == ("2", "Elm St")


# ---------------------------------------------------------------- webhooks


def test_an_updated_incident_emits_incident_updated_once(cad_aws: None, call: Call) -> None:
    # Given a connector and an incident
    connector = add_connector("http://127.0.0.1:9/cad", tenant=TENANT)
    upload(call, HEADER + ROWS)
    assert drain("WebhookQueue") == []  # CREATED sends nothing
    # When one row changes (and the other is unchanged)
    body = HEADER + ROWS.replace("Structure Fire", "Vehicle Fire")
    upload(call, body)
    # Then one incident.updated delivery names the incident, the upload and the line
    messages = drain("WebhookQueue")
    assert len(messages) == 1
    delivery = webhook_store.get_delivery(TENANT, messages[0]["deliveryId"])
    assert delivery is not None and delivery.connector_id == connector.connector.connector_id
    event = json.loads(delivery.body)
    assert event["type"] == "incident.updated"
    assert event["subject"] == "2026-000123"
    assert event["data"]["source"] == "UPLOAD" and event["data"]["line"] == 2
    assert event["data"]["incidentId"] == found("2026-000123").id
    # And the same file again sends nothing more
    upload(call, body)
    assert drain("WebhookQueue") == []


# ---------------------------------------------------------------- the asynchronous paths


def test_a_larger_inline_file_is_queued_and_applied_by_the_worker(
    small_sync_line: int, call: Call
) -> None:
    # Given a CSV above the synchronous line
    rows = small_sync_line + 20
    # When uploaded
    status, answer, headers = call("incident_upload", many_rows(rows), CSV)
    # Then it is queued: 202, the job, Location = its status resource
    assert status == 202
    assert answer["status"] == "QUEUED"
    assert headers["Location"] == f"/api/v1/external/incidents/uploads/{answer['uploadId']}"
    assert job(call, answer["uploadId"])[1]["status"] == "QUEUED"
    # When the worker runs
    assert run_worker() == ["SUCCEEDED"]
    # Then the status shows the counts
    status, done = job(call, answer["uploadId"])
    assert status == 200
    assert done["status"] == "SUCCEEDED"
    assert (done["rows"], done["created"], done["rejected"]) == (rows, rows, 0)
    assert done["startedAt"] is not None and done["finishedAt"] is not None
    assert stored(f"N-{rows - 1:06d}") is not None


def test_presigned_upload_then_start_then_status(call: Call) -> None:
    # Given a new upload for a file
    status, ticket, _ = call(
        "incident_upload_create", json.dumps({"format": "jsonl"}), "application/json"
    )
    assert status == 201
    assert ticket["status"] == "AWAITING_FILE"
    assert ticket["uploadUrl"].startswith("https://") or ticket["uploadUrl"].startswith("http")
    upload_id = ticket["uploadId"]
    # When it is started before the file is there: 409
    status, _answer, _ = call("incident_upload_start", path={"uploadId": upload_id})
    assert status == 409
    # When the file is PUT (what the presigned URL allows) and the upload started
    body = "\n".join(json.dumps({"number": f"P-{n}", "priority": "1"}) for n in range(30))
    body += '\n{"number": "P-bad", "closedAt": "soon"}\n'
    key = f"tenants/{TENANT}/incident-uploads/{upload_id}.jsonl"
    s3().put_object(Bucket=incident_upload_bucket(), Key=key, Body=body.encode())
    status, started, headers = call("incident_upload_start", path={"uploadId": upload_id})
    assert status == 202 and started["status"] == "QUEUED"
    assert headers["Location"].endswith(upload_id)
    # And started again: the same answer, one message only
    status, again, _ = call("incident_upload_start", path={"uploadId": upload_id})
    assert status == 202 and again["status"] == "QUEUED"
    assert run_worker() == ["SUCCEEDED"]
    _, done = job(call, upload_id)
    assert (done["created"], done["rejected"]) == (30, 1)
    assert done["rejections"][0]["line"] == 31
    assert "closedAt" in done["rejections"][0]["reason"]


def test_a_file_replaced_after_start_is_refused_not_half_applied(call: Call) -> None:
    # Given a presigned upload whose file was PUT and started
    _, ticket, _ = call(
        "incident_upload_create", json.dumps({"format": "jsonl"}), "application/json"
    )
    upload_id = ticket["uploadId"]
    key = f"tenants/{TENANT}/incident-uploads/{upload_id}.jsonl"
    first = "\n".join(json.dumps({"number": f"R-{n}", "priority": "1"}) for n in range(5))
    s3().put_object(Bucket=incident_upload_bucket(), Key=key, Body=first.encode())
    assert call("incident_upload_start", path={"uploadId": upload_id})[0] == 202
    # When another file is PUT to the same URL before the worker runs
    second = json.dumps({"number": "R-other", "priority": "2"})
    s3().put_object(Bucket=incident_upload_bucket(), Key=key, Body=second.encode())
    # Then the job fails naming why, and neither file's incidents were written
    assert run_worker() == ["FAILED"]
    _, done = job(call, upload_id)
    assert done["status"] == "FAILED"
    assert "replaced" in done["failureReason"]
    assert stored("R-0") is None and stored("R-other") is None


def test_a_resumed_run_reads_the_same_file_version(call: Call) -> None:
    # Given a started upload whose file is replaced while the job is being read
    _, ticket, _ = call(
        "incident_upload_create", json.dumps({"format": "jsonl"}), "application/json"
    )
    upload_id = ticket["uploadId"]
    key = f"tenants/{TENANT}/incident-uploads/{upload_id}.jsonl"
    body = "\n".join(json.dumps({"number": f"V-{n}", "priority": "1"}) for n in range(5))
    s3().put_object(Bucket=incident_upload_bucket(), Key=key, Body=body.encode())
    call("incident_upload_start", path={"uploadId": upload_id})
    record = upload_store.get_job(TENANT, upload_id)
    assert record is not None and record.file_etag
    # When the object is read pinned to that version after a replacement
    s3().put_object(Bucket=incident_upload_bucket(), Key=key, Body=b'{"number": "V-x"}')
    # Then S3 refuses the read instead of serving the other file
    with pytest.raises(ObjectChanged):
        list(iter_object_lines(incident_upload_bucket(), key, record.file_etag))


def test_an_unknown_upload_is_404(call: Call) -> None:
    upload_id = "upl-" + "0" * 32
    assert job(call, upload_id)[0] == 404
    assert call("incident_upload_start", path={"uploadId": upload_id})[0] == 404
    assert job(call, "not-an-id")[0] == 400


def test_create_rejects_an_unknown_format(call: Call) -> None:
    status, _answer, _ = call(
        "incident_upload_create", json.dumps({"format": "xlsx"}), "application/json"
    )
    assert status == 400


def test_the_worker_is_safe_to_run_twice_for_one_message(small_sync_line: int, call: Call) -> None:
    # Given a queued upload
    _status, answer, _ = call("incident_upload", many_rows(small_sync_line + 1), CSV)
    message = drain("IncidentUploadQueue")
    # When the message is delivered twice
    first = service.run_upload(service.UploadMessage.model_validate(message[0]), lambda: 600_000)
    second = service.run_upload(service.UploadMessage.model_validate(message[0]), lambda: 600_000)
    # Then the second run changes nothing
    assert (first, second) == ("SUCCEEDED", "IGNORED_SUCCEEDED")
    assert job(call, answer["uploadId"])[1]["created"] == small_sync_line + 1


def test_a_run_near_its_timeout_hands_over_and_the_next_goes_on(
    small_sync_line: int, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given checkpoints every 100 rows and a run that is out of time at once
    monkeypatch.setattr(service, "CHECKPOINT_ROWS", 10)
    rows = small_sync_line + 50
    _status, answer, _ = call("incident_upload", many_rows(rows), CSV)
    # When the worker runs with less than its margin left
    assert run_worker(remaining_ms=1_000) == ["HANDED_OVER"]
    # Then the job shows its progress so far
    _, partial = job(call, answer["uploadId"])
    assert partial["status"] == "RUNNING" and partial["created"] == 10
    # And the next message goes on from the checkpoint to the end, counting each row once
    outcomes: list[str] = []
    while not outcomes or outcomes[-1] == "HANDED_OVER":
        outcomes = run_worker(remaining_ms=1_000 if len(outcomes) < 2 else 600_000) or ["?"]
    _, done = job(call, answer["uploadId"])
    assert done["status"] == "SUCCEEDED"
    assert (done["rows"], done["created"], done["unchanged"]) == (rows, rows, 0)


def test_a_file_the_worker_cannot_read_fails_with_a_reason(
    small_sync_line: int, call: Call
) -> None:
    body = "number,colour\n" + "A-1,red\n" * (small_sync_line + 1)
    status, answer, _ = call("incident_upload", body, CSV)
    assert status == 202
    assert run_worker() == ["FAILED"]
    _, done = job(call, answer["uploadId"])
    assert done["status"] == "FAILED"
    assert "Unknown CSV column 'colour'" in done["failureReason"]


def test_rejections_are_kept_capped_with_the_total(
    small_sync_line: int, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service, "REJECTIONS_KEPT", 3)
    body = "number,closedAt\n" + "".join(f"X-{n},later\n" for n in range(small_sync_line + 5))
    _status, answer, _ = call("incident_upload", body, CSV)
    run_worker()
    _, done = job(call, answer["uploadId"])
    assert done["rejected"] == small_sync_line + 5
    assert [r["line"] for r in done["rejections"]] == [2, 3, 4]
    assert done["rejectionsTruncated"] is True


def test_the_worker_handler_reads_sqs_records(
    small_sync_line: int,
    call: Call,
    import_function: Callable[[str], ModuleType],
    load_event: Callable[[str], dict[str, Any]],
    lambda_context: Any,
) -> None:
    _status, answer, _ = call("incident_upload", many_rows(small_sync_line + 1), CSV)
    event = load_event("incident_upload_worker")
    event["Records"][0]["body"] = json.dumps(drain("IncidentUploadQueue")[0])
    lambda_context.get_remaining_time_in_millis = lambda: 600_000
    result = import_function("incident_upload_worker").handler(event, lambda_context)
    assert result == {"batchItemFailures": []}
    assert job(call, answer["uploadId"])[1]["status"] == "SUCCEEDED"


# ---------------------------------------------------------------- poison rows (hostile input)

POISON_JSONL = (
    '{"number": "P-1", "priority": "1"}\n'
    '{"number": "P-2", "location": "Main St \\ud800"}\n'
    '{"number": "P-3", "notes": [{"note": "ok\\u0000"}]}\n'
    '{"number": "P-4", "additionalContext": "line one\\n\\tline two"}\n'
)


def test_a_sync_row_breaking_the_text_policy_is_rejected_alone_and_never_half_written(
    call: Call,
) -> None:
    # Given a JSON Lines file whose rows 2 and 3 hold a lone surrogate and a NUL
    # When it is uploaded synchronously
    status, report = upload(call, POISON_JSONL, JSONL)
    # Then 200 (no 5xx): rows 2 and 3 are rejected naming their field, the others applied
    assert status == 200, report
    rejected = {row["line"]: row for row in report["rejections"]}
    assert set(rejected) == {2, 3}
    assert "'location'" in rejected[2]["reason"] and "surrogate" in rejected[2]["reason"]
    assert "'notes[0].note'" in rejected[3]["reason"]
    assert (report["created"], report["rejected"]) == (2, 2)
    # And read back: the good rows are whole (free text keeps its tab and newline), the
    # poison rows are not there at all
    assert found("P-1").priority == "1"
    assert found("P-4").additional_context == "line one\n\tline two"
    assert stored("P-2") is None and stored("P-3") is None


def test_an_async_poison_row_is_rejected_and_the_job_finishes(
    small_sync_line: int, call: Call
) -> None:
    # Given a file above the synchronous line with a poison row in the middle
    body = "\n".join(
        json.dumps({"number": f"Q-{index}", "priority": "2"}) for index in range(small_sync_line)
    )
    body += "\n" + POISON_JSONL.splitlines()[1] + "\n"
    status, queued = upload(call, body, JSONL)
    assert status == 202
    # When the worker runs
    assert run_worker() == ["SUCCEEDED"]
    # Then the job finished: the poison row rejected with its reason, every other row applied
    _, done = job(call, queued["uploadId"])
    assert done["status"] == "SUCCEEDED"
    assert (done["created"], done["rejected"]) == (small_sync_line, 1)
    assert "surrogate" in done["rejections"][0]["reason"]
    assert stored("P-2") is None


def test_an_unexpected_error_in_the_worker_marks_the_job_failed_with_a_reason(
    small_sync_line: int, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a queued upload, and a store that fails on one row in a way no retry can fix
    body = "\n".join(
        json.dumps({"number": f"R-{index}", "priority": "2"})
        for index in range(small_sync_line + 5)
    )
    status, queued = upload(call, body, JSONL)
    assert status == 202
    real_create = incidents.create_incident_with_number

    def create_or_break(tenant: int, new_id: int, incident: Incident, now: Any) -> Any:
        if incident.number == "R-3":
            raise TypeError("a bug met a row it did not expect")
        return real_create(tenant, new_id, incident, now=now)

    monkeypatch.setattr(incidents, "create_incident_with_number", create_or_break)
    # When the worker runs
    outcome = run_worker()
    # Then the job is FAILED with a reason (not RUNNING forever behind a dead-letter message)
    assert outcome == ["FAILED"]
    _, failed = job(call, queued["uploadId"])
    assert failed["status"] == "FAILED"
    assert "unexpected error" in failed["failureReason"]
    assert failed["finishedAt"] is not None
