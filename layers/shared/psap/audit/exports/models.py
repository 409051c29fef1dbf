"""What an audit export is on the wire: the request, the job's status, the queue's message."""

from datetime import date, timedelta
from enum import StrEnum
from typing import Final, Self

from pydantic import Field, field_validator, model_validator

from psap.http.operations import OPERATIONS
from psap.models import RequestModel, Timestamp, WireModel

MAX_RANGE: Final = timedelta(days=31)
DOWNLOAD_URL_SECONDS: Final = 900

OPERATION_IDS: Final = tuple(sorted(operation.operation_id for operation in OPERATIONS.values()))


class ExportFormat(StrEnum):
    NDJSON = "ndjson"
    CSV = "csv"


class ExportState(StrEnum):
    QUEUED = "QUEUED"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"


class AuditExportRequest(RequestModel):
    """Unknown fields are refused; `operation` must be an operationId of this API."""

    start: Timestamp = Field(alias="from", description="First instant included")
    end: Timestamp = Field(
        alias="to", description=f"First instant excluded; at most {MAX_RANGE.days} days after from"
    )
    format: ExportFormat = ExportFormat.NDJSON
    operation: str | None = Field(
        default=None,
        max_length=100,
        description="Only this operationId",
        json_schema_extra={"enum": list(OPERATION_IDS)},
    )
    credential_id: str | None = Field(
        default=None, max_length=100, description="Only this credential"
    )
    status: int | None = Field(default=None, ge=100, le=599, description="Only this status code")

    @field_validator("operation")
    @classmethod
    def _known_operation(cls, operation: str | None) -> str | None:
        if operation is not None and operation not in OPERATION_IDS:
            raise ValueError("not an operationId of this API (see the OpenAPI document)")
        return operation

    @model_validator(mode="after")
    def _range(self) -> Self:
        if self.end <= self.start:
            raise ValueError("'to' must be after 'from'")
        if self.end - self.start > MAX_RANGE:
            raise ValueError(f"the range from 'from' to 'to' is at most {MAX_RANGE.days} days")
        return self


class ExportFilters(WireModel):
    operation: str | None = None
    credential_id: str | None = None
    status: int | None = None


class ExportProgress(WireModel):
    """How far a running export is: updated after each part of the file."""

    steps: int = Field(description="Runs of the worker so far (each goes on from the last)")
    records_read: int = Field(description="Audit records read so far, in range or not")
    records_exported: int = Field(description="Records in the file so far")
    bytes_written: int
    reading_day: date = Field(description="The day whose chains are being read")


class AuditExport(WireModel):
    export_id: str
    status: ExportState
    start: Timestamp = Field(alias="from")
    end: Timestamp = Field(alias="to")
    format: ExportFormat
    filters: ExportFilters
    requested_by: str = Field(description="The credential id that asked for the export")
    created_at: Timestamp
    finished_at: Timestamp | None = None
    record_count: int | None = Field(default=None, description="Records in the file, when done")
    size_bytes: int | None = None
    failure: str | None = None
    download_url: str | None = Field(
        default=None, description=f"When SUCCEEDED: a presigned GET, {DOWNLOAD_URL_SECONDS} s"
    )
    download_url_expires_at: Timestamp | None = None
    progress: ExportProgress | None = Field(
        default=None, description="After the first part of the file: how far the export is"
    )


class ExportJob(StrEnum):
    AUDIT = "audit"
    TENANT = "tenant"  # an export of everything the tenant owns (psap.offboarding.exports)


class ExportMessage(WireModel):
    """What the export queue carries: one queue and worker for both kinds of export job."""

    tenant_id: int
    export_id: str
    job: ExportJob = ExportJob.AUDIT
