"""The S3 client for objects too large for a DynamoDB item (botocore directly, not boto3)."""

from functools import cache
from typing import TYPE_CHECKING, cast

import botocore.session
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from psap.errors import StoreUnavailable

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 4},
    connect_timeout=2,
    read_timeout=5,
)


@cache
def s3() -> "S3Client":
    """One client per warm container, created on first use (after a test's moto is up)."""
    client = botocore.session.get_session().create_client("s3", config=_CONFIG)
    return cast("S3Client", client)


def put_object(bucket: str, key: str, body: bytes, content_type: str) -> None:
    try:
        s3().put_object(Bucket=bucket, Key=key, Body=body, ContentType=content_type)
    except (ClientError, BotoCoreError) as error:
        raise StoreUnavailable(f"S3 put {key}: {error}") from error


def get_object(bucket: str, key: str) -> bytes:
    try:
        answer = s3().get_object(Bucket=bucket, Key=key)
        return answer["Body"].read()
    except (ClientError, BotoCoreError) as error:
        raise StoreUnavailable(f"S3 get {key}: {error}") from error
