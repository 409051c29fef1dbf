"""The export worker: one bounded step of a job at a time, holding the job's lease."""

import contextlib
import uuid
from collections.abc import Callable
from datetime import timedelta
from enum import StrEnum
from typing import Final

from psap.audit.chain import head_line
from psap.audit.exports.checkpoint import Checkpoint
from psap.audit.exports.formats import CSV_COLUMNS, content_type, csv_rows, ndjson_line, page_text
from psap.audit.exports.jobs import job_key, object_key, read_export
from psap.audit.exports.models import AuditExport, ExportFormat, ExportMessage, ExportState
from psap.audit.sealing import seal_lines
from psap.audit.store import ChainPosition, RecordFilter, chain_pages_from
from psap.clock import format_timestamp, utc_now
from psap.config import audit_export_bucket, audit_export_queue_url, tenant_data_table
from psap.errors import StoreUnavailable
from psap.faults import fault_point
from psap.observability import logger
from psap.storage.leases import JobLease, LeaseLost
from psap.storage.s3 import ResumableUpload
from psap.storage.sqs import send_message

# A part of the file (S3's least is 5 MiB, but for the last); a step stores its checkpoint
# after each part, so a step's lost work is at most one part's records.
PART_BYTES = 16 * 1024 * 1024
STEP_MARGIN_MS: Final = 60_000  # a step hands over with this much of its run's time left
# A run without a heartbeat this long has died: the worker's timeout (300 s) and a margin.
STALE_AFTER: Final = timedelta(seconds=360)


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
    export = read_export(tenant_id, export_id)
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
        self.checkpoint: Checkpoint | None = None
        self.upload: ResumableUpload | None = None
        self.lease = JobLease(
            tenant_data_table(),
            job_key(tenant_id, export.export_id),
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
            self.checkpoint = Checkpoint.from_text(stored["S"])
            self.export = self.export.model_copy(update={"progress": self.checkpoint.progress()})
        return True

    def step(self, time_is_up: Callable[[], bool]) -> StepOutcome:
        export = self.export
        bucket, key = audit_export_bucket(), object_key(self.tenant_id, export)
        checkpoint = self.checkpoint
        if checkpoint is None:
            upload = ResumableUpload.start(bucket, key, content_type(export))
            checkpoint = Checkpoint(
                upload.upload_id, [], ChainPosition(export.start.date(), 0), None
            )
        upload = self.upload = ResumableUpload(bucket, key, checkpoint.upload_id)
        checkpoint.steps += 1
        buffer = bytearray()
        if checkpoint.size == 0 and export.format is ExportFormat.CSV:
            buffer.extend(csv_rows([list(CSV_COLUMNS)]).encode("utf-8"))
        last_day = export.end.date()
        filters = export.filters
        where = RecordFilter(filters.operation, filters.credential_id, filters.status)
        # Each page's text goes to the buffer; a part is written when the buffer holds one,
        # and only then is the position stored (the text after it is made again next step).
        for page in chain_pages_from(self.tenant_id, checkpoint.position, last_day):
            text, matched = page_text(export, where, page, last=checkpoint.last)
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
            buffer.extend(ndjson_line(head_line(checkpoint.last)).encode("utf-8"))
        if export.format is ExportFormat.NDJSON:
            # The signed digests and the tenant's seals as they stood when the export was
            # asked for: every head they name was in the table before the first page was read.
            for line in seal_lines(
                self.tenant_id, export.start.date(), last_day, before=export.created_at
            ):
                buffer.extend(ndjson_line(line).encode("utf-8"))
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

    def _put_part(self, upload: ResumableUpload, checkpoint: Checkpoint, body: bytes) -> None:
        checkpoint.parts.append(upload.put_part(len(checkpoint.parts) + 1, body))
        checkpoint.size += len(body)

    def _save(self, checkpoint: Checkpoint) -> None:
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
