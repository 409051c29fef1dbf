"""The S3 client for objects too large for a DynamoDB item (botocore directly, not boto3)."""

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, cast

import botocore.session
from botocore.config import Config

from psap.config import client_options
from psap.errors import StoreUnavailable
from psap.storage.aws_errors import ObjectMissing, VersionChanged, translated

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 4},
    connect_timeout=2,
    read_timeout=5,
    # Without it, this botocore presigns SigV2 URLs in us-east-1, which S3 refuses for every
    # bucket created since June 2020: uploads and export downloads would fail on AWS.
    signature_version="s3v4",
)


@cache
def s3() -> "S3Client":
    """One client per warm container, created on first use (after a test's moto is up)."""
    client = botocore.session.get_session().create_client("s3", config=_CONFIG, **client_options())
    return cast("S3Client", client)


def put_object(bucket: str, key: str, body: bytes, *, content_type: str) -> None:
    with translated(f"S3 put {key}"):
        s3().put_object(Bucket=bucket, Key=key, Body=body, ContentType=content_type)


def get_object(bucket: str, key: str) -> bytes:
    """The object's bytes; ObjectMissing (a StoreUnavailable) when there is none."""
    with translated(f"S3 get {key}"):
        answer = s3().get_object(Bucket=bucket, Key=key)
        return answer["Body"].read()


def get_object_if_present(bucket: str, key: str) -> bytes | None:
    """The object's bytes, or None when there is no such object."""
    try:
        return get_object(bucket, key)
    except ObjectMissing:
        return None


@dataclass(frozen=True)
class PresignedPost:
    """An S3 browser-form upload: POST `fields`, then the file as the field `file`, to `url`."""

    url: str
    fields: dict[str, str]


def presigned_post(
    bucket: str, key: str, *, max_bytes: int, expires_in_seconds: int, min_bytes: int = 1
) -> PresignedPost:
    """A form a client uploads one object with, without credentials of its own, until it
    expires. S3 itself refuses a file outside [min_bytes, max_bytes] (the policy's
    content-length-range), which a presigned PUT URL cannot say: it takes up to 5 GB."""
    with translated(f"S3 presign {key}"):
        answer = s3().generate_presigned_post(
            Bucket=bucket,
            Key=key,
            Conditions=[["content-length-range", min_bytes, max_bytes]],
            ExpiresIn=expires_in_seconds,
        )
    return PresignedPost(url=answer["url"], fields={k: str(v) for k, v in answer["fields"].items()})


@dataclass(frozen=True)
class StoredObject:
    size: int
    etag: str  # changes whenever the object is written again


# The object is no longer the version the caller pinned (If-Match failed).
ObjectChanged = VersionChanged


def stored_object(bucket: str, key: str) -> StoredObject | None:
    """The object's size and ETag, or None when there is no such object."""
    try:
        with translated(f"S3 head {key}"):
            answer = s3().head_object(Bucket=bucket, Key=key)
    except ObjectMissing:
        return None
    return StoredObject(size=int(answer["ContentLength"]), etag=str(answer["ETag"]))


def iter_object_lines(
    bucket: str, key: str, if_match: str | None = None, *, chunk_bytes: int = 65_536
) -> Iterator[bytes]:
    """The object's lines (each with its b"\\n"), streamed: never the whole object in memory.
    Only b"\\n" ends a line, so a b"\\r\\n" split across two chunks still counts once. With
    `if_match` (an ETag), another version of the object raises ObjectChanged."""
    with translated(f"S3 get {key}"):
        if if_match:
            body = s3().get_object(Bucket=bucket, Key=key, IfMatch=if_match)["Body"]
        else:
            body = s3().get_object(Bucket=bucket, Key=key)["Body"]
        pending = b""
        for chunk in body.iter_chunks(chunk_bytes):
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            for line in lines:
                yield line + b"\n"
        if pending:
            yield pending


def presigned_get_url(bucket: str, key: str, expires_seconds: int, *, filename: str) -> str:
    """A short-lived download link; signing is local (no call to S3)."""
    return s3().generate_presigned_url(
        "get_object",
        Params={
            "Bucket": bucket,
            "Key": key,
            "ResponseContentDisposition": f'attachment; filename="{filename}"',
        },
        ExpiresIn=expires_seconds,
    )


class MultipartWriter:
    """Writes one S3 object in parts as text arrives, holding at most one part in memory.

    S3 parts are at least 5 MiB except the last; a file smaller than one part is one part.
    Leaving the `with` block by an exception aborts the upload, so no half file appears.
    """

    PART_BYTES = 8 * 1024 * 1024

    def __init__(self, bucket: str, key: str, content_type: str) -> None:
        self.bucket = bucket
        self.key = key
        self.content_type = content_type
        self.size = 0
        self._buffer = bytearray()
        self._parts: list[dict[str, object]] = []
        self._upload_id = ""

    def __enter__(self) -> "MultipartWriter":
        with translated(f"S3 upload {self.key}"):
            answer = s3().create_multipart_upload(
                Bucket=self.bucket, Key=self.key, ContentType=self.content_type
            )
        self._upload_id = answer["UploadId"]
        return self

    def write(self, text: str) -> None:
        data = text.encode("utf-8")
        self._buffer.extend(data)
        self.size += len(data)
        if len(self._buffer) >= self.PART_BYTES:
            self._flush()

    def _flush(self) -> None:
        number = len(self._parts) + 1
        with translated(f"S3 upload {self.key} part {number}"):
            answer = s3().upload_part(
                Bucket=self.bucket,
                Key=self.key,
                UploadId=self._upload_id,
                PartNumber=number,
                Body=bytes(self._buffer),
            )
        self._parts.append({"ETag": answer["ETag"], "PartNumber": number})
        self._buffer.clear()

    def _abort(self) -> None:
        # Best effort: the error that made the write stop is the one worth raising.
        with contextlib.suppress(StoreUnavailable), translated(f"S3 abort {self.key}"):
            s3().abort_multipart_upload(Bucket=self.bucket, Key=self.key, UploadId=self._upload_id)

    def __exit__(self, kind: object, raised: object, traceback: object) -> None:
        if kind is not None:
            self._abort()
            return
        if self._buffer or not self._parts:
            self._flush()
        try:
            with translated(f"S3 upload {self.key}"):
                s3().complete_multipart_upload(
                    Bucket=self.bucket,
                    Key=self.key,
                    UploadId=self._upload_id,
                    MultipartUpload={"Parts": self._parts},  # type: ignore[typeddict-item]
                )
        except StoreUnavailable:
            self._abort()
            raise


@dataclass(frozen=True)
class UploadedPart:
    number: int
    etag: str


class ResumableUpload:
    """A multipart upload that outlives the process: its id and parts are the caller's to
    keep (a job's checkpoint), so the next run of a job goes on with the same object.

    Writing a part number again replaces it (a step run twice is harmless); S3 parts are at
    least 5 MiB except the last, so a caller checkpoints only after a part."""

    def __init__(self, bucket: str, key: str, upload_id: str) -> None:
        self.bucket = bucket
        self.key = key
        self.upload_id = upload_id

    @classmethod
    def start(cls, bucket: str, key: str, content_type: str) -> "ResumableUpload":
        with translated(f"S3 upload {key}"):
            answer = s3().create_multipart_upload(Bucket=bucket, Key=key, ContentType=content_type)
        return cls(bucket, key, answer["UploadId"])

    def put_part(self, number: int, body: bytes) -> UploadedPart:
        with translated(f"S3 upload {self.key} part {number}"):
            answer = s3().upload_part(
                Bucket=self.bucket,
                Key=self.key,
                UploadId=self.upload_id,
                PartNumber=number,
                Body=body,
            )
        return UploadedPart(number, str(answer["ETag"]))

    def complete(self, parts: list[UploadedPart]) -> None:
        listed = [{"ETag": part.etag, "PartNumber": part.number} for part in parts]
        with translated(f"S3 upload {self.key}"):
            s3().complete_multipart_upload(
                Bucket=self.bucket,
                Key=self.key,
                UploadId=self.upload_id,
                MultipartUpload={"Parts": listed},  # type: ignore[typeddict-item]
            )

    def abort(self) -> None:
        # Best effort: the error that made the job stop is the one worth reporting.
        with contextlib.suppress(StoreUnavailable), translated(f"S3 abort {self.key}"):
            s3().abort_multipart_upload(Bucket=self.bucket, Key=self.key, UploadId=self.upload_id)
