"""The incident upload's file limit is enforced by S3 itself, through a presigned POST policy.

The ticket of POST /incidents/uploads carries an S3 form (`uploadUrl`, `uploadFields`) whose
policy, signed under the create function's role, holds `content-length-range` [1, the file
limit]. The embedded AWS judges the form as S3 does (local.s3_post_policy): a file over the
limit, a tampered policy or key, an expired policy or a signer without s3:PutObject is
refused, with S3's XML error, and nothing is stored. Real HTTP on loopback to the in-process
moto server, IAM enforced. Given / When / Then in each test.
"""

import base64
import json
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
import httpx
import pytest
from botocore.config import Config

from local import iam, iam_enforcement
from psap.config import incident_upload_bucket
from psap.incidents.upload import service
from psap.limits import INCIDENT_UPLOAD_FILE_MAX_BYTES
from psap.storage.s3 import s3, stored_object
from tests.conftest import TEMPLATE
from tests.support.harness import answer_of, with_caller

TENANT = 7
SMALL_LIMIT = 2048  # the file limit for these tests: the real one is 100 MB


Ticket = Callable[[], dict[str, Any]]


@pytest.fixture
def new_ticket(
    aws_server: str,
    monkeypatch: pytest.MonkeyPatch,
    import_function: Callable[[str], ModuleType],
    load_event: Callable[[str], dict[str, Any]],
    lambda_context: Any,
) -> Iterator[Ticket]:
    """Creates an upload through the create function, under its role, as a client would."""
    for name, value in TEMPLATE.functions["IncidentUploadCreateFunction"].environment.items():
        monkeypatch.setenv(name, value)
    function = import_function("incident_upload_create")

    def create() -> dict[str, Any]:
        event = load_event("incident_upload_create")
        event["body"] = json.dumps({"format": "jsonl"})
        with_caller(event, TENANT, "MANAGE_EVENTS")
        status, ticket, _ = answer_of(function.handler(event, lambda_context))
        assert status == 201, ticket
        return dict(ticket)

    yield create


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(service, "INCIDENT_UPLOAD_FILE_MAX_BYTES", SMALL_LIMIT)
    return SMALL_LIMIT


def _post(
    url: str, fields: dict[str, str], body: bytes, filename: str = "incidents.jsonl"
) -> httpx.Response:
    """What a browser or `curl -F` sends: the fields, then the file, as multipart/form-data."""
    return httpx.post(url, data=fields, files={"file": (filename, body)}, timeout=30)


def _error_code(answer: httpx.Response) -> str:
    """S3's XML error code (our own answer: a regular expression is enough to read it)."""
    found = re.search(r"<Code>([^<]*)</Code>", answer.text)
    return found.group(1) if found else ""


def _object_key(ticket: dict[str, Any]) -> str:
    return f"tenants/{TENANT}/incident-uploads/{ticket['uploadId']}.jsonl"


def _stored(ticket: dict[str, Any]) -> bytes | None:
    if stored_object(incident_upload_bucket(), _object_key(ticket)) is None:
        return None
    return s3().get_object(Bucket=incident_upload_bucket(), Key=_object_key(ticket))["Body"].read()


def _policy(fields: dict[str, str]) -> dict[str, Any]:
    return dict(json.loads(base64.b64decode(fields["policy"])))


def _rows(size: int) -> bytes:
    """A JSON Lines file of exactly `size` bytes."""
    line = b'{"number": "F-1", "priority": "1", "location": "'
    return line + b"x" * (size - len(line) - 3) + b'"}\n'


# ---------------------------------------------------------------------------- the ticket


def test_the_ticket_is_a_sigv4_form_whose_policy_bounds_the_file_at_the_limit(
    new_ticket: Ticket,
) -> None:
    # Given a new upload
    ticket = new_ticket()
    fields = ticket["uploadFields"]
    # Then the form is SigV4 in us-east-1 (S3 refuses SigV2 for buckets since June 2020)
    assert fields["x-amz-algorithm"] == "AWS4-HMAC-SHA256"
    assert "/us-east-1/s3/aws4_request" in fields["x-amz-credential"]
    assert "AWSAccessKeyId" not in fields and "signature" not in fields
    # And its policy names the object's key and the documented size range
    conditions = _policy(fields)["conditions"]
    assert ["content-length-range", 1, INCIDENT_UPLOAD_FILE_MAX_BYTES] in conditions
    assert {"key": _object_key(ticket)} in conditions
    assert ticket["maxFileBytes"] == INCIDENT_UPLOAD_FILE_MAX_BYTES
    assert ticket["uploadUrl"].split("?")[0] == ticket["uploadUrl"]  # no credential in the URL


# ---------------------------------------------------------------------------- the size, at S3


def test_a_file_at_the_limit_is_stored_byte_for_byte(new_ticket: Ticket, small_limit: int) -> None:
    # Given a ticket and a file of exactly the limit
    ticket = new_ticket()
    body = _rows(small_limit)
    # When the form is posted with no credentials of the client's own
    answer = _post(ticket["uploadUrl"], ticket["uploadFields"], body)
    # Then S3 stores exactly the file (204, S3's default answer to a form POST)
    assert answer.status_code == 204, answer.text
    assert _stored(ticket) == body


def test_a_file_over_the_limit_is_refused_by_s3_and_nothing_is_stored(
    new_ticket: Ticket, small_limit: int
) -> None:
    # Given a ticket and a file one byte over the limit
    ticket = new_ticket()
    # When the form is posted
    answer = _post(ticket["uploadUrl"], ticket["uploadFields"], _rows(small_limit + 1))
    # Then S3 refuses it with its own error, and no object exists
    assert answer.status_code == 400
    assert _error_code(answer) == "EntityTooLarge"
    assert _stored(ticket) is None


def test_an_empty_file_is_refused_by_s3(new_ticket: Ticket) -> None:
    ticket = new_ticket()
    answer = _post(ticket["uploadUrl"], ticket["uploadFields"], b"")
    assert (answer.status_code, _error_code(answer)) == (400, "EntityTooSmall")
    assert _stored(ticket) is None


# ---------------------------------------------------------------------------- the policy, at S3


def test_a_policy_with_its_limit_raised_is_refused(new_ticket: Ticket, small_limit: int) -> None:
    # Given a ticket whose policy a client rewrites to allow a larger file
    ticket = new_ticket()
    policy = _policy(ticket["uploadFields"])
    policy["conditions"] = [
        ["content-length-range", 1, 5 * 1024**3]
        if isinstance(c, list) and c[0] == "content-length-range"
        else c
        for c in policy["conditions"]
    ]
    forged = {
        **ticket["uploadFields"],
        "policy": base64.b64encode(json.dumps(policy).encode()).decode(),
    }
    # When the large file is posted with the rewritten policy
    answer = _post(ticket["uploadUrl"], forged, _rows(small_limit + 100))
    # Then the signature no longer matches: 403, nothing stored
    assert (answer.status_code, _error_code(answer)) == (403, "SignatureDoesNotMatch")
    assert _stored(ticket) is None


def test_a_form_for_another_key_or_with_an_extra_field_is_refused(new_ticket: Ticket) -> None:
    # Given a ticket, and the same form aimed at another tenant's key, or with a field the
    # policy does not name
    ticket = new_ticket()
    fields = ticket["uploadFields"]
    other_key = {**fields, "key": "tenants/8/incident-uploads/upl-x.jsonl"}
    extra = {**fields, "x-amz-meta-origin": "somewhere"}
    # When each is posted
    answers = [_post(ticket["uploadUrl"], form, _rows(100)) for form in (other_key, extra)]
    # Then S3 refuses both as against the policy, and nothing is stored anywhere
    assert [(a.status_code, _error_code(a)) for a in answers] == [(403, "AccessDenied")] * 2
    assert "Policy Condition failed" in answers[0].text
    assert "Extra input fields: x-amz-meta-origin" in answers[1].text
    assert _stored(ticket) is None
    assert stored_object(incident_upload_bucket(), other_key["key"]) is None


def _signed_form(aws_server: str, function_id: str, key: str, expires_in: int) -> dict[str, Any]:
    with iam_enforcement.paused():
        credentials = iam.create_role(iam.default_function_roles()[function_id], aws_server)
    client = boto3.client(
        "s3",
        endpoint_url=aws_server,
        region_name="us-east-1",
        aws_access_key_id=credentials.access_key_id,
        aws_secret_access_key=credentials.secret_access_key,
        aws_session_token=credentials.session_token,
        config=Config(signature_version="s3v4"),
    )
    return dict(
        client.generate_presigned_post(
            incident_upload_bucket(),
            key,
            Conditions=[["content-length-range", 1, 1000]],
            ExpiresIn=expires_in,
        )
    )


def test_an_expired_policy_is_refused(aws_server: str) -> None:
    # Given a form signed by the create function's role that expired a minute ago
    key = "tenants/7/incident-uploads/upl-expired.jsonl"
    form = _signed_form(aws_server, "IncidentUploadCreateFunction", key, -60)
    # When a file is posted with it
    answer = _post(form["url"], form["fields"], _rows(100))
    # Then S3 refuses it
    assert (answer.status_code, _error_code(answer)) == (403, "AccessDenied")
    assert "Policy expired" in answer.text
    assert stored_object(incident_upload_bucket(), key) is None


def test_a_form_grants_no_more_than_its_signers_role(aws_server: str) -> None:
    # Given the same form signed by the create function's role and by the partner
    # authorizer's, which has no S3 access
    key = "tenants/7/incident-uploads/upl-signer.jsonl"
    allowed = _signed_form(aws_server, "IncidentUploadCreateFunction", key, 60)
    refused = _signed_form(aws_server, "PartnerAuthorizerFunction", key, 60)
    # When a file is posted with each
    stranger = _post(refused["url"], refused["fields"], _rows(100))
    assert stored_object(incident_upload_bucket(), key) is None
    owner = _post(allowed["url"], allowed["fields"], _rows(100))
    # Then only the form of a signer that may put the object stores it
    assert (stranger.status_code, _error_code(stranger)) == (403, "AccessDenied")
    assert owner.status_code == 204, owner.text
    assert stored_object(incident_upload_bucket(), key) is not None


def test_a_post_without_a_policy_is_anonymous_and_refused(new_ticket: Ticket) -> None:
    ticket = new_ticket()
    answer = _post(ticket["uploadUrl"], {"key": _object_key(ticket)}, _rows(100))
    assert (answer.status_code, _error_code(answer)) == (403, "AccessDenied")
    assert _stored(ticket) is None


# ---------------------------------------------------------------------- the documented command


@pytest.mark.skipif(shutil.which("curl") is None, reason="the documented command uses curl")
def test_the_documented_curl_form_stores_the_file(new_ticket: Ticket, tmp_path: Path) -> None:
    # Given a ticket and a file with bytes a form encoder could mangle
    ticket = new_ticket()
    body = b'{"number": "C-1", "notes": ["a=1&b=2%20c+d", "\\u00e9"]}\r\n' * 20
    upload = tmp_path / "incidents.jsonl"
    upload.write_bytes(body)
    # When the README's command sends it: each field with --form-string, the file last
    command = ["curl", "-sS", "--fail-with-body"]
    for name, value in ticket["uploadFields"].items():
        command += ["--form-string", f"{name}={value}"]
    command += ["-F", f"file=@{upload}", ticket["uploadUrl"]]
    subprocess.run(command, check=True, capture_output=True, timeout=30)
    # Then the object is the file, byte for byte
    assert _stored(ticket) == body
