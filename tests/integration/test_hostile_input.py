"""Hostile and malformed input on every write route: each class answers a 4xx
ErrorInfo with a `reason`, and nothing is written anywhere (every table, bucket and queue is
read back and compared).

The classes: a wrong Content-Type (415), a body that is not UTF-8 (400 INVALID_ENCODING),
JSON nested beyond psap.text.MAX_JSON_DEPTH (400 TOO_DEEP, refused before any recursive
parse), a body over the operation's limit (413), the text policy (NUL, other control
characters, lone surrogates: 400 INVALID_TEXT naming the field), unknown fields (400 naming
them), integers beyond their format and dates that are numbers (400).
"""

import base64
import json
from collections.abc import Callable
from datetime import timedelta
from types import ModuleType
from typing import Any

import pytest

from psap.auth import store as auth_store
from psap.auth.credentials import OPERATOR, CredentialKind
from psap.auth.permissions import parse_permissions
from psap.clock import utc_now
from psap.http.operations import OPERATIONS
from psap.storage.dynamodb import dynamodb
from psap.storage.s3 import s3
from psap.storage.sqs import sqs
from psap.text import MAX_JSON_DEPTH
from tests.support.harness import HandlerHarness, with_path

# Every operation with a request body: (function directory, JSON body or not).
BODY_ROUTES = {
    "knowledge_create": True,
    "knowledge_append": True,
    "audit_export_create": True,
    "incident_upload_create": True,
    "cad_intake": True,
    "media_radio_traffic_upload": False,
    "media_radio_traffic_upload_json": True,
    "incident_upload": False,
    "admin_connector_create": True,
    "admin_connector_update": True,
    "admin_connector_rotate": True,
    "admin_delivery_recover": True,
    "admin_credential_issue": True,
    "admin_tenant_export_create": True,
    "console_session": True,
}
# A single-line string field of each JSON route's sample body, for the text policy.
TEXT_FIELD = {
    "knowledge_create": "name",
    "knowledge_append": "name",
    "audit_export_create": "credentialId",
    "incident_upload_create": "format",
    "cad_intake": "source",
    "admin_connector_create": "name",
    "admin_credential_issue": "label",
    "console_session": "code",
    "media_radio_traffic_upload_json": "channel",
}
HOSTILE_CONTENT_TYPES = (
    "text/plain",
    "application/xml",
    "multipart/form-data",
    "application/x-www-form-urlencoded",
    "application/json; charset=latin-1",
)


def stored_everything() -> dict[str, Any]:
    """Every item of every table, every object key of every bucket, every queued message but
    the audit queue's (a refused request is audited: that record is meant to be sent)."""
    state: dict[str, Any] = {}
    client = dynamodb()
    for table in client.list_tables()["TableNames"]:
        items = client.scan(TableName=table)["Items"]
        state[f"table:{table}"] = sorted(json.dumps(item, sort_keys=True) for item in items)
    for bucket in s3().list_buckets()["Buckets"]:
        listed = s3().list_objects_v2(Bucket=bucket["Name"]).get("Contents", [])
        state[f"bucket:{bucket['Name']}"] = sorted(entry["Key"] for entry in listed)
    for url in sqs().list_queues().get("QueueUrls", []):
        if url.endswith("-AuditQueue"):
            continue
        attributes = sqs().get_queue_attributes(
            QueueUrl=url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        state[f"queue:{url}"] = attributes
    return state


def admit(event: dict[str, Any]) -> None:
    """The admin API re-reads its caller's credential: make the sample event's caller a real
    credential of a real tenant (written before the test takes its snapshot)."""
    context = event["requestContext"]["authorizer"]
    tenant = int(context["tenantId"])
    while not any(known.tenant_id == tenant for known in auth_store.list_tenants()):
        auth_store.create_tenant("Hostile input 911")
    issued = auth_store.issue_credential(
        tenant,
        CredentialKind.PARTNER,
        parse_permissions(str(context.get("permissions", ""))),
        label="hostile input caller",
        expires_at=utc_now() + timedelta(days=1),
        issued_by=OPERATOR,
    )
    context["credentialId"] = issued.credential.credential_id


def as_radio_traffic_json(event: dict[str, Any]) -> dict[str, Any]:
    """The raw form's sample event as the JSON form's request: the same fields and file."""
    query = event["queryStringParameters"]
    path = "/api/v1/external/media/radio-traffic/json"
    event["resource"] = event["path"] = event["requestContext"]["resourcePath"] = path
    event["requestContext"]["path"] = f"/prod{path}"
    document = {
        "eventId": int(query["eventId"]),
        "channel": query["channel"],
        "recordingStartedAt": query["recordingStartedAt"],
        "contentBase64": base64.b64encode(event["body"].encode("utf-8")).decode("ascii"),
    }
    event["body"], event["isBase64Encoded"] = json.dumps(document), False
    event["queryStringParameters"] = event["multiValueQueryStringParameters"] = None
    with_content_type(event, "application/json")
    return event


# A function's second route, attacked as a route of its own: its name here -> the function
# and how its sample event becomes that route's request.
SECOND_ROUTES = {
    "media_radio_traffic_upload_json": ("media_radio_traffic_upload", as_radio_traffic_json),
}


class WriteRoutes(HandlerHarness):
    """The write routes' functions, called with their sample events shaped by each test."""

    def event(self, function: str) -> dict[str, Any]:
        if function in SECOND_ROUTES:
            code, shaped = SECOND_ROUTES[function]
            return shaped(self.load_event(code))
        event = self.load_event(function)
        if function.startswith("admin_"):
            admit(event)
        return event

    def raw_call(self, function: str, event: dict[str, Any]) -> dict[str, Any]:
        code = SECOND_ROUTES[function][0] if function in SECOND_ROUTES else function
        answer: dict[str, Any] = self.call_handler(code, event)
        return answer

    def call(self, function: str, event: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        answer = self.raw_call(function, event)
        return answer["statusCode"], json.loads(answer["body"])

    def refused(self, function: str, event: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Calls the route and proves nothing was written; returns status and ErrorInfo."""
        before = stored_everything()
        status, body = self.call(function, event)
        assert 400 <= status < 500, (status, body)
        assert set(body) == {"info", "reason"} and body["reason"], body
        assert stored_everything() == before
        return status, body


@pytest.fixture
def routes(
    aws: None,
    import_function: Callable[[str], ModuleType],
    load_event: Callable[[str], dict[str, Any]],
    lambda_context: Any,
) -> WriteRoutes:
    return WriteRoutes(import_function, load_event, lambda_context)


def with_content_type(event: dict[str, Any], content_type: str) -> None:
    for key in [key for key in event["headers"] if key.lower() == "content-type"]:
        del event["headers"][key]
    event["headers"]["Content-Type"] = content_type
    multi = event.get("multiValueHeaders") or {}
    for key in [key for key in multi if key.lower() == "content-type"]:
        del multi[key]
    if event.get("multiValueHeaders") is not None:
        multi["Content-Type"] = [content_type]


def with_body_bytes(event: dict[str, Any], data: bytes) -> None:
    """As API Gateway passes a binary body: base64, flagged."""
    event["body"] = base64.b64encode(data).decode("ascii")
    event["isBase64Encoded"] = True


def with_field(event: dict[str, Any], name: str, value: Any) -> None:
    body = json.loads(event["body"])
    body[name] = value
    event["body"] = json.dumps(body)


def _operation(event: dict[str, Any]) -> Any:
    """The operation a sample event calls."""
    return OPERATIONS[(event["httpMethod"], event["resource"])]


def test_every_write_route_with_a_body_is_covered_here() -> None:
    # Given the operation table, When its operations with a body rule are listed
    with_body = {operation.operation_id for operation in OPERATIONS.values() if operation.body}
    # Then each is one of the routes this suite attacks
    assert with_body == {
        "createKnowledge",
        "appendKnowledgeVersion",
        "createAuditExport",
        "createIncidentUpload",
        "submitCadIncident",
        "uploadRadioTraffic",
        "uploadRadioTrafficJson",
        "uploadIncidents",
        "createConnector",
        "updateConnector",
        "rotateConnectorSecret",
        "recoverDeliveries",
        "issueCredential",
        "createTenantExport",
        "openConsoleSession",
    }


@pytest.mark.parametrize("function", sorted(BODY_ROUTES))
@pytest.mark.parametrize("content_type", HOSTILE_CONTENT_TYPES)
def test_a_body_of_another_content_type_is_415(
    routes: WriteRoutes, function: str, content_type: str
) -> None:
    # Given the route's own sample body, sent as another media type
    event = routes.event(function)
    with_content_type(event, content_type)
    # When it is sent, Then 415 and nothing is written
    status, error = routes.refused(function, event)
    assert (status, error["reason"]) == (415, "UNSUPPORTED_MEDIA_TYPE")


# Files whose rows are checked one by one: a bad row is rejected alone (see below).
ROW_CHECKED = {"incident_upload"}


@pytest.mark.parametrize("function", sorted(set(BODY_ROUTES) - ROW_CHECKED))
def test_a_body_that_is_not_utf8_is_400(routes: WriteRoutes, function: str) -> None:
    # Given the sample body with a byte that is not UTF-8 in it
    event = routes.event(function)
    with_body_bytes(event, event["body"].encode("utf-8")[:5] + b"\xff\xfe" + b"rest")
    # When it is sent, Then 400 INVALID_ENCODING naming the byte, nothing written
    status, error = routes.refused(function, event)
    assert (status, error["reason"]) == (400, "INVALID_ENCODING")
    assert "byte 5" in error["info"]


@pytest.mark.parametrize("function", sorted(f for f, is_json in BODY_ROUTES.items() if is_json))
@pytest.mark.parametrize("levels", [MAX_JSON_DEPTH + 1, 20_000])
def test_json_nested_beyond_the_limit_is_400_before_any_parse(
    routes: WriteRoutes, function: str, levels: int
) -> None:
    # Given a JSON body nested deeper than the documented limit (tens of thousands of levels
    # raise RecursionError in any recursive parser)
    event = routes.event(function)
    event["body"] = "[" * levels + "]" * levels
    # When it is sent, Then 400 TOO_DEEP and nothing is written (or 413 first, for an
    # operation whose size limit the deep body already passes: size is checked first)
    status, error = routes.refused(function, event)
    rule = _operation(event).body
    assert rule is not None
    if len(event["body"]) > rule.max_bytes:
        assert (status, error["reason"]) == (413, "PAYLOAD_TOO_LARGE")
    else:
        assert (status, error["reason"]) == (400, "TOO_DEEP")


@pytest.mark.parametrize("function", sorted(f for f, is_json in BODY_ROUTES.items() if is_json))
def test_json_nested_up_to_the_limit_is_not_refused_for_its_depth(
    routes: WriteRoutes, function: str
) -> None:
    # Given an unknown field holding a value nested exactly at the limit
    event = routes.event(function)
    with_field(event, "deep", json.loads("[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1)))
    # When it is sent, Then it is refused for the unknown field, not for its depth
    _, error = routes.refused(function, event)
    assert error["reason"] != "TOO_DEEP"


@pytest.mark.parametrize("function", sorted(BODY_ROUTES))
def test_a_body_over_the_operations_limit_is_413(routes: WriteRoutes, function: str) -> None:
    # Given a body one byte over the operation's limit
    operation = _operation(routes.event(function))
    assert operation.body is not None
    event = routes.event(function)
    event["body"] = " " * (operation.body.max_bytes + 1)
    # When it is sent, Then 413
    status, error = routes.refused(function, event)
    assert (status, error["reason"]) == (413, "PAYLOAD_TOO_LARGE")


@pytest.mark.parametrize("function", sorted(TEXT_FIELD))
@pytest.mark.parametrize(
    "value", ["a\u0000b", "a\u0007b", "a\u009bb", "\ud800", "x\udfffy"], ids=repr
)
def test_control_characters_and_lone_surrogates_are_400_naming_the_field(
    routes: WriteRoutes, function: str, value: str
) -> None:
    # Given a string field holding a NUL, another control character or a lone surrogate
    # (as JSON escapes: that is how a client sends them)
    event = routes.event(function)
    with_field(event, TEXT_FIELD[function], value)
    # When it is sent, Then 400 INVALID_TEXT naming the field, nothing written
    status, error = routes.refused(function, event)
    assert (status, error["reason"]) == (400, "INVALID_TEXT")
    assert f"'{TEXT_FIELD[function]}'" in error["info"]


@pytest.mark.parametrize(
    ("function", "body"),
    [
        ("media_radio_traffic_upload", "1\n00:00:01,000 --> 00:00:02,000\nENGINE 5: a\u0000b\n"),
    ],
)
def test_a_file_with_a_control_character_is_400_naming_the_line(
    routes: WriteRoutes, function: str, body: str
) -> None:
    event = routes.event(function)
    event["body"] = body
    event["queryStringParameters"] = event.get("queryStringParameters")
    status, error = routes.refused(function, event)
    assert (status, error["reason"]) == (400, "INVALID_TEXT")
    assert "line" in error["info"]


@pytest.mark.parametrize("function", ["knowledge_create", "knowledge_append"])
def test_a_tab_is_refused_in_a_name_and_accepted_in_free_text(
    routes: WriteRoutes, function: str
) -> None:
    # Given a name with a tab (a single-line field)
    event = routes.event(function)
    with_field(event, "name", "Chest\tPain")
    # Then 400 naming it, by the model's text policy
    status, error = routes.refused(function, event)
    assert status == 400
    assert "'name'" in error["info"] and "U+0009" in error["info"]


def test_free_text_may_hold_tabs_and_newlines(routes: WriteRoutes) -> None:
    # Given a description (free text) with a tab and newlines (and no link to resolve)
    event = routes.event("knowledge_create")
    body = json.loads(event["body"])
    body["actions"].pop("links", None)
    event["body"] = json.dumps(body)
    with_field(event, "description", "Line one\n\tLine two\r\n")
    # When it is created, Then it is stored as sent
    status, entry = routes.call("knowledge_create", event)
    assert status == 201, entry
    assert entry["description"] == "Line one\n\tLine two\r\n"


@pytest.mark.parametrize("function", sorted(TEXT_FIELD))
def test_an_unknown_field_is_400_naming_it(routes: WriteRoutes, function: str) -> None:
    # Given the sample body with a misspelled extra field
    event = routes.event(function)
    with_field(event, "lastname", "Smith")
    # When it is sent, Then 400 naming the field, nothing written
    status, error = routes.refused(function, event)
    assert status == 400
    assert "lastname" in error["info"]


@pytest.mark.parametrize(
    ("field", "value"),
    [("from", 0), ("from", "0"), ("to", 1_700_000_000), ("operation", "noSuchOperation")],
)
def test_an_audit_export_with_a_number_for_a_date_or_an_unknown_filter_is_400(
    routes: WriteRoutes, field: str, value: Any
) -> None:
    event = routes.event("audit_export_create")
    with_field(event, field, value)
    status, error = routes.refused("audit_export_create", event)
    assert status == 400
    assert f"'{field}'" in error["info"]


@pytest.mark.parametrize(
    ("function", "where", "name", "value"),
    [
        ("knowledge_list", "query", "page", str(2**31)),
        ("knowledge_list", "query", "size", str(2**31)),
        ("knowledge_get", "path", "knowledgeId", str(2**63)),
        ("knowledge_append", "path", "knowledgeId", str(2**63)),
        ("knowledge_publish", "path", "version", str(2**31)),
        ("evaluations_list", "query", "to", "0"),
        ("evaluations_list", "query", "from", "1700000000"),
        ("users_list", "query", "sort", "lastName,sideways"),
        ("users_list", "query", "sort", ""),
        ("media_radio_traffic_upload", "query", "recordingStartedAt", "1700000000"),
        ("media_radio_traffic_upload", "query", "channel", "TAC\u00001"),
        ("knowledge_list", "query", "provider", "NENA\u0000"),
    ],
)
@pytest.mark.spec("endpoints-path-ids-are-integers", "errors-error-info")
def test_parameters_beyond_their_bounds_or_not_strictly_parsed_are_400(
    routes: WriteRoutes, function: str, where: str, name: str, value: str
) -> None:
    # Given a parameter out of its format's bounds, a number for a date, or a control char
    event = routes.event(function)
    if where == "path":
        with_path(event, {**(event.get("pathParameters") or {}), name: value})
    else:
        query = {**(event.get("queryStringParameters") or {}), name: value}
        event["queryStringParameters"] = query
        event["multiValueQueryStringParameters"] = {key: [val] for key, val in query.items()}
    # When it is sent, Then 400 naming the parameter, nothing written
    status, error = routes.refused(function, event)
    assert status == 400
    assert f"'{name}'" in error["info"]


def test_an_srt_cue_time_beyond_any_duration_is_400(routes: WriteRoutes) -> None:
    # Given an SRT cue whose time overflows (99999999999 hours)
    event = routes.event("media_radio_traffic_upload")
    event["body"] = "1\n99999999999:00:00,000 --> 99999999999:00:01,000\nDISPATCH: copy\n"
    # When it is uploaded, Then 400 naming the cue, nothing written
    status, error = routes.refused("media_radio_traffic_upload", event)
    assert status == 400
    assert "cue 1" in error["info"]


def test_a_method_the_resource_does_not_have_is_405_with_allow(routes: WriteRoutes) -> None:
    # Given the knowledge collection (GET list, POST create) called with TRACE
    event = routes.event("knowledge_list")
    event["httpMethod"] = "TRACE"
    # When it reaches the function, Then 405 ErrorInfo naming the methods it has
    response = routes.raw_call("knowledge_list", event)
    assert response["statusCode"] == 405
    assert response["headers"]["Allow"] == "GET, POST"
    assert json.loads(response["body"])["reason"] == "METHOD_NOT_ALLOWED"


def test_radio_traffic_content_that_is_not_base64_ascii_is_400(routes: WriteRoutes) -> None:
    # Given the JSON form with contentBase64 holding characters outside ASCII (found by
    # schemathesis: base64 decoding raised ValueError, not binascii.Error, and answered 500)
    event = routes.event("media_radio_traffic_upload_json")
    event["body"] = json.dumps(
        {
            "eventId": 1,
            "channel": "TAC 1",
            "contentBase64": "\u0114E\u0128",
            "recordingStartedAt": "2026-11-23T02:32:15Z",
        }
    )
    # When it is uploaded, Then 400 naming the field, nothing written
    status, error = routes.refused("media_radio_traffic_upload_json", event)
    assert status == 400
    assert "'contentBase64'" in error["info"]


@pytest.mark.parametrize(
    ("bad_row", "reason"),
    [(b"2026-2,P\x00\n", "U+0000"), (b"2026-2,P\xff\n", "Not valid UTF-8")],
)
def test_an_upload_row_not_utf8_or_with_a_control_character_is_rejected_alone(
    routes: WriteRoutes, bad_row: bytes, reason: str
) -> None:
    # Given an incident file whose second row holds a NUL, or a byte that is not UTF-8
    event = routes.event("incident_upload")
    with_content_type(event, "text/csv")
    with_body_bytes(event, b"number,priority\n2026-1,1\n" + bad_row)
    # When it is uploaded
    status, report = routes.call("incident_upload", event)
    # Then that row alone is rejected, naming its line and why, and the other applied (the
    # upload's documented rule: whole rows, the same in the synchronous and the file paths)
    assert status == 200, report
    assert report["created"] == 1
    assert [(r["line"], reason in r["reason"]) for r in report["rejections"]] == [(3, True)]
