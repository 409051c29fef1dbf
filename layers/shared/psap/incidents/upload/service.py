"""The incident upload operations and the worker.

Where the line is (README "Incident upload"):
- POST /incidents/upload with the file as the body (at most the inline limit of psap.limits):
  up to the synchronous row limit is applied at once (200, every row's outcome); a larger body
  is stored to S3 and applied by the worker (202 and the job, Location: its status resource).
- Files over the inline limit (up to the file limit): POST /incidents/uploads {format} ->
  201 with a presigned S3 POST form whose policy bounds the file's size, so S3 itself refuses
  a larger file; POST the file with it; POST /incidents/uploads/{id}/start -> 202.
- GET /incidents/uploads/{id}: the job's status, counters and first rejections.

A synchronous upload reads the whole body before writing anything, so a file-level error
(415, 400) writes nothing; rows are rejected one by one and the others are applied.
The worker streams the file line by line, checkpoints every CHECKPOINT_ROWS rows, hands over
to a new message before its time runs out, and is safe to run twice for one message.
"""

import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta

from psap import clock
from psap.audit.changes import ChangeAction, note_change
from psap.config import incident_upload_bucket, incident_upload_queue_url
from psap.errors import (
    Conflict,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
    StoreUnavailable,
    UnsupportedMediaType,
)
from psap.faults import fault_point
from psap.incidents.upload import store
from psap.incidents.upload.applying import CHUNK_ROWS, Applier
from psap.incidents.upload.models import (
    RowOutcome,
    RowRejection,
    RowResult,
    UploadFormat,
    UploadJob,
    UploadReport,
    UploadStatus,
    UploadTicket,
)
from psap.incidents.upload.parsing import ParsedRow, parse_rows
from psap.limits import (
    INCIDENT_UPLOAD_FILE_MAX_BYTES,
    INCIDENT_UPLOAD_INLINE_MAX_BYTES,
    INCIDENT_UPLOAD_SYNC_MAX_ROWS,
)
from psap.models import WireModel
from psap.observability import logger
from psap.storage import s3
from psap.storage.sqs import send_message

UPLOAD_URL_SECONDS = 900
REJECTIONS_KEPT = 1000
CHECKPOINT_ROWS = 500
STALE_AFTER = timedelta(minutes=5)  # a run without a heartbeat this long has died
HANDOVER_MARGIN_MS = 60_000  # a run stops and hands over with this much time left
AUDITED_INCIDENTS = 100

MEDIA_TYPES = {
    "text/csv": UploadFormat.CSV,
    "application/x-ndjson": UploadFormat.JSONL,
    "application/jsonl": UploadFormat.JSONL,
}
_EXTENSIONS = {UploadFormat.CSV: "csv", UploadFormat.JSONL: "jsonl"}
_AUDIT_ACTIONS: dict[RowOutcome, ChangeAction] = {
    RowOutcome.CREATED: "CREATED",
    RowOutcome.UPDATED: "UPDATED",
    RowOutcome.UNCHANGED: "UNCHANGED",
}


class UploadMessage(WireModel):
    """What the upload queue carries: which job to run (or to go on with)."""

    tenant_id: int
    upload_id: str


def upload_format(content_type: str | None) -> UploadFormat:
    media_type, _, parameters = (content_type or "").partition(";")
    found = MEDIA_TYPES.get(media_type.strip().lower())
    if found is None:
        raise UnsupportedMediaType(
            "Content-Type must be text/csv, application/x-ndjson or application/jsonl"
        )
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() not in (
            "utf-8",
            "utf8",
        ):
            raise UnsupportedMediaType("Only UTF-8 files are accepted")
    return found


def split_lines(body: bytes) -> Iterator[bytes]:
    """The body's lines with their b"\\n", as the worker reads them from S3."""
    start = 0
    while start < len(body):
        end = body.find(b"\n", start)
        if end < 0:
            yield body[start:]
            return
        yield body[start : end + 1]
        start = end + 1


def _object_key(tenant_id: int, upload_id: str, file_format: UploadFormat) -> str:
    return f"tenants/{tenant_id}/incident-uploads/{upload_id}.{_EXTENSIONS[file_format]}"


def _new_upload_id() -> str:
    return f"upl-{uuid.uuid4().hex}"


def _rough_rows(body: bytes, file_format: UploadFormat) -> int:
    """Non-blank lines (less the CSV header): never fewer than the rows."""
    lines = sum(1 for line in split_lines(body) if line.strip())
    return lines - 1 if file_format is UploadFormat.CSV else lines


@dataclass
class _Outcome:
    handed_over: bool = False
    lost: bool = False  # another run holds the job now


def _run_rows(
    rows: Iterable[ParsedRow],
    applier: Applier,
    progress: store.Progress,
    *,
    checkpoint: Callable[[store.Progress], bool] | None = None,
    time_is_up: Callable[[], bool] = lambda: False,
    on_results: Callable[[list[RowResult]], None] | None = None,
) -> _Outcome:
    """The apply loop shared by both paths. Rows up to `progress.lines_done` were counted by
    an earlier run: they are read again (for in-file duplicates) but neither counted nor
    applied."""
    skip_through = progress.lines_done
    seen: dict[str, int] = {}
    pending: list[ParsedRow] = []
    since_checkpoint = 0

    def flush(last_line: int) -> None:
        results = applier.apply(pending) if pending else []
        fault_point("upload.after_rows_applied")
        for result in results:
            progress.counts.add(result.outcome)
        if on_results is not None:
            on_results(results)
        pending.clear()
        progress.lines_done = max(progress.lines_done, last_line)

    for parsed in rows:
        row = parsed
        if row.fields is not None and row.number is not None:
            first = seen.get(row.number)
            if first is None:
                seen[row.number] = row.line
            else:
                reason = f"Number '{row.number}' is already on line {first}"
                row = ParsedRow(row.line, row.number, None, reason)
        if row.line <= skip_through:
            continue
        progress.counts.rows += 1
        since_checkpoint += 1
        if row.fields is None:
            progress.counts.rejected += 1
            if len(progress.rejections) < REJECTIONS_KEPT:
                progress.rejections.append(
                    RowRejection(line=row.line, number=row.number, reason=row.reason or "")
                )
        else:
            pending.append(row)
        if len(pending) >= CHUNK_ROWS or (checkpoint and since_checkpoint >= CHECKPOINT_ROWS):
            flush(row.line)
        if checkpoint is not None and since_checkpoint >= CHECKPOINT_ROWS:
            since_checkpoint = 0
            if not checkpoint(progress):
                return _Outcome(lost=True)
            if time_is_up():
                return _Outcome(handed_over=True)
    flush(progress.lines_done)
    return _Outcome()


# ---------------------------------------------------------------- POST /incidents/upload


def upload_incidents(
    tenant_id: int, content_type: str | None, body: bytes
) -> UploadReport | UploadJob:
    """A small file applied now (UploadReport), a larger one queued (UploadJob)."""
    file_format = upload_format(content_type)
    if len(body) > INCIDENT_UPLOAD_INLINE_MAX_BYTES:
        raise PayloadTooLarge(
            f"The body is larger than {INCIDENT_UPLOAD_INLINE_MAX_BYTES} bytes: use POST "
            "/api/v1/external/incidents/uploads for a presigned upload"
        )
    if not body.strip():
        raise InvalidInput("The file is empty")
    upload_id = _new_upload_id()
    if _rough_rows(body, file_format) > INCIDENT_UPLOAD_SYNC_MAX_ROWS:
        return _queue_inline(tenant_id, upload_id, file_format, body=body)
    rows = list(parse_rows(file_format, split_lines(body)))  # file-level errors: no write
    if not rows:
        raise InvalidInput("The file has no incidents")
    applied: list[RowResult] = []
    progress = store.Progress()
    _run_rows(
        rows, Applier(tenant_id, upload_id, clock.utc_now), progress, on_results=applied.extend
    )
    applied.sort(key=lambda result: result.line)
    for result in applied[:AUDITED_INCIDENTS]:
        note_change("incident", result.id, _AUDIT_ACTIONS[result.outcome])
    note_change("incidentUpload", upload_id, "ACCEPTED")
    logger.info("incident upload applied", extra={"upload_id": upload_id, "rows": len(rows)})
    return UploadReport(
        upload_id=upload_id,
        format=file_format,
        rejections=progress.rejections,
        incidents=applied,
        **progress.counts.wire().model_dump(),
    )


def _queue_inline(
    tenant_id: int, upload_id: str, file_format: UploadFormat, *, body: bytes
) -> UploadJob:
    key = _object_key(tenant_id, upload_id, file_format)
    s3.put_object(incident_upload_bucket(), key, body, content_type="application/octet-stream")
    now = clock.utc_now()
    store.create_job(
        tenant_id, upload_id, file_format, status=UploadStatus.QUEUED, object_key=key, now=now
    )
    _enqueue(tenant_id, upload_id)
    note_change("incidentUpload", upload_id, "ACCEPTED")
    return _view(tenant_id, upload_id)


def _enqueue(tenant_id: int, upload_id: str) -> None:
    message = UploadMessage(tenant_id=tenant_id, upload_id=upload_id)
    send_message(incident_upload_queue_url(), message.model_dump(mode="json", by_alias=True))


def _view(tenant_id: int, upload_id: str) -> UploadJob:
    record = store.get_job(tenant_id, upload_id)
    if record is None:
        raise NotFound(f"Upload {upload_id} not found")
    return record.view(REJECTIONS_KEPT)


# ---------------------------------------------------------------- the presigned path


def create_upload(tenant_id: int, file_format: UploadFormat) -> UploadTicket:
    upload_id = _new_upload_id()
    key = _object_key(tenant_id, upload_id, file_format)
    now = clock.utc_now()
    store.create_job(
        tenant_id,
        upload_id,
        file_format,
        status=UploadStatus.AWAITING_FILE,
        object_key=key,
        now=now,
    )
    form = s3.presigned_post(
        incident_upload_bucket(),
        key,
        max_bytes=INCIDENT_UPLOAD_FILE_MAX_BYTES,
        expires_in_seconds=UPLOAD_URL_SECONDS,
    )
    note_change("incidentUpload", upload_id, "CREATED")
    job = _view(tenant_id, upload_id)
    return UploadTicket(
        **job.model_dump(),
        upload_url=form.url,
        upload_fields=form.fields,
        upload_url_expires_at=now + timedelta(seconds=UPLOAD_URL_SECONDS),
        max_file_bytes=INCIDENT_UPLOAD_FILE_MAX_BYTES,
    )


def start_upload(tenant_id: int, upload_id: str) -> UploadJob:
    """Queues a job whose file was uploaded; starting a started job again changes nothing."""
    record = store.get_job(tenant_id, upload_id)
    if record is None:
        raise NotFound(f"Upload {upload_id} not found")
    if record.status is UploadStatus.AWAITING_FILE:
        stored = s3.stored_object(incident_upload_bucket(), record.object_key)
        if stored is None:
            raise Conflict("No file was uploaded yet: POST it to the uploadUrl first")
        # S3 enforces the ticket's limit; this is for an object put there some other way.
        if stored.size > INCIDENT_UPLOAD_FILE_MAX_BYTES:
            raise PayloadTooLarge(f"The file is larger than {INCIDENT_UPLOAD_FILE_MAX_BYTES} bytes")
        if stored.size == 0:
            raise InvalidInput("The file is empty")
        if store.mark_queued(tenant_id, upload_id, stored.etag):
            _enqueue(tenant_id, upload_id)
            note_change("incidentUpload", upload_id, "STARTED")
    return _view(tenant_id, upload_id)


def get_upload(tenant_id: int, upload_id: str) -> UploadJob:
    return _view(tenant_id, upload_id)


# ---------------------------------------------------------------- the worker


FILE_REPLACED = "The file was replaced after the upload started; create a new upload for it"


def _unusable(stored: s3.StoredObject | None, pinned_etag: str | None) -> str | None:
    """Why the job's file cannot be read, or None."""
    if stored is None:
        return "The file is gone"
    if stored.size > INCIDENT_UPLOAD_FILE_MAX_BYTES:
        return f"Larger than {INCIDENT_UPLOAD_FILE_MAX_BYTES} bytes"
    if pinned_etag is not None and stored.etag != pinned_etag:
        return FILE_REPLACED
    return None


def run_upload(message: UploadMessage, remaining_ms: Callable[[], int]) -> str:
    """Runs (or goes on with) one job; returns what happened, for the log."""
    tenant_id, upload_id = message.tenant_id, message.upload_id
    job = store.get_job(tenant_id, upload_id)
    if job is None:
        logger.warning("no upload job for this message", extra={"upload_id": upload_id})
        return "GONE"
    if job.status not in (UploadStatus.QUEUED, UploadStatus.RUNNING):
        return f"IGNORED_{job.status.value}"
    run_id = uuid.uuid4().hex
    now = clock.utc_now()
    claimed = store.claim(tenant_id, upload_id, run_id, now=now, stale_before=now - STALE_AFTER)
    if claimed is None:
        return "BUSY"  # another run is alive (its own message comes back if it dies)
    fault_point("upload.after_claim")
    progress = claimed.progress
    taken_over = job.status is UploadStatus.RUNNING
    bucket = incident_upload_bucket()
    stored = s3.stored_object(bucket, claimed.object_key)
    reason = _unusable(stored, claimed.file_etag)
    if reason is not None:
        store.finish(
            tenant_id,
            upload_id,
            run_id,
            status=UploadStatus.FAILED,
            progress=progress,
            failure_reason=reason,
            now=now,
        )
        return "FAILED"
    applier = Applier(
        tenant_id, upload_id, clock.utc_now, redo_since=claimed.started_at if taken_over else None
    )

    def checkpoint(current: store.Progress) -> bool:
        return store.save_progress(
            tenant_id, upload_id, run_id, progress=current, heartbeat=clock.utc_now()
        )

    try:
        outcome = _run_rows(
            parse_rows(
                claimed.format,
                s3.iter_object_lines(bucket, claimed.object_key, claimed.file_etag),
            ),
            applier,
            progress,
            checkpoint=checkpoint,
            time_is_up=lambda: remaining_ms() < HANDOVER_MARGIN_MS,
        )
    except StoreUnavailable:
        raise  # transient: the message comes back and the next run goes on from the checkpoint
    except Exception as error:
        # Whatever else stops the run (a poison row, a bug) stops it for good: the job is
        # FAILED with a reason, never left RUNNING for a message in the dead-letter queue.
        if isinstance(error, InvalidInput):
            reason = error.info
        elif isinstance(error, s3.ObjectChanged):
            reason = FILE_REPLACED
        else:
            logger.exception("incident upload stopped", extra={"upload_id": upload_id})
            reason = (
                f"The upload stopped on an unexpected error after line {progress.lines_done}; "
                "rows before it were applied. Create a new upload for the rest"
            )
        store.finish(
            tenant_id,
            upload_id,
            run_id,
            status=UploadStatus.FAILED,
            progress=progress,
            failure_reason=reason,
            now=clock.utc_now(),
        )
        return "FAILED"
    if outcome.lost:
        return "LOST"
    if outcome.handed_over:
        # An old heartbeat lets the next message's run claim the job at once.
        store.save_progress(
            tenant_id,
            upload_id,
            run_id,
            progress=progress,
            heartbeat=datetime(2000, 1, 1, tzinfo=UTC),
        )
        _enqueue(tenant_id, upload_id)
        return "HANDED_OVER"
    status, failure = UploadStatus.SUCCEEDED, None
    if progress.counts.rows == 0:
        status, failure = UploadStatus.FAILED, "The file has no incidents"
    fault_point("upload.before_finish")
    store.finish(
        tenant_id,
        upload_id,
        run_id,
        status=status,
        progress=progress,
        failure_reason=failure,
        now=clock.utc_now(),
    )
    logger.info(
        "incident upload finished",
        extra={
            "upload_id": upload_id,
            "status": status.value,
            "counts": asdict(progress.counts),
        },
    )
    return status.value
