"""The audit log operations' OpenAPI descriptions: the design the spec leaves to us."""

from typing import Any

from psap.audit.exports import DOWNLOAD_URL_SECONDS, MAX_RANGE, AuditExport

AUDIT_RECORD_TEXT = (
    "Every call of a tenant to the data interface and to CAD intake leaves one audit record: "
    "`time`, `tenantId`, `credentialId` (never the token), `principal` (the credential's "
    "label), `credentialKind`, `operation` (the operationId), `method`, `path`, `resourceIds` "
    "(the path parameters), `status`, `requestId`, `sourceIp`, `userAgent`, `durationMs`, and "
    "for writes `changes` (resource, id, action, version: ids and version numbers, never "
    "payloads). Calls refused by the authorizer (no valid credential, so no tenant) are not "
    "in a tenant's log. Records reach the audit store a few seconds after the call and are "
    "kept for the deployment's retention (AuditRetentionDays, 365 by default), then expire."
)

CREATE_EXPORT_DESCRIPTION = (
    "Starts an asynchronous export of the tenant's audit records with `from` <= time < `to` "
    f"(at most {MAX_RANGE.days} days), optionally only one `operation`, `credentialId` or "
    "`status`, as `ndjson` (one record per line, the default) or `csv` (a header row; "
    "`resourceIds` and `changes` as JSON; cells that begin with = + - @ are prefixed with ' so "
    "a spreadsheet does not run them). Answers 202 with the export (status QUEUED) and its "
    "Location; poll GET .../exports/{exportId}. Permission: Admin.\n\n" + AUDIT_RECORD_TEXT
)

GET_EXPORT_DESCRIPTION = (
    "An export's status: QUEUED, RUNNING, SUCCEEDED (with `recordCount`, `sizeBytes` and a "
    f"`downloadUrl`, an S3 presigned GET valid for {DOWNLOAD_URL_SECONDS} seconds, signed anew "
    "on each read) or FAILED (with `failure`). Files are kept 7 days. An export of another "
    "tenant, or an unknown id, is 404. Permission: Admin."
)

_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorInfo"}}}
EXPORT_ERRORS: dict[int, Any] = {
    202: {
        "description": "The export, queued",
        "content": {"application/json": {"model": AuditExport}},
    },
    400: {"description": "from/to missing, reversed or too far apart", "content": _ERROR},
}
