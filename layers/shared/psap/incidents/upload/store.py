"""Upload jobs in the tenant-data table.

  T#{t}#UPLOAD#{uploadId} / JOB   format, status, object key, counters, checkpoint, the
                                  first rejections (compressed JSON), run id and heartbeat

Every call takes the tenant: an upload of another tenant is simply not found. A worker run
claims the job with a conditional write (a run id); its progress writes are conditional on
still holding it, so two deliveries of one message never both count.
"""

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from psap.clock import format_timestamp, parse_timestamp
from psap.config import tenant_data_table
from psap.incidents.upload.models import (
    RowOutcome,
    RowRejection,
    UploadCounts,
    UploadFormat,
    UploadJob,
    UploadStatus,
)
from psap.storage.attributes import from_item
from psap.storage.aws_errors import ConditionFailed, translated
from psap.storage.documents import decode_document, encode_document
from psap.storage.dynamodb import dynamodb, read_item
from psap.storage.partitions import PartitionKind, register


def _table() -> str:
    """This store's table, from the settings read at cold start (psap.config)."""
    return tenant_data_table()


_JOB_SK = "JOB"


@dataclass
class Counts:
    rows: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    rejected: int = 0

    def add(self, outcome: RowOutcome) -> None:
        if outcome is RowOutcome.CREATED:
            self.created += 1
        elif outcome is RowOutcome.UPDATED:
            self.updated += 1
        else:
            self.unchanged += 1

    def wire(self) -> UploadCounts:
        return UploadCounts(**asdict(self))


@dataclass
class Progress:
    """What a run has done so far: counters, the kept rejections and the checkpoint (every
    row starting at or before `lines_done` is counted)."""

    counts: Counts = field(default_factory=Counts)
    rejections: list[RowRejection] = field(default_factory=list)
    lines_done: int = 0


@dataclass(frozen=True)
class JobRecord:
    tenant_id: int
    upload_id: str
    format: UploadFormat
    status: UploadStatus
    object_key: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    progress: Progress
    failure_reason: str | None
    run_id: str | None
    heartbeat_at: datetime | None
    # The ETag of the file as it was when the upload started: later runs read only that one.
    file_etag: str | None = None

    def view(self, rejections_cap: int) -> UploadJob:
        kept = self.progress.rejections[:rejections_cap]
        return UploadJob(
            upload_id=self.upload_id,
            format=self.format,
            status=self.status,
            created_at=self.created_at,
            started_at=self.started_at,
            finished_at=self.finished_at,
            rejections=kept,
            rejections_truncated=self.progress.counts.rejected > len(kept),
            failure_reason=self.failure_reason,
            **self.progress.counts.wire().model_dump(),
        )


def job_key(tenant_id: int, upload_id: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"T#{tenant_id}#UPLOAD#{upload_id}"}, "sk": {"S": _JOB_SK}}


def _progress_values(progress: Progress) -> dict[str, Any]:
    counts = progress.counts
    rejections = [r.model_dump(mode="json", by_alias=True) for r in progress.rejections]
    return {
        ":rows": {"N": str(counts.rows)},
        ":created": {"N": str(counts.created)},
        ":updated": {"N": str(counts.updated)},
        ":unchanged": {"N": str(counts.unchanged)},
        ":rejected": {"N": str(counts.rejected)},
        ":lines": {"N": str(progress.lines_done)},
        ":rejections": {"B": encode_document({"rejections": rejections})},
    }


_PROGRESS_SET = (
    "#rows = :rows, created = :created, updated = :updated, unchanged = :unchanged, "
    "rejected = :rejected, linesDone = :lines, rejections = :rejections"
)


def create_job(
    tenant_id: int,
    upload_id: str,
    file_format: UploadFormat,
    *,
    status: UploadStatus,
    object_key: str,
    now: datetime,
) -> None:
    item = {
        **job_key(tenant_id, upload_id),
        "tenantId": {"N": str(tenant_id)},
        "uploadId": {"S": upload_id},
        "format": {"S": file_format.value},
        "status": {"S": status.value},
        "objectKey": {"S": object_key},
        "createdAt": {"S": format_timestamp(now)},
    }
    # A job's id is random: the registry is how the tenant's offboarding finds it.
    register(_table(), tenant_id, item["pk"]["S"], kind=PartitionKind.INCIDENT_UPLOAD)
    with translated("upload job"):
        dynamodb().put_item(
            TableName=_table(), Item=item, ConditionExpression="attribute_not_exists(pk)"
        )


def get_job(tenant_id: int, upload_id: str) -> JobRecord | None:
    item = read_item(_table(), job_key(tenant_id, upload_id), "upload job")
    return _record(item) if item else None


def _time(value: Any) -> datetime | None:
    return parse_timestamp(str(value)) if value else None


def _record(item: dict[str, Any]) -> JobRecord:
    blob = item.get("rejections")
    rejections = decode_document(bytes(blob))["rejections"] if blob is not None else []
    counts = Counts(
        rows=int(item.get("rows", 0)),
        created=int(item.get("created", 0)),
        updated=int(item.get("updated", 0)),
        unchanged=int(item.get("unchanged", 0)),
        rejected=int(item.get("rejected", 0)),
    )
    return JobRecord(
        tenant_id=int(item["tenantId"]),
        upload_id=str(item["uploadId"]),
        format=UploadFormat(str(item["format"])),
        status=UploadStatus(str(item["status"])),
        object_key=str(item["objectKey"]),
        created_at=parse_timestamp(str(item["createdAt"])),
        started_at=_time(item.get("startedAt")),
        finished_at=_time(item.get("finishedAt")),
        progress=Progress(
            counts=counts,
            rejections=[RowRejection.model_validate(r) for r in rejections],
            lines_done=int(item.get("linesDone", 0)),
        ),
        failure_reason=item.get("failureReason"),
        run_id=item.get("runId"),
        file_etag=item.get("fileEtag"),
        heartbeat_at=_time(item.get("heartbeatAt")),
    )


def _update(
    tenant_id: int,
    upload_id: str,
    expression: str,
    *,
    condition: str,
    values: dict[str, Any],
    names: dict[str, str] | None = None,
) -> dict[str, Any] | None:
    """The item after a conditional update, or None when the condition did not hold."""
    arguments: dict[str, Any] = {
        "TableName": _table(),
        "Key": job_key(tenant_id, upload_id),
        "UpdateExpression": expression,
        "ConditionExpression": f"attribute_exists(pk) AND ({condition})",
        "ExpressionAttributeValues": values,
        "ReturnValues": "ALL_NEW",
    }
    if names:
        arguments["ExpressionAttributeNames"] = names
    try:
        with translated("upload job"):
            answer = dynamodb().update_item(**arguments)
    except ConditionFailed:
        return None
    return from_item(answer["Attributes"])


def mark_queued(tenant_id: int, upload_id: str, file_etag: str) -> bool:
    """AWAITING_FILE -> QUEUED, pinning the file's version; False when the job was not
    waiting for its file."""
    item = _update(
        tenant_id,
        upload_id,
        "SET #status = :queued, fileEtag = :etag",
        condition="#status = :awaiting",
        values={
            ":queued": {"S": UploadStatus.QUEUED.value},
            ":awaiting": {"S": UploadStatus.AWAITING_FILE.value},
            ":etag": {"S": file_etag},
        },
        names={"#status": "status"},
    )
    return item is not None


def claim(
    tenant_id: int, upload_id: str, run_id: str, *, now: datetime, stale_before: datetime
) -> JobRecord | None:
    """Takes a QUEUED job, or a RUNNING one whose run stopped beating before `stale_before`
    (it died, or handed over). None: finished, or another run is alive."""
    item = _update(
        tenant_id,
        upload_id,
        "SET #status = :running, runId = :run, heartbeatAt = :now, "
        "startedAt = if_not_exists(startedAt, :now)",
        condition="#status = :queued OR (#status = :running AND heartbeatAt < :stale)",
        values={
            ":running": {"S": UploadStatus.RUNNING.value},
            ":queued": {"S": UploadStatus.QUEUED.value},
            ":run": {"S": run_id},
            ":now": {"S": format_timestamp(now)},
            ":stale": {"S": format_timestamp(stale_before)},
        },
        names={"#status": "status"},
    )
    return _record(item) if item is not None else None


def save_progress(
    tenant_id: int,
    upload_id: str,
    run_id: str,
    *,
    progress: Progress,
    heartbeat: datetime,
) -> bool:
    """Checkpoints a run; False when the run no longer holds the job (stop at once). A run
    handing over sets an old heartbeat so that the next run may claim at once."""
    item = _update(
        tenant_id,
        upload_id,
        f"SET {_PROGRESS_SET}, heartbeatAt = :beat",
        condition="runId = :run AND #status = :running",
        values={
            **_progress_values(progress),
            ":beat": {"S": format_timestamp(heartbeat)},
            ":run": {"S": run_id},
            ":running": {"S": UploadStatus.RUNNING.value},
        },
        names={"#rows": "rows", "#status": "status"},
    )
    return item is not None


def finish(
    tenant_id: int,
    upload_id: str,
    run_id: str | None,
    *,
    status: UploadStatus,
    progress: Progress,
    failure_reason: str | None,
    now: datetime,
) -> bool:
    """SUCCEEDED or FAILED, once: by the run holding the job (or, run_id None, by a job that
    never started, e.g. its file is missing)."""
    values: dict[str, Any] = {
        **_progress_values(progress),
        ":status": {"S": status.value},
        ":now": {"S": format_timestamp(now)},
        ":reason": {"S": failure_reason} if failure_reason else {"NULL": True},
        ":running": {"S": UploadStatus.RUNNING.value},
    }
    if run_id is not None:
        condition = "runId = :run AND #status = :running"
        values[":run"] = {"S": run_id}
    else:
        condition = "#status <> :running AND #status <> :succeeded AND #status <> :failed"
        values[":succeeded"] = {"S": UploadStatus.SUCCEEDED.value}
        values[":failed"] = {"S": UploadStatus.FAILED.value}
    item = _update(
        tenant_id,
        upload_id,
        f"SET {_PROGRESS_SET}, #status = :status, finishedAt = :now, failureReason = :reason",
        condition=condition,
        values=values,
        names={"#rows": "rows", "#status": "status"},
    )
    return item is not None
