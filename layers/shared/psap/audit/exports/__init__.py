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

One module per concern, all re-exported here (the public import path): models (the wire
shapes), jobs (the job records), formats (the file's text), checkpoint and worker.
"""

from psap.audit.exports.formats import CSV_COLUMNS
from psap.audit.exports.jobs import create_export, get_export, object_key
from psap.audit.exports.models import (
    DOWNLOAD_URL_SECONDS,
    MAX_RANGE,
    OPERATION_IDS,
    AuditExport,
    AuditExportRequest,
    ExportFilters,
    ExportFormat,
    ExportJob,
    ExportMessage,
    ExportProgress,
    ExportState,
)
from psap.audit.exports.worker import (
    PART_BYTES,
    STALE_AFTER,
    STEP_MARGIN_MS,
    StepOutcome,
    run_export,
)

__all__ = [
    "CSV_COLUMNS",
    "DOWNLOAD_URL_SECONDS",
    "MAX_RANGE",
    "OPERATION_IDS",
    "PART_BYTES",
    "STALE_AFTER",
    "STEP_MARGIN_MS",
    "AuditExport",
    "AuditExportRequest",
    "ExportFilters",
    "ExportFormat",
    "ExportJob",
    "ExportMessage",
    "ExportProgress",
    "ExportState",
    "StepOutcome",
    "create_export",
    "get_export",
    "object_key",
    "run_export",
]
