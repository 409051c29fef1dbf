"""POST /cad/v1/incidents through its Lambda handler on moto (spec: "CAD to the service";
DESIGN section 5). Names follow the rule each test checks."""

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from psap import clock
from psap.cad import store
from psap.cad.store import SubmissionKey, SubmissionState
from psap.limits import CAD_BODY_LIMIT
from tests.support.cad import (
    OTHER_TENANT,
    TENANT,
    CadFunctions,
    drain,
    eido_submission,
    flat_submission,
)


@pytest.mark.spec("cad-auth-rule-1")
def test_a_valid_submission_is_stored_queued_and_answered_202_with_a_receipt(
    cad: CadFunctions,
) -> None:
    # Given a flat incident in a CloudEvents envelope
    submission = flat_submission()
    # When the CAD posts it
    status, body = cad.submit(submission)
    # Then it is 202 ACCEPTED with a receipt id, the raw body is stored and one message queued
    assert status == 202
    assert set(body) == {"receiptId", "status"}
    assert body["status"] == "ACCEPTED"
    assert body["receiptId"].startswith("rcpt-")
    record = store.get(SubmissionKey(TENANT, "urn:cad:riverside", "A-1"))
    assert record is not None
    assert record.state is SubmissionState.ACCEPTED
    assert json.loads(record.raw) == submission
    assert drain("CadIntakeQueue") == [
        {
            "tenantId": TENANT,
            "source": "urn:cad:riverside",
            "eventId": "A-1",
            "receiptId": body["receiptId"],
        }
    ]


def test_an_eido_submission_is_accepted(cad: CadFunctions) -> None:
    status, body = cad.submit(eido_submission())
    assert (status, body["status"]) == (202, "ACCEPTED")


def test_a_replay_returns_the_same_202_body_and_queues_nothing_more(cad: CadFunctions) -> None:
    first = cad.submit(flat_submission())
    drain("CadIntakeQueue")
    again = cad.submit(flat_submission())
    assert again == first
    assert drain("CadIntakeQueue") == []


def test_a_replay_with_other_key_order_and_whitespace_is_the_same_submission(
    cad: CadFunctions,
) -> None:
    submission = flat_submission()
    first = cad.submit(json.dumps(submission))
    reordered = json.dumps(dict(reversed(list(submission.items()))), indent=4)
    assert cad.submit(reordered) == first


def test_the_same_id_with_a_different_body_is_422(cad: CadFunctions) -> None:
    cad.submit(flat_submission())
    status, body = cad.submit(flat_submission(priority="3"))
    assert status == 422
    assert body["reason"] == "IDEMPOTENCY_KEY_REUSED"
    assert set(body) == {"info", "reason"}


def test_a_concurrent_duplicate_still_in_flight_is_409(cad: CadFunctions) -> None:
    # Given a submission whose first request is still storing it (IN_FLIGHT)
    submission = flat_submission()
    key = SubmissionKey(TENANT, "urn:cad:riverside", "A-1")
    from psap.cad.intake import canonical_hash

    raw = json.dumps(submission).encode()
    assert store.begin(key, "rcpt-first", canonical_hash(submission), raw=raw, now=clock.utc_now())
    # When the duplicate arrives
    status, body = cad.submit(submission)
    # Then it is 409 and nothing is queued for it
    assert status == 409
    assert body["reason"] == "REQUEST_IN_FLIGHT"
    assert drain("CadIntakeQueue") == []


def test_concurrent_duplicates_make_one_receipt_and_one_message(cad: CadFunctions) -> None:
    submission = flat_submission()
    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = list(pool.map(lambda _: cad.submit(submission), range(4)))
    accepted = [body["receiptId"] for status, body in answers if status == 202]
    assert {status for status, _ in answers} <= {202, 409}
    assert len(set(accepted)) == 1
    assert len(drain("CadIntakeQueue")) == 1


def test_an_in_flight_record_left_by_a_dead_request_is_taken_over(
    cad: CadFunctions, monkeypatch: pytest.MonkeyPatch
) -> None:
    submission = flat_submission()
    key = SubmissionKey(TENANT, "urn:cad:riverside", "A-1")
    from psap.cad.intake import canonical_hash

    long_ago = clock.utc_now().replace(year=2025)
    raw = json.dumps(submission).encode()
    store.begin(key, "rcpt-dead", canonical_hash(submission), raw=raw, now=long_ago)
    status, body = cad.submit(submission)
    assert status == 202
    assert body["receiptId"] != "rcpt-dead"


@pytest.mark.spec("cad-auth-rule-2")
def test_idempotency_is_per_tenant(cad: CadFunctions) -> None:
    mine = cad.submit(flat_submission(tenant=None))
    theirs = cad.submit(flat_submission(tenant=None, priority="5"), tenant=OTHER_TENANT)
    assert mine[0] == theirs[0] == 202
    assert mine[1]["receiptId"] != theirs[1]["receiptId"]


@pytest.mark.parametrize("spelling", ["tenantId", "tenantid"])
@pytest.mark.spec("cad-auth-rule-2", "errors-error-info")
def test_tenant_id_of_another_tenant_is_403_error_info(cad: CadFunctions, spelling: str) -> None:
    submission = flat_submission(tenant=None)
    submission[spelling] = OTHER_TENANT
    status, body = cad.submit(submission)
    assert status == 403
    assert body["reason"] == "FORBIDDEN"
    assert set(body) == {"info", "reason"}
    assert drain("CadIntakeQueue") == []


@pytest.mark.spec("cad-auth-rule-2")
def test_tenant_id_is_a_cross_check_only_absent_is_accepted(cad: CadFunctions) -> None:
    status, _ = cad.submit(flat_submission(tenant=None))
    assert status == 202


@pytest.mark.spec("cad-auth-rule-2")
def test_tenant_id_as_a_string_of_the_right_tenant_is_accepted(cad: CadFunctions) -> None:
    submission = flat_submission(tenant=None)
    submission["tenantid"] = str(TENANT)
    assert cad.submit(submission)[0] == 202


@pytest.mark.spec("auth-credential-per-direction", "cad-auth-rule-1", "errors-401-body")
def test_a_partner_credential_on_the_cad_path_is_401(cad: CadFunctions) -> None:
    status, body = cad.submit(flat_submission(), kind="partner")
    assert status == 401
    assert body == {"info": "Authentication required", "reason": "UNAUTHENTICATED"}


@pytest.mark.spec("cad-auth-rule-1")
def test_a_request_without_authorizer_context_is_401(cad: CadFunctions) -> None:
    event = cad.load_event("cad_intake")
    event["requestContext"].pop("authorizer")
    answer = cad.intake(event, cad.context)
    assert answer["statusCode"] == 401


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"type": "incident.deleted"}, "$.type"),
        ({"time": "2026-11-23T02:32:15"}, "$.time"),
        ({"specversion": "0.3"}, "$.specversion"),
        ({"id": ""}, "$.id"),
        ({"data": {"number": "1", "notes": [{"noteAt": "yesterday"}]}}, "$.data.notes[0].noteAt"),
        ({"data": {"numbr": "1"}}, "$.data.number"),
        ({"data": {"incidentComponent": [{"x": 1}]}}, "$.data.incidentComponent[0]"),
        ({"tenantId": "seven"}, "$.tenantId"),
        ({"sequence": -1}, "$.sequence"),
    ],
)
@pytest.mark.spec("errors-error-info")
def test_invalid_submissions_are_400_error_info_with_the_json_path(
    cad: CadFunctions, change: dict[str, Any], path: str
) -> None:
    status, body = cad.submit({**flat_submission(), **change})
    assert status == 400
    assert set(body) == {"info", "reason"}
    assert f"'{path}" in body["info"]
    assert drain("CadIntakeQueue") == []


@pytest.mark.parametrize(
    ("raw", "reason"),
    [("{not json", "INVALID_JSON"), ("[1, 2]", "INVALID_INPUT"), ("", "INVALID_INPUT")],
)
def test_a_body_that_is_not_a_json_object_is_400(cad: CadFunctions, raw: str, reason: str) -> None:
    status, body = cad.submit(raw)
    assert status == 400
    assert body["reason"] == reason


def test_a_body_over_256_kb_is_413(cad: CadFunctions) -> None:
    submission = flat_submission(additionalContext="x" * 3000)
    submission["padding"] = "x" * CAD_BODY_LIMIT
    status, body = cad.submit(submission)
    assert status == 413
    assert body["reason"] == "PAYLOAD_TOO_LARGE"


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/xml", None, "application/json; charset=latin-1"]
)
def test_a_wrong_content_type_is_415(cad: CadFunctions, content_type: str | None) -> None:
    status, body = cad.submit(flat_submission(), content_type=content_type)
    assert status == 415
    assert body["reason"] == "UNSUPPORTED_MEDIA_TYPE"


@pytest.mark.parametrize(
    "content_type", ["application/cloudevents+json", "application/json; charset=utf-8"]
)
def test_structured_cloudevents_media_types_are_accepted(
    cad: CadFunctions, content_type: str
) -> None:
    assert cad.submit(flat_submission(), content_type=content_type)[0] == 202


def test_a_base64_encoded_body_is_read_as_sent(cad: CadFunctions) -> None:
    status, _ = cad.submit(flat_submission(), base64_encoded=True)
    assert status == 202


def test_when_the_queue_is_unreachable_the_answer_is_503_and_nothing_is_kept(
    cad: CadFunctions, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAD_INTAKE_QUEUE_URL", "https://sqs.us-east-1.amazonaws.com/1/missing")
    status, body = cad.submit(flat_submission())
    assert status == 503
    assert body["reason"] == "SERVICE_UNAVAILABLE"
    assert store.get(SubmissionKey(TENANT, "urn:cad:riverside", "A-1")) is None
