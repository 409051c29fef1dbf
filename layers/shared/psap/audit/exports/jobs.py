"""Export jobs in the tenant-data table (T#{t}#AUDITEXPORT#{exportId} / EXPORT): asked
for, read back with a fresh download URL."""

import uuid
from datetime import timedelta
from typing import Any, Final

from psap.audit.exports.models import (
    DOWNLOAD_URL_SECONDS,
    AuditExport,
    AuditExportRequest,
    ExportFilters,
    ExportMessage,
    ExportState,
)
from psap.clock import format_timestamp, utc_now
from psap.config import audit_export_bucket, audit_export_queue_url, tenant_data_table
from psap.errors import NotFound
from psap.storage.aws_errors import translated
from psap.storage.dynamodb import dynamodb, read_item
from psap.storage.partitions import PartitionKind, register
from psap.storage.s3 import presigned_get_url
from psap.storage.sqs import send_message

_EXPORT_SK: Final = "EXPORT"


def job_key(tenant_id: int, export_id: str) -> dict[str, dict[str, str]]:
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
    export = read_export(tenant_id, _known_id(export_id))
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


def read_export(tenant_id: int, export_id: str) -> AuditExport | None:
    item = read_item(
        tenant_data_table(), job_key(tenant_id, export_id), f"audit export {export_id}"
    )
    return AuditExport.model_validate_json(str(item["job"])) if item else None


def _put(tenant_id: int, export: AuditExport, *, new: bool = False) -> None:
    item: dict[str, Any] = {
        **job_key(tenant_id, export.export_id),
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
