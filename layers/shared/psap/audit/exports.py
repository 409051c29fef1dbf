"""Audit log exports: an Admin asks for a time range; a worker writes the file to S3.

An export job lives in the tenant-data table (T#{t}#AUDITEXPORT#{exportId} / EXPORT) and
moves QUEUED -> RUNNING -> SUCCEEDED | FAILED. The worker reads the audit table's chains of
the range's days, a Query page at a time, into one S3 multipart upload, in bounded steps: a
step takes the job's lease (runId, heartbeat), writes parts, stores a checkpoint after each
part (the upload id, its parts, the chain position, the last link), and when its time runs
low sends the job's message again and stops; the next step goes on from the checkpoint. So
an export of any size finishes, however long one run may last, and its status shows the
progress (`progress`). A step run twice rewrites the same part numbers from the same
checkpoint; a second run while one holds the lease does nothing; a SUCCEEDED job ignores its
messages. The download URL is presigned on each status read and lives for
DOWNLOAD_URL_SECONDS.
"""

import contextlib
import csv
import io
import json
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from enum import StrEnum
from typing import Any, Final, Self

from pydantic import Field, field_validator, model_validator

from psap.audit.chain import Link, head_line, omitted_line, record_line
from psap.audit.store import ChainPage, ChainPosition, RecordFilter, chain_pages_from
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
from psap.storage.leases import JobLease, LeaseLost
from psap.storage.partitions import PartitionKind, register
from psap.storage.s3 import ResumableUpload, UploadedPart, presigned_get_url
from psap.storage.sqs import send_message

MAX_RANGE: Final = timedelta(days=31)
DOWNLOAD_URL_SECONDS: Final = 900
# A part of the file (S3's least is 5 MiB, but for the last); a step stores its checkpoint
# after each part, so a step's lost work is at most one part's records.
PART_BYTES = 16 * 1024 * 1024
STEP_MARGIN_MS: Final = 60_000  # a step hands over with this much of its run's time left
# A run without a heartbeat this long has died: the worker's timeout (300 s) and a margin.
STALE_AFTER: Final = timedelta(seconds=360)
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


@dataclass
class _Checkpoint:
    """Where a job's file stands after its last part: what the next step goes on from.
    Kept beside the job (the `checkpoint` attribute), never on the wire."""

    upload_id: str
    parts: list[UploadedPart]
    position: ChainPosition
    last: Link | None  # the last link in the file: its chain's head line is still due
    count: int = 0
    size: int = 0
    records_read: int = 0
    steps: int = 0

    def as_text(self) -> str:
        return json.dumps(
            {
                "uploadId": self.upload_id,
                "parts": [[part.number, part.etag] for part in self.parts],
                "day": self.position.day.isoformat(),
                "shard": self.position.shard,
                "afterSeq": self.position.after_seq,
                "last": None if self.last is None else self.last.as_json(),
                "count": self.count,
                "size": self.size,
                "recordsRead": self.records_read,
                "steps": self.steps,
            }
        )

    @classmethod
    def from_text(cls, text: str) -> "_Checkpoint":
        raw = json.loads(text)
        last = raw["last"]
        return cls(
            upload_id=raw["uploadId"],
            parts=[UploadedPart(int(number), str(etag)) for number, etag in raw["parts"]],
            position=ChainPosition(
                date.fromisoformat(raw["day"]), int(raw["shard"]), int(raw["afterSeq"])
            ),
            last=None
            if last is None
            else Link(last["id"], int(last["seq"]), last["prev"], last["hash"]),
            count=int(raw["count"]),
            size=int(raw["size"]),
            records_read=int(raw["recordsRead"]),
            steps=int(raw["steps"]),
        )

    def progress(self) -> "ExportProgress":
        return ExportProgress(
            steps=self.steps,
            records_read=self.records_read,
            records_exported=self.count,
            bytes_written=self.size,
            reading_day=self.position.day,
        )


class StepOutcome(StrEnum):
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    HANDED_OVER = "HANDED_OVER"  # a checkpoint is stored and the next step's message sent
    BUSY = "BUSY"  # another run holds the job (its own message comes back if it dies)
    LOST = "LOST"  # another run took the job over meanwhile: this one's work is dropped
    IGNORED = "IGNORED"  # finished before, or gone


def run_export(
    tenant_id: int,
    export_id: str,
    last_attempt: bool,
    *,
    remaining_ms: Callable[[], int] = lambda: 0,
) -> StepOutcome:
    """Runs one step of the export: from its checkpoint to the first part written after
    `remaining_ms` falls under STEP_MARGIN_MS, then hands over to a new message; or to the
    end of the range, and the file is completed. On the queue's last attempt a failure is
    recorded."""
    export = _read(tenant_id, export_id)
    if export is None or export.status in (ExportState.SUCCEEDED, ExportState.FAILED):
        return StepOutcome.IGNORED  # nothing to do: the job is done, gone or never was
    run = _Run(tenant_id, export, uuid.uuid4().hex)
    if not run.claim():
        return StepOutcome.BUSY
    try:
        return run.step(time_is_up=lambda: remaining_ms() < STEP_MARGIN_MS)
    except LeaseLost:
        return StepOutcome.LOST
    except StoreUnavailable:
        if last_attempt:
            run.fail("The export could not be written; ask for it again")
            return StepOutcome.FAILED
        run.release()  # the message comes back; its next delivery goes on from the checkpoint
        raise
    except Exception:
        # Anything else would fail every attempt alike: FAILED now, never left RUNNING.
        logger.exception("audit export failed", extra={"export_id": export_id})
        run.fail("The export failed on an unexpected error; ask for it again")
        return StepOutcome.FAILED


class _Run:
    """One step of one export job, holding the job's lease (runId, heartbeat) while it runs."""

    def __init__(self, tenant_id: int, export: AuditExport, run_id: str) -> None:
        self.tenant_id = tenant_id
        self.export = export
        self.run_id = run_id
        self.checkpoint: _Checkpoint | None = None
        self.upload: ResumableUpload | None = None
        self.lease = JobLease(
            tenant_data_table(),
            _key(tenant_id, export.export_id),
            run_id,
            what=f"audit export {export.export_id}",
        )

    def claim(self) -> bool:
        """Takes the job's lease if no live run holds it; reads the checkpoint with it."""
        running = self.export.model_copy(update={"status": ExportState.RUNNING})
        item = self.lease.claim(
            STALE_AFTER,
            (ExportState.QUEUED.value, ExportState.RUNNING.value),
            {
                "job": {"S": running.model_dump_json(by_alias=True)},
                "status": {"S": ExportState.RUNNING.value},
                "updatedAt": {"S": format_timestamp(utc_now())},
            },
        )
        if item is None:
            return False
        self.export = running
        stored = item.get("checkpoint")
        if stored is not None:
            self.checkpoint = _Checkpoint.from_text(stored["S"])
            self.export = self.export.model_copy(update={"progress": self.checkpoint.progress()})
        return True

    def step(self, time_is_up: Callable[[], bool]) -> StepOutcome:
        export = self.export
        bucket, key = audit_export_bucket(), object_key(self.tenant_id, export)
        checkpoint = self.checkpoint
        if checkpoint is None:
            upload = ResumableUpload.start(bucket, key, _content_type(export))
            checkpoint = _Checkpoint(
                upload.upload_id, [], ChainPosition(export.start.date(), 0), None
            )
        upload = self.upload = ResumableUpload(bucket, key, checkpoint.upload_id)
        checkpoint.steps += 1
        buffer = bytearray()
        if checkpoint.size == 0 and export.format is ExportFormat.CSV:
            buffer.extend(_csv_rows([list(CSV_COLUMNS)]).encode("utf-8"))
        last_day = export.end.date()
        filters = export.filters
        where = RecordFilter(filters.operation, filters.credential_id, filters.status)
        # Each page's text goes to the buffer; a part is written when the buffer holds one,
        # and only then is the position stored (the text after it is made again next step).
        for page in chain_pages_from(self.tenant_id, checkpoint.position, last_day):
            text, matched = _page_text(export, where, page, last=checkpoint.last)
            buffer.extend(text)
            checkpoint.position = page.after
            checkpoint.last = page.entries[-1].link
            checkpoint.count += matched
            checkpoint.records_read += len(page.entries)
            if len(buffer) >= PART_BYTES:
                self._put_part(upload, checkpoint, bytes(buffer))
                buffer.clear()
                self._save(checkpoint)
                if time_is_up():
                    self._hand_over()
                    return StepOutcome.HANDED_OVER
        if checkpoint.last is not None and export.format is ExportFormat.NDJSON:
            buffer.extend(_ndjson_line(head_line(checkpoint.last)).encode("utf-8"))
        if buffer or not checkpoint.parts:
            self._put_part(upload, checkpoint, bytes(buffer))
        upload.complete(checkpoint.parts)
        fault_point("export.after_file_written")
        done = export.model_copy(
            update={
                "status": ExportState.SUCCEEDED,
                "finished_at": utc_now(),
                "record_count": checkpoint.count,
                "size_bytes": checkpoint.size,
                "progress": checkpoint.progress(),
            }
        )
        self._finish(done)
        return StepOutcome.SUCCEEDED

    def _put_part(self, upload: ResumableUpload, checkpoint: _Checkpoint, body: bytes) -> None:
        checkpoint.parts.append(upload.put_part(len(checkpoint.parts) + 1, body))
        checkpoint.size += len(body)

    def _save(self, checkpoint: _Checkpoint) -> None:
        self.export = self.export.model_copy(update={"progress": checkpoint.progress()})
        self.lease.write(
            {
                "checkpoint": {"S": checkpoint.as_text()},
                "job": {"S": self.export.model_dump_json(by_alias=True)},
                "updatedAt": {"S": format_timestamp(utc_now())},
            }
        )

    def _hand_over(self) -> None:
        self.lease.free()
        message = ExportMessage(tenant_id=self.tenant_id, export_id=self.export.export_id)
        send_message(audit_export_queue_url(), message.model_dump(mode="json", by_alias=True))

    def release(self) -> None:
        with contextlib.suppress(LeaseLost, StoreUnavailable):
            self.lease.free()

    def _finish(self, export: AuditExport) -> None:
        self.lease.write(
            {
                "job": {"S": export.model_dump_json(by_alias=True)},
                "status": {"S": export.status.value},
                "updatedAt": {"S": format_timestamp(utc_now())},
            },
            remove=("checkpoint", "runId", "heartbeat"),
        )

    def fail(self, reason: str) -> None:
        if self.upload is not None:
            self.upload.abort()
        failed = self.export.model_copy(
            update={"status": ExportState.FAILED, "finished_at": utc_now(), "failure": reason}
        )
        with contextlib.suppress(LeaseLost):
            self._finish(failed)


def _content_type(export: AuditExport) -> str:
    return "application/x-ndjson" if export.format is ExportFormat.NDJSON else "text/csv"


def _page_text(
    export: AuditExport, where: RecordFilter, page: ChainPage, *, last: Link | None
) -> tuple[bytes, int]:
    """A page's text and how many of its records are asked for. NDJSON carries every chain
    of the range's days whole, the records not asked for as their links only, and each
    chain's head: `psap-admin audit verify` checks the file alone (psap.audit.chain). CSV
    holds the records asked for, for reading, not verifying."""
    lines: list[dict[str, Any]] = []
    rows: list[list[str]] = []
    for entry in page.entries:
        if last is not None and last.chain != entry.link.chain:
            lines.append(head_line(last))
        last = entry.link
        if where.admits(entry.record, export.start, export.end):
            lines.append(record_line(entry.record, entry.link))
            rows.append(_csv_values(entry.record))
        else:
            lines.append(omitted_line(entry.link))
    if export.format is ExportFormat.NDJSON:
        return "".join(map(_ndjson_line, lines)).encode("utf-8"), len(rows)
    return (_csv_rows(rows).encode("utf-8") if rows else b""), len(rows)


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
        register(tenant_data_table(), tenant_id, pk, kind=PartitionKind.AUDIT_EXPORT)
    with translated(f"audit export {export.export_id}"):
        dynamodb().put_item(**request)


def _known_id(text: str) -> str:
    try:
        return str(uuid.UUID(text))
    except ValueError as error:
        raise NotFound(f"Audit export {text} not found") from error
