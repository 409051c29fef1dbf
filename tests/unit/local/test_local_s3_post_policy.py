"""The embedded S3's judgement of a form POST, condition by condition (no network).

The forms are signed by botocore's own presigner (what boto3's generate_presigned_post
sends), so the signature check is held to the public client, not to our own signing.
The HTTP path, IAM and the incident-upload ticket: tests/integration/test_incident_upload_form.py.
"""

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.config import Config

from local.s3_post_policy import PostForm, PostRefusal, SignedBy, check_form

SECRET = "local-test-secret"
BUCKET = "uploads"
KEY = "tenants/1/a.jsonl"


def _signed(conditions: list[Any], fields: dict[str, str] | None = None) -> dict[str, str]:
    client = boto3.client(
        "s3",
        region_name="us-east-1",
        aws_access_key_id="AKIDLOCALTEST",
        aws_secret_access_key=SECRET,
        config=Config(signature_version="s3v4"),
    )
    answer = client.generate_presigned_post(
        BUCKET, KEY, Fields=fields, Conditions=conditions, ExpiresIn=60
    )
    return {name: str(value) for name, value in answer["fields"].items()}


def _secret_of(signer: SignedBy) -> str:
    assert signer.access_key_id == "AKIDLOCALTEST"
    return SECRET


def _judge(fields: dict[str, str], size: int | None = 10, after: int = 0) -> PostRefusal | None:
    form = PostForm(bucket=BUCKET, fields=fields, file_size=size)
    moment = datetime.now(UTC) + timedelta(seconds=after)
    try:
        check_form(form, _secret_of, now=lambda: moment)
    except PostRefusal as refusal:
        return refusal
    return None


def test_a_form_as_signed_is_accepted_within_its_range_and_until_it_expires() -> None:
    fields = _signed([["content-length-range", 1, 10]])
    assert _judge(fields, size=10) is None
    assert _judge(fields, size=1) is None
    assert _judge(fields, size=11) == PostRefusal(
        "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size", 400
    )
    small = _judge(fields, size=0)
    assert small is not None and (small.code, small.status) == ("EntityTooSmall", 400)
    expired = _judge(fields, after=61)
    assert expired is not None and (expired.code, expired.status) == ("AccessDenied", 403)


def test_field_names_are_case_insensitive_and_values_are_not() -> None:
    # Given a policy that fixes the content type and a prefix of the success status
    fields = _signed(
        [{"Content-Type": "text/csv"}, ["starts-with", "$success_action_status", "2"]],
        {"Content-Type": "text/csv", "success_action_status": "201"},
    )
    renamed = {
        ("CONTENT-TYPE" if name == "Content-Type" else name): v for name, v in fields.items()
    }
    # Then a field's name may change case, its value may not
    assert _judge(renamed) is None
    refused = _judge({**fields, "Content-Type": "TEXT/CSV"})
    assert refused is not None and refused.code == "AccessDenied"
    assert "Policy Condition failed" in refused.message
    refused = _judge({**fields, "success_action_status": "303"})
    assert refused is not None and "starts-with" in refused.message


def test_extra_fields_are_refused_unless_they_are_x_ignore() -> None:
    fields = _signed([])
    assert _judge({**fields, "x-ignore-note": "mine"}) is None
    refused = _judge({**fields, "acl": "public-read"})
    assert refused is not None and refused.message.endswith("Extra input fields: acl")


@pytest.mark.parametrize(
    ("change", "code", "status"),
    [
        ({"x-amz-signature": "0" * 64}, "SignatureDoesNotMatch", 403),
        ({"x-amz-signature": ""}, "InvalidArgument", 400),
        ({"key": ""}, "InvalidArgument", 400),
        ({"AWSAccessKeyId": "AKIDLOCALTEST", "signature": "x"}, "InvalidRequest", 400),
        ({"x-amz-algorithm": "AWS4-HMAC-SHA1"}, "InvalidArgument", 400),
    ],
    ids=["forged", "unsigned", "no-key", "sigv2", "algorithm"],
)
def test_a_malformed_or_forged_form_is_refused(
    change: dict[str, str], code: str, status: int
) -> None:
    refusal = _judge({**_signed([]), **change})
    assert refusal is not None and (refusal.code, refusal.status) == (code, status)


def test_a_form_without_a_file_or_a_policy_is_refused() -> None:
    fields = _signed([])
    no_file = _judge(fields, size=None)
    assert no_file is not None and no_file.code == "InvalidArgument"
    anonymous = _judge({"key": KEY}, size=5)
    assert anonymous == PostRefusal("AccessDenied", "Access Denied", 403)
