"""Tenant exports: an Admin asks for everything the tenant owns as the offboarding's signed
archive (psap.offboarding.archive), and nothing is purged.

The job lives in the tenant-data table (T#{t}#TENANTEXPORT#{exportId} / EXPORT) and moves
QUEUED -> RUNNING -> SUCCEEDED | FAILED; one item per tenant (T#{t}#TENANTEXPORT / RUNNING)
holds the export running, so a second start is refused while one runs. The audit export
queue and worker run it (psap.audit.exports: ExportMessage.job), with the same lease and
hand-over: a step claims the job's lease, collects pages with the offboarding's collectors
(one Query of the tenant's partitions each), writes each page as an object beside the
archive and checkpoints after it, and sends the job's message again when its run's time is
low. The last step seals: it reads the pages back into the kind files and writes the
archive, signed with a key made for this export, which the status shows with the archive's
SHA-256 so the tenant can verify what it downloaded (docs/admin-api.md).
"""

import contextlib
import hashlib
import json
import secrets
import tempfile
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, Final

from psap.audit.exports.models import ExportJob, ExportMessage
from psap.clock import format_timestamp, utc_now
from psap.config import audit_export_bucket, audit_export_queue_url, tenant_data_table
from psap.errors import Conflict, NotFound, StoreUnavailable
from psap.observability import logger
from psap.offboarding.archive import FORMAT, ArchiveFile, sign, write_archive
from psap.offboarding.collectors import ORDER, STEPS
from psap.offboarding.export_models import (
    DOWNLOAD_URL_SECONDS,
    TenantArchive,
    TenantExport,
    TenantExportProgress,
    TenantExportRequest,
    TenantExportState,
)
from psap.storage.aws_errors import ConditionFailed, TransactionCancelled, translated
from psap.storage.dynamodb import dynamodb, read_item, transact_write
from psap.storage.leases import JobLease, LeaseLost
from psap.storage.partitions import PartitionKind, registration
from psap.storage.s3 import (
    ResumableUpload,
    UploadedPart,
    get_object,
    presigned_get_url,
    put_object,
)
from psap.storage.sqs import send_message

ARCHIVE_PART_BYTES: Final = 16 * 1024 * 1024  # the archive goes up a part at a time
STEP_MARGIN_MS: Final = 60_000  # a step hands over with this much of its run's time left
# A run without a heartbeat this long has died: the worker's timeout (300 s) and a margin.
STALE_AFTER: Final = timedelta(seconds=360)
# The running-export hold lapses this long after its last step began, so a job lost for
# good (its message gone) cannot keep the tenant from exporting: over the queue's visibility
# timeout (1800 s), after which a live job's message comes back and a step renews it.
HOLD: Final = timedelta(hours=1)
_EXPORT_SK: Final = "EXPORT"
_RUNNING_SK: Final = "RUNNING"
_SEAL: Final = "seal"


class ExportRunning(Conflict):
    """The tenant has an export running: one at a time."""


def job_key(tenant_id: int, export_id: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"T#{tenant_id}#TENANTEXPORT#{export_id}"}, "sk": {"S": _EXPORT_SK}}


def running_key(tenant_id: int) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"T#{tenant_id}#TENANTEXPORT"}, "sk": {"S": _RUNNING_SK}}


def object_prefix(tenant_id: int, export_id: str) -> str:
    return f"tenants/{tenant_id}/tenant-exports/{export_id}/"


def archive_key(tenant_id: int, export_id: str) -> str:
    return object_prefix(tenant_id, export_id) + "archive.tar.gz"


def _page_key(tenant_id: int, export_id: str, page: int) -> str:
    return object_prefix(tenant_id, export_id) + f"pages/{page:08d}.json"


# ---------------------------------------------------------------- the job, asked for and read


def create_export(tenant_id: int, request: TenantExportRequest, credential_id: str) -> TenantExport:
    export = TenantExport(
        export_id=str(uuid.uuid4()),
        state=TenantExportState.QUEUED,
        requested_by=credential_id,
        reason=request.reason,
        started_at=utc_now(),
    )
    table = tenant_data_table()
    job = {
        **job_key(tenant_id, export.export_id),
        "job": {"S": export.model_dump_json(by_alias=True)},
        "status": {"S": export.state.value},
        # Made here, kept with the job: the archive is signed with it and the status shows it.
        "archiveKey": {"S": secrets.token_hex(32)},
        "updatedAt": {"S": format_timestamp(utc_now())},
    }
    now = utc_now()
    running = {
        **running_key(tenant_id),
        "exportId": {"S": export.export_id},
        "heldUntil": {"S": format_timestamp(now + HOLD)},
    }
    transact_write(
        [
            {
                "Put": {
                    "TableName": table,
                    "Item": running,
                    "ConditionExpression": "attribute_not_exists(exportId) OR heldUntil < :now",
                    "ExpressionAttributeValues": {":now": {"S": format_timestamp(now)}},
                }
            },
            {
                "Put": {
                    "TableName": table,
                    "Item": job,
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            # Random ids and a tenant-wide item: the registry is how offboarding finds them.
            registration(table, tenant_id, job["pk"]["S"], kind=PartitionKind.TENANT_EXPORT),
            registration(table, tenant_id, running["pk"]["S"], kind=PartitionKind.TENANT_EXPORT),
        ],
        on_cancel=_refused,
    )
    # Stored first: a job whose message is lost stays QUEUED and is visible as such.
    message = ExportMessage(tenant_id=tenant_id, export_id=export.export_id, job=ExportJob.TENANT)
    send_message(audit_export_queue_url(), message.model_dump(mode="json", by_alias=True))
    return export


def _refused(codes: list[str]) -> Exception:
    if codes and codes[0] == "ConditionalCheckFailed":
        return ExportRunning(
            "An export of this tenant is running: wait until its state is SUCCEEDED or FAILED"
        )
    return TransactionCancelled("tenant export not stored", codes)


def get_export(tenant_id: int, export_id: str) -> TenantExport:
    item = _read(tenant_id, _known_id(export_id))
    if item is None:
        raise NotFound(f"Tenant export {export_id} not found")
    export = TenantExport.model_validate_json(str(item["job"]))
    if export.state is not TenantExportState.SUCCEEDED:
        return export
    url = presigned_get_url(
        audit_export_bucket(),
        archive_key(tenant_id, export.export_id),
        DOWNLOAD_URL_SECONDS,
        filename=f"tenant-{tenant_id}-{export.export_id}.tar.gz",
    )
    return export.model_copy(
        update={
            "download_url": url,
            "download_url_expires_at": utc_now() + timedelta(seconds=DOWNLOAD_URL_SECONDS),
        }
    )


def _read(tenant_id: int, export_id: str) -> dict[str, Any] | None:
    return read_item(
        tenant_data_table(), job_key(tenant_id, export_id), f"tenant export {export_id}"
    )


def _known_id(text: str) -> str:
    try:
        return str(uuid.UUID(text))
    except ValueError as error:
        raise NotFound(f"Tenant export {text} not found") from error


# ---------------------------------------------------------------- the worker's steps


def run_export(
    tenant_id: int,
    export_id: str,
    last_attempt: bool,
    *,
    remaining_ms: Callable[[], int] = lambda: 0,
) -> str:
    """Runs one step of the export: pages from its checkpoint until `remaining_ms` falls
    under STEP_MARGIN_MS (then a new message goes on from there), or to the end and the
    seal. On the queue's last attempt a failure is recorded. The outcome's name, as the
    audit export's (psap.audit.exports.StepOutcome)."""
    item = _read(tenant_id, export_id)
    if item is None:
        return "IGNORED"
    export = TenantExport.model_validate_json(str(item["job"]))
    if export.state in (TenantExportState.SUCCEEDED, TenantExportState.FAILED):
        return "IGNORED"
    run = _Run(tenant_id, export, str(item["archiveKey"]))
    if not run.claim():
        return "BUSY"
    try:
        return run.step(time_is_up=lambda: remaining_ms() < STEP_MARGIN_MS)
    except LeaseLost:
        return "LOST"
    except StoreUnavailable:
        if last_attempt:
            run.fail("The export could not be written; ask for it again")
            return "FAILED"
        run.release()  # the message comes back; its next delivery goes on from the checkpoint
        raise
    except Exception:
        # Anything else would fail every attempt alike: FAILED now, never left RUNNING.
        logger.exception("tenant export failed", extra={"export_id": export_id})
        run.fail("The export failed on an unexpected error; ask for it again")
        return "FAILED"


class _Run:
    """One step of one export job, holding the job's lease (runId, heartbeat) while it runs."""

    def __init__(self, tenant_id: int, export: TenantExport, key: str) -> None:
        self.tenant_id = tenant_id
        self.export = export
        self.key = key
        self.state: dict[str, Any] = {}
        self.lease = JobLease(
            tenant_data_table(),
            job_key(tenant_id, export.export_id),
            uuid.uuid4().hex,
            what=f"tenant export {export.export_id}",
        )

    def claim(self) -> bool:
        running = self.export.model_copy(update={"state": TenantExportState.RUNNING})
        item = self.lease.claim(
            STALE_AFTER,
            (TenantExportState.QUEUED.value, TenantExportState.RUNNING.value),
            {
                "job": {"S": running.model_dump_json(by_alias=True)},
                "status": {"S": TenantExportState.RUNNING.value},
                "updatedAt": {"S": format_timestamp(utc_now())},
            },
        )
        if item is None:
            return False
        self.export = running
        self._hold("SET heldUntil = :until", {":until": {"S": format_timestamp(utc_now() + HOLD)}})
        stored = item.get("checkpoint")
        self.state = (
            json.loads(stored["S"])
            if stored
            else {"step": 0, "cursor": None, "pages": 0, "steps": 0, "records": {}}
        )
        return True

    def step(self, time_is_up: Callable[[], bool]) -> str:
        state = self.state
        state["steps"] += 1
        while state["step"] < len(STEPS):
            self._collect_page()
            self._save()
            if time_is_up() and state["step"] < len(STEPS):
                self._hand_over()
                return "HANDED_OVER"
        self._seal()
        return "SUCCEEDED"

    def _collect_page(self) -> None:
        """One collector's page, as one object: each kind's lines (a page run twice writes
        the same object again, from the same cursor)."""
        state = self.state
        own, collector = STEPS[state["step"]]
        page = collector(self.tenant_id, state["cursor"])
        if own is not None:
            page.add(own, page.lines)
        lines = {kind.value: found for kind, found in page.elsewhere.items() if found}
        if lines:
            body = json.dumps(lines, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            put_object(
                audit_export_bucket(),
                _page_key(self.tenant_id, self.export.export_id, state["pages"]),
                body,
                content_type="application/json",
            )
            state["pages"] += 1
            for kind, found in lines.items():
                state["records"][kind] = state["records"].get(kind, 0) + len(found)
        if page.cursor is None:
            state["step"] += 1
            state["cursor"] = None
        else:
            state["cursor"] = page.cursor

    def _progress(self) -> TenantExportProgress:
        state = self.state
        collecting = _SEAL
        if state["step"] < len(STEPS):
            own = STEPS[state["step"]][0]
            collecting = own.value if own is not None else "registry"
        return TenantExportProgress(
            steps=state["steps"],
            pages=state["pages"],
            records=sum(state["records"].values()),
            collecting=collecting,
        )

    def _save(self) -> None:
        self.export = self.export.model_copy(update={"progress": self._progress()})
        self.lease.write(
            {
                "checkpoint": {"S": json.dumps(self.state)},
                "job": {"S": self.export.model_dump_json(by_alias=True)},
                "updatedAt": {"S": format_timestamp(utc_now())},
            }
        )

    def _hand_over(self) -> None:
        self.lease.free()
        message = ExportMessage(
            tenant_id=self.tenant_id, export_id=self.export.export_id, job=ExportJob.TENANT
        )
        send_message(audit_export_queue_url(), message.model_dump(mode="json", by_alias=True))

    def _seal(self) -> None:
        """The pages back into the kind files, in order, and the signed archive: one step
        (its size is the Lambda's ephemeral storage's, docs/admin-api.md)."""
        bucket, export_id = audit_export_bucket(), self.export.export_id
        with tempfile.TemporaryDirectory(prefix="tenant-export-") as folder:
            work = Path(folder)
            files = {kind.value: work / f"{kind.value}.jsonl" for kind in ORDER}
            for path in files.values():
                path.touch()
            for number in range(self.state["pages"]):
                page = json.loads(get_object(bucket, _page_key(self.tenant_id, export_id, number)))
                for kind, lines in page.items():
                    with files[kind].open("a", encoding="utf-8") as file:
                        for line in lines:
                            file.write(
                                json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n"
                            )
            out = work / "archive.tar.gz"
            manifest = write_archive(
                out,
                self.tenant_id,
                [ArchiveFile(f"{kind}.jsonl", path) for kind, path in files.items()],
                key=self.key.encode(),
                created_at=format_timestamp(self.export.started_at),
            )
            digest = hashlib.sha256(out.read_bytes()).hexdigest()
            size = out.stat().st_size
            _upload(out, bucket, archive_key(self.tenant_id, export_id))
        manifest_bytes = json.dumps(manifest, indent=2, sort_keys=True).encode()
        done = self.export.model_copy(
            update={
                "state": TenantExportState.SUCCEEDED,
                "finished_at": utc_now(),
                "progress": self._progress(),
                "archive": TenantArchive(
                    format=FORMAT,
                    sha256=digest,
                    size_bytes=size,
                    signature=sign(manifest_bytes, self.key.encode()),
                    verification_key=self.key,
                    records={
                        name.removesuffix(".jsonl"): int(entry["records"])
                        for name, entry in manifest["files"].items()
                    },
                ),
            }
        )
        self._finish(done)

    def _finish(self, export: TenantExport) -> None:
        self.lease.write(
            {
                "job": {"S": export.model_dump_json(by_alias=True)},
                "status": {"S": export.state.value},
                "updatedAt": {"S": format_timestamp(utc_now())},
            },
            remove=("checkpoint", "runId", "heartbeat"),
        )
        self.export = export
        # The tenant may start another export now.
        self._hold("REMOVE exportId, heldUntil", {})

    def _hold(self, expression: str, values: dict[str, Any]) -> None:
        """Changes the tenant's running-export hold while it is this export's (a hold that
        lapsed and was taken by the next export is that one's)."""
        with contextlib.suppress(ConditionFailed), translated("tenant export hold"):
            dynamodb().update_item(
                TableName=tenant_data_table(),
                Key=running_key(self.tenant_id),
                UpdateExpression=expression,
                ConditionExpression="exportId = :export",
                ExpressionAttributeValues={":export": {"S": self.export.export_id}, **values},
            )

    def release(self) -> None:
        with contextlib.suppress(LeaseLost, StoreUnavailable):
            self.lease.free()

    def fail(self, reason: str) -> None:
        failed = self.export.model_copy(
            update={
                "state": TenantExportState.FAILED,
                "finished_at": utc_now(),
                "failure": reason,
            }
        )
        with contextlib.suppress(LeaseLost):
            self._finish(failed)


def _upload(path: Path, bucket: str, key: str) -> None:
    """The file as one object, a part in memory at a time (no half object on a failure)."""
    upload = ResumableUpload.start(bucket, key, "application/gzip")
    try:
        parts: list[UploadedPart] = []
        with path.open("rb") as source:
            while (body := source.read(ARCHIVE_PART_BYTES)) or not parts:
                parts.append(upload.put_part(len(parts) + 1, body))
        upload.complete(parts)
    except Exception:
        upload.abort()
        raise
