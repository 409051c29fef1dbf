"""The audit log operations' OpenAPI descriptions: the design the spec leaves to us."""

from typing import Any

from psap.audit.exports import DOWNLOAD_URL_SECONDS, MAX_RANGE, AuditExport

AUDIT_RECORD_TEXT = (
    "Every call of a tenant to the data interface and to CAD intake leaves one audit record: "
    "`time`, `tenantId`, `credentialId` (never the token), `principal` (the credential's "
    "label), `credentialKind`, `operation` (the operationId), `method`, `path`, `resourceIds` "
    "(the path parameters), `status`, `requestId`, `sourceIp`, `userAgent`, `durationMs`, and "
    "for writes `changes` (resource, id, action, version: ids and version numbers, never "
    "payloads). A credential of the tenant refused by an authorizer (revoked, expired, or of "
    "the other interface) leaves a record with `operation` `authenticate` and `status` 401; "
    "the operator's changes to the tenant leave records with `credentialKind` `operator`. "
    "Records reach the audit store a few seconds after the call, are never changed, and are "
    "kept for the deployment's retention (AuditRetentionDays, 365 days at least), then expire."
)

CREATE_EXPORT_DESCRIPTION = (
    "Starts an asynchronous export of the tenant's audit records with `from` <= time < `to` "
    f"(at most {MAX_RANGE.days} days), optionally only one `operation`, `credentialId` or "
    "`status`, as `ndjson` (the default) or `csv` (a header row; "
    "`resourceIds` and `changes` as JSON; cells that begin with = + - @ are prefixed with ' so "
    "a spreadsheet does not run them). Answers 202 with the export (status QUEUED) and its "
    "Location; poll GET .../exports/{exportId}. Permission: Admin.\n\n"
    "Records are hash chains per day and shard. An `ndjson` file carries each chain of the "
    "range's days whole, so it can be verified alone (`psap-admin audit verify FILE`): a "
    "record asked for is its JSON object plus `chain` {id, seq, prev, hash}; any other record "
    "of the chain is `{chain, omitted: true}` (its link, not its content); each chain ends "
    "with `{chainHead: {id, seq, hash}}`. `recordCount` counts the records asked for.\n\n"
    + AUDIT_RECORD_TEXT
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
