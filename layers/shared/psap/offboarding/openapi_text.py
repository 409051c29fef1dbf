"""The tenant export operations' OpenAPI descriptions."""

from typing import Any

from psap.offboarding.export_models import DOWNLOAD_URL_SECONDS, TenantExport

TAG_TENANT_EXPORTS = "Admin: tenant exports"

CREATE = """\
Starts an asynchronous export of everything the tenant owns (knowledge, users and their \
enrollments and task lists, evaluations, incidents, events, media records, connectors without \
their secrets, deliveries, resource-center licenses, CAD submissions, jobs, and the audit \
trail) into one signed archive, the format of the operator's offboarding archive. Nothing is \
deleted. Answers 202 with the export (state QUEUED) and its Location; poll \
GET .../tenant-exports/{exportId}. One export of a tenant runs at a time: a start while one \
runs is 409. The optional body names a `reason`, kept on the job. Permission: Admin."""

GET = f"""\
An export's state: QUEUED, RUNNING (with `progress`), SUCCEEDED (with `archive`: its \
`sha256`, `sizeBytes`, the manifest's `signature` and the `verificationKey` it verifies with, \
and a `downloadUrl`, an S3 presigned GET valid for {DOWNLOAD_URL_SECONDS} seconds, signed \
anew on each read) or FAILED (with `failure`). Check a download with \
`PSAP_ARCHIVE_KEY=<verificationKey> psap-admin tenant verify-archive FILE` (docs/admin-api.md). \
Archives are kept 7 days. An export of another tenant, or an unknown id, is 404. \
Permission: Admin."""

_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorInfo"}}}
CREATE_RESPONSES: dict[int, Any] = {
    202: {
        "description": "The export, queued",
        "content": {"application/json": {"model": TenantExport}},
    },
    400: {"description": "An unknown field, or a reason too long", "content": _ERROR},
    409: {"description": "An export of this tenant is running", "content": _ERROR},
}
