"""The OpenAPI descriptions of the incident upload operations (one place for the rules)."""

from psap.incidents.upload.service import REJECTIONS_KEPT, UPLOAD_URL_SECONDS
from psap.limits import (
    INCIDENT_UPLOAD_FILE_MAX_BYTES,
    INCIDENT_UPLOAD_INLINE_MAX_BYTES,
    INCIDENT_UPLOAD_SYNC_MAX_ROWS,
)

UPLOAD_ID_PATTERN = r"^upl-[0-9a-f]{32}$"

_ROWS = (
    "Rows: JSON Lines (`application/x-ndjson` or `application/jsonl`), one Incident object "
    "per line with the spec's camelCase fields, `notes` and `responders` as arrays; or CSV "
    "(`text/csv`, RFC 4180), a header row of Incident field names, then one incident per "
    "record, an empty cell null, `notes` and `responders` cells holding a JSON array. UTF-8. "
    "A CSV header with an unknown or repeated column, or without `number`, rejects the file "
    "(400, nothing written). Each row is created or updated by its `number` (required): the "
    "fields a row carries replace the stored ones (null or an empty cell clears), fields it "
    "does not carry are kept. `id`, `createdAt` and `event` are the service's and ignored. "
    "Timestamps are ISO 8601 with Z or an offset. A row equal to what is stored changes "
    "nothing (UNCHANGED), so re-uploading a file is harmless. A bad row (unknown field, bad "
    "type or timestamp, no number, a number already on an earlier line of the file) is "
    "rejected with its line and reason; the other rows are applied. An UPDATED incident "
    "sends `incident.updated` to the tenant's CAD connectors."
)

UPLOAD_DESCRIPTION = (
    f"The file is the request body (at most {INCIDENT_UPLOAD_INLINE_MAX_BYTES} bytes, else "
    f"413). Up to {INCIDENT_UPLOAD_SYNC_MAX_ROWS} rows are applied at once: 200 with counts "
    "(created, updated, "
    "unchanged, rejected), every rejection {line, number, reason} and every incident "
    "{line, number, id, outcome}. A larger file is stored and applied asynchronously: 202 "
    "with the upload job and `Location` = its status resource. " + _ROWS
)

CREATE_DESCRIPTION = (
    f"For files over {INCIDENT_UPLOAD_INLINE_MAX_BYTES} bytes (up to "
    f"{INCIDENT_UPLOAD_FILE_MAX_BYTES}): 201 with the job in status AWAITING_FILE and an S3 "
    f"presigned POST valid {UPLOAD_URL_SECONDS} s: POST `uploadUrl` as multipart/form-data "
    "(no Authorization header) with every `uploadFields` entry as it is, then the file as "
    "the field `file` (last). S3 answers 204. The signed policy bounds the file to "
    f"1..{INCIDENT_UPLOAD_FILE_MAX_BYTES} bytes (`maxFileBytes`): S3 itself refuses a "
    "larger file (400 EntityTooLarge), an empty one (400 EntityTooSmall) and a changed "
    "field or policy (403), and stores nothing. Then POST .../uploads/{uploadId}/start. " + _ROWS
)

START_DESCRIPTION = (
    "Queues the upload once its file was uploaded (409 before). 202 with the job and "
    "`Location`; starting a started upload again answers its current state and changes "
    "nothing. The start pins the file's version (its ETag): a file uploaded again with the "
    'form after the start makes the job FAILED ("replaced") before any row of it is applied.'
)

GET_DESCRIPTION = (
    "The upload's status (AWAITING_FILE, QUEUED, RUNNING, SUCCEEDED, FAILED), its counters "
    "(moving every few hundred rows while RUNNING), `createdAt`, `startedAt`, `finishedAt`, "
    f"the first {REJECTIONS_KEPT} rejections in file order (`rejectionsTruncated` when there "
    "are more) and `failureReason` when the file as a whole could not be read. An upload of "
    "another tenant is 404."
)
