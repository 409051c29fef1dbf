"""The embedded AWS stores a presigned PUT's body byte for byte, as S3 does.

For a presigned PUT sent as `curl -X PUT --data-binary @file "$URL"`, curl sends
`Content-Type: application/x-www-form-urlencoded`, which S3 stores as the object's
content type and otherwise ignores. moto's server parsed such a body as an HTML form and
stored 0 bytes. Checked with the public clients users run (curl, boto3 presigning in both
signature versions), not with our own code.
"""

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from botocore.config import Config

from local.aws import EmbeddedAws

BUCKET = "presigned-put-check"
# Bytes a form parser would mangle: separators, escapes, newlines, invalid UTF-8, a NUL.
AWKWARD_BODY = b'{"number": "2026-1", "notes": "a=1&b=2%20c+d"}\n\xff\xfe\x00 tail\r\n' * 50


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with EmbeddedAws() as aws:
        yield aws.endpoint_url


def _client(endpoint: str, signature_version: str | None) -> object:
    config = Config(signature_version=signature_version) if signature_version else None
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=config,
    )


@pytest.mark.skipif(shutil.which("curl") is None, reason="the documented command uses curl")
@pytest.mark.parametrize("signature_version", [None, "s3v4"], ids=["default", "sigv4"])
@pytest.mark.parametrize("content_type", [None, "application/x-ndjson"], ids=["curl", "typed"])
def test_presigned_put_with_curl_stores_exactly_the_file(
    endpoint: str,
    tmp_path: Path,
    signature_version: str | None,
    content_type: str | None,
) -> None:
    # Given a presigned PUT URL and a file
    s3 = _client(endpoint, signature_version)
    s3.create_bucket(Bucket=BUCKET)  # type: ignore[attr-defined]
    key = f"upload-{signature_version}-{content_type}"
    url = s3.generate_presigned_url(  # type: ignore[attr-defined]
        "put_object", Params={"Bucket": BUCKET, "Key": key}, ExpiresIn=900
    )
    upload = tmp_path / "big.jsonl"
    upload.write_bytes(AWKWARD_BODY)
    # When curl sends it
    command = ["curl", "-sS", "--fail-with-body", "-X", "PUT", "--data-binary", f"@{upload}"]
    if content_type:
        command += ["-H", f"Content-Type: {content_type}"]
    subprocess.run([*command, url], check=True, capture_output=True, timeout=30)
    # Then the object is the file, byte for byte, with the content type that was sent
    stored = s3.get_object(Bucket=BUCKET, Key=key)  # type: ignore[attr-defined]
    assert stored["Body"].read() == AWKWARD_BODY
    assert stored["ContentType"] == (content_type or "application/x-www-form-urlencoded")
