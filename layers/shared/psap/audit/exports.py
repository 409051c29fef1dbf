"""Audit log exports: an Admin asks for a time range; a worker writes the file to S3.

An export job lives in the tenant-data table (T#{t}#AUDITEXPORT#{exportId} / EXPORT) and
moves QUEUED -> RUNNING -> SUCCEEDED | FAILED. The worker streams the audit table's chains
of the range's days, a Query page at a time, into an S3 multipart upload, so neither the
records nor the file are ever whole in memory. A message delivered twice rewrites the same
object; a SUCCEEDED job ignores it. The download URL is presigned on each status read and
lives for DOWNLOAD_URL_SECONDS.
"""

import csv
import io
import json
import uuid
from collections.abc import Iterable
from datetime import timedelta
from enum import StrEnum
from typing import Any, Final, Self

from pydantic import Field, field_validator, model_validator

from psap.audit.chain import Link, head_line, omitted_line, record_line
from psap.audit.store import RecordFilter, chains_between
from psap.clock import format_timestamp, utc_now
from psap.config import (
    audit_export_bucket,
    audit_export_queue_url,
    tenant_data_table,
)
from psap.errors import NotFound, StoreUnavailable
from psap.faults import fault_point
from psap.http.operations import OPERATIONS
from psap.models import RequestModel, Timestamp, WireModel
from psap.observability import logger
from psap.storage.aws import translated
from psap.storage.dynamodb import dynamodb, read_item
from psap.storage.partitions import PartitionKind, register
from psap.storage.s3 import MultipartWriter, presigned_get_url
from psap.storage.sqs import send_message

MAX_RANGE: Final = timedelta(days=31)
DOWNLOAD_URL_SECONDS: Final = 900
_EXPORT_SK: Final = "EXPORT"
CSV_COLUMNS: Final = (
    "time",
    "tenantId",
    "credentialId",
    "principal",
    "credentialKind",
    "operation",
    "method",
    "path",
    "resourceIds",
    "status",
    "requestId",
    "sourceIp",
    "userAgent",
    "changes",
    "durationMs",
)


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


class ExportMessage(WireModel):
    """What the export queue carries."""

    tenant_id: int
    export_id: str


def _key(tenant_id: int, export_id: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"T#{tenant_id}#AUDITEXPORT#{export_id}"}, "sk": {"S": _EXPORT_SK}}


def object_key(tenant_id: int, export: AuditExport) -> str:
    return f"tenants/{tenant_id}/audit-exports/{export.export_id}.{export.format.value}"


def create_export(tenant_id: int, request: AuditExportRequest, credential_id: str) -> AuditExport:
    export = AuditExport(
        export_id=str(uuid.uuid4()),
        status=ExportState.QUEUED,
        start=request.start,
        end=request.end,
        format=request.format,
        filters=ExportFilters(
            operation=request.operation,
            credential_id=request.credential_id,
            status=request.status,
        ),
        requested_by=credential_id,
        created_at=utc_now(),
    )
    _put(tenant_id, export, new=True)
    # Stored first: a job whose message is lost stays QUEUED and is visible as such.
    message = ExportMessage(tenant_id=tenant_id, export_id=export.export_id)
    send_message(audit_export_queue_url(), message.model_dump(mode="json", by_alias=True))
    return export


def get_export(tenant_id: int, export_id: str) -> AuditExport:
    export = _read(tenant_id, _known_id(export_id))
    if export is None:
        raise NotFound(f"Audit export {export_id} not found")
    if export.status is not ExportState.SUCCEEDED:
        return export
    url = presigned_get_url(
        audit_export_bucket(),
        object_key(tenant_id, export),
        DOWNLOAD_URL_SECONDS,
        filename=f"audit-{export.export_id}.{export.format.value}",
    )
    return export.model_copy(
        update={
            "download_url": url,
            "download_url_expires_at": utc_now() + timedelta(seconds=DOWNLOAD_URL_SECONDS),
        }
    )


def run_export(tenant_id: int, export_id: str, last_attempt: bool) -> ExportState:
    """Writes the export's file; on the queue's last attempt a failure is recorded."""
    export = _read(tenant_id, export_id)
    if export is None:
        return ExportState.FAILED  # nothing to do: the job is gone (or never was)
    if export.status in (ExportState.SUCCEEDED, ExportState.FAILED):
        return export.status
    _put(tenant_id, export.model_copy(update={"status": ExportState.RUNNING}))
    try:
        count, size = _write_file(tenant_id, export)
        fault_point("export.after_file_written")
    except StoreUnavailable as error:
        if last_attempt:
            failed = export.model_copy(
                update={
                    "status": ExportState.FAILED,
                    "finished_at": utc_now(),
                    "failure": "The export could not be written; ask for it again",
                }
            )
            _put(tenant_id, failed)
            return ExportState.FAILED
        raise error
    except Exception:
        # Anything else would fail every attempt alike: FAILED now, never left RUNNING.
        logger.exception("audit export failed", extra={"export_id": export_id})
        _put(
            tenant_id,
            export.model_copy(
                update={
                    "status": ExportState.FAILED,
                    "finished_at": utc_now(),
                    "failure": "The export failed on an unexpected error; ask for it again",
                }
            ),
        )
        return ExportState.FAILED
    done = export.model_copy(
        update={
            "status": ExportState.SUCCEEDED,
            "finished_at": utc_now(),
            "record_count": count,
            "size_bytes": size,
        }
    )
    _put(tenant_id, done)
    return ExportState.SUCCEEDED


def _write_file(tenant_id: int, export: AuditExport) -> tuple[int, int]:
    """NDJSON carries every chain of the range's days whole, the records not asked for as
    their links only, and each chain's head: `psap-admin audit verify` checks the file
    alone (psap.audit.chain). CSV holds the records asked for, for reading, not verifying."""
    content_type = "application/x-ndjson" if export.format is ExportFormat.NDJSON else "text/csv"
    filters = export.filters
    where = RecordFilter(filters.operation, filters.credential_id, filters.status)
    count = 0
    with MultipartWriter(
        audit_export_bucket(), object_key(tenant_id, export), content_type
    ) as file:
        if export.format is ExportFormat.CSV:
            file.write(_csv_rows([list(CSV_COLUMNS)]))
        last: Link | None = None
        for page in chains_between(tenant_id, export.start, export.end):
            lines: list[dict[str, Any]] = []
            rows: list[list[str]] = []
            for entry in page:
                if last is not None and last.chain != entry.link.chain:
                    lines.append(head_line(last))
                last = entry.link
                if where.admits(entry.record, export.start, export.end):
                    count += 1
                    lines.append(record_line(entry.record, entry.link))
                    rows.append(_csv_values(entry.record))
                else:
                    lines.append(omitted_line(entry.link))
            if export.format is ExportFormat.NDJSON:
                file.write("".join(map(_ndjson_line, lines)))
            elif rows:
                file.write(_csv_rows(rows))
        if last is not None and export.format is ExportFormat.NDJSON:
            file.write(_ndjson_line(head_line(last)))
    return count, file.size


def _ndjson_line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def _csv_values(record: dict[str, Any]) -> list[str]:
    values: list[str] = []
    for column in CSV_COLUMNS:
        value = record.get(column)
        if value is None:
            values.append("")
        elif isinstance(value, dict | list):
            values.append(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
        else:
            values.append(_spreadsheet_safe(str(value)))
    return values


def _spreadsheet_safe(text: str) -> str:
    """Caller-chosen text (a user agent, a path) must not run as a spreadsheet formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _csv_rows(rows: Iterable[list[str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerows(rows)
    return buffer.getvalue()


def _read(tenant_id: int, export_id: str) -> AuditExport | None:
    item = read_item(tenant_data_table(), _key(tenant_id, export_id), f"audit export {export_id}")
    return AuditExport.model_validate_json(str(item["job"])) if item else None


def _put(tenant_id: int, export: AuditExport, *, new: bool = False) -> None:
    item: dict[str, Any] = {
        **_key(tenant_id, export.export_id),
        "job": {"S": export.model_dump_json(by_alias=True)},
        "status": {"S": export.status.value},
        "updatedAt": {"S": format_timestamp(utc_now())},
    }
    request: dict[str, Any] = {"TableName": tenant_data_table(), "Item": item}
    if new:
        request["ConditionExpression"] = "attribute_not_exists(pk)"
        # A job's id is random: the registry is how the tenant's offboarding finds it.
        pk = item["pk"]["S"]
        register(tenant_data_table(), tenant_id, pk, PartitionKind.AUDIT_EXPORT)
    with translated(f"audit export {export.export_id}"):
        dynamodb().put_item(**request)


def _known_id(text: str) -> str:
    try:
        return str(uuid.UUID(text))
    except ValueError as error:
        raise NotFound(f"Audit export {text} not found") from error
