"""The wire shapes of incident uploads (ours: the spec shows none)."""

from enum import StrEnum
from typing import Literal

from pydantic import Field

from psap.models import RequestModel, Timestamp, WireModel


class UploadFormat(StrEnum):
    CSV = "csv"
    JSONL = "jsonl"


class RowOutcome(StrEnum):
    CREATED = "CREATED"
    UPDATED = "UPDATED"
    UNCHANGED = "UNCHANGED"


class UploadStatus(StrEnum):
    AWAITING_FILE = "AWAITING_FILE"  # created for a presigned upload; waits for /start
    QUEUED = "QUEUED"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"  # every row was read; rejected rows are listed, not a failure
    FAILED = "FAILED"  # the file as a whole could not be read (failureReason)


class RowRejection(WireModel):
    line: int = Field(description="1-based line of the file where the row starts")
    number: str | None = Field(description="The row's incident number, when it has one")
    reason: str


class RowResult(WireModel):
    line: int
    number: str
    id: int = Field(description="The service's incident id")
    outcome: RowOutcome


class UploadCounts(WireModel):
    rows: int = 0  # rows read so far (blank lines and the CSV header are not rows)
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    rejected: int = 0


class UploadReport(UploadCounts):
    """The answer of a synchronous upload: every row's outcome."""

    upload_id: str
    format: UploadFormat
    status: Literal[UploadStatus.SUCCEEDED] = UploadStatus.SUCCEEDED
    rejections: list[RowRejection]
    incidents: list[RowResult]


class UploadJob(UploadCounts):
    """An asynchronous upload and its progress (counters move every few hundred rows)."""

    upload_id: str
    format: UploadFormat
    status: UploadStatus
    created_at: Timestamp
    started_at: Timestamp | None = None
    finished_at: Timestamp | None = None
    rejections: list[RowRejection] = Field(
        default_factory=list, description="The first rejected rows, in file order (capped)"
    )
    rejections_truncated: bool = Field(
        default=False, description="More rows were rejected than `rejections` lists"
    )
    failure_reason: str | None = None


class UploadTicket(UploadJob):
    """A new upload waiting for its file: POST it to `uploadUrl` as an S3 form, then .../start."""

    upload_url: str = Field(
        description="Where to POST the file as multipart/form-data (an S3 presigned POST)"
    )
    upload_fields: dict[str, str] = Field(
        description="The form fields to send as they are, before the file's field `file`: "
        "the object key, the signed policy (which bounds the file's size) and its signature"
    )
    upload_url_expires_at: Timestamp
    max_file_bytes: int = Field(
        description="The largest file S3 accepts with this form (400 EntityTooLarge beyond)"
    )


class NewUploadRequest(RequestModel):
    format: UploadFormat = Field(description="csv or jsonl: how the file will be read")
