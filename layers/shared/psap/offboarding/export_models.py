"""What a tenant export is on the wire: the request, the job's state, the archive's proof."""

from enum import StrEnum
from typing import Final

from pydantic import Field

from psap.models import FreeText, RequestModel, Timestamp, WireModel

DOWNLOAD_URL_SECONDS: Final = 900


class TenantExportState(StrEnum):
    QUEUED = "QUEUED"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"


class TenantExportRequest(RequestModel):
    """Unknown fields are refused (400 naming them); the body may be absent."""

    reason: FreeText | None = Field(
        default=None, max_length=500, description="Why the export is asked for (kept on the job)"
    )


class TenantExportProgress(WireModel):
    """How far a running export is: updated after each page it collects."""

    steps: int = Field(description="Runs of the worker so far (each goes on from the last)")
    pages: int = Field(description="Pages of the tenant's data collected so far")
    records: int = Field(description="Lines collected so far, every kind together")
    collecting: str = Field(description="The archive file being collected, or 'seal'")


class TenantArchive(WireModel):
    """How to check the archive: its digest, and the manifest's signature with its key."""

    format: str = Field(description="The archive's format (psap-tenant-archive/1)")
    sha256: str = Field(description="SHA-256 (hex) of the archive file as downloaded")
    size_bytes: int
    signature: str = Field(description="HMAC-SHA-256 (hex) of the manifest (manifest.sig)")
    verification_key: str = Field(
        description="The key the signature verifies with: PSAP_ARCHIVE_KEY for "
        "`psap-admin tenant verify-archive` (one key per export)"
    )
    records: dict[str, int] = Field(description="Lines in each of the archive's files")


class TenantExport(WireModel):
    export_id: str
    state: TenantExportState
    requested_by: str = Field(description="The credential id that asked for the export")
    reason: str | None = None
    started_at: Timestamp
    finished_at: Timestamp | None = None
    progress: TenantExportProgress | None = Field(
        default=None, description="After the first page: how far the export is"
    )
    failure: str | None = None
    archive: TenantArchive | None = Field(default=None, description="When SUCCEEDED")
    download_url: str | None = Field(
        default=None, description=f"When SUCCEEDED: a presigned GET, {DOWNLOAD_URL_SECONDS} s"
    )
    download_url_expires_at: Timestamp | None = None
