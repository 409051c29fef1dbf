"""Every size limit of a request or an uploaded file, in one neutral module.

The HTTP operation table (psap.http.operations) turns them into 413 answers before a body is
parsed; the domain logic (knowledge, CAD intake, media ingest, incident upload) checks the
same numbers on what it is given. Neither imports the other for them.
"""

KNOWLEDGE_BODY_LIMIT = 1_048_576  # bytes of a knowledge create or append body
ADMIN_BODY_LIMIT = 16_384  # bytes of a tenant admin request body (a URL, a token, a list)
SMALL_JSON_BODY_LIMIT = 65_536  # bytes of a small JSON request (an export, an upload ticket)
CAD_BODY_LIMIT = 256 * 1024  # bytes of a CAD submission

# An SRT file of at most 2 MiB: a 2-hour channel recording is about 150 KB.
MAX_SRT_BYTES = 2 * 1024 * 1024
# The radio-traffic request body: a JSON upload carries the file in base64 (4/3 larger) plus
# its fields.
MAX_UPLOAD_BODY_BYTES = MAX_SRT_BYTES * 4 // 3 + 64 * 1024

# Where the incident upload's synchronous, inline-asynchronous and presigned paths divide.
INCIDENT_UPLOAD_SYNC_MAX_ROWS = 500  # applied within the request (about 1 500 DynamoDB calls)
INCIDENT_UPLOAD_INLINE_MAX_BYTES = 5_242_880  # larger is 413: API Gateway and Lambda limits
INCIDENT_UPLOAD_FILE_MAX_BYTES = 104_857_600  # the presigned path (about 500 000 rows)

# Integer bounds of the specification's formats, enforced on every path and query integer.
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
