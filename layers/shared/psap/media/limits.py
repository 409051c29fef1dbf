"""Size limits of a radio-traffic upload, shared by the ingest logic and the operation table.

Kept apart from the parser so that psap.http.operations can read them without importing
the SRT library.
"""

# An SRT file of at most 2 MiB: a 2-hour channel recording is about 150 KB.
MAX_SRT_BYTES = 2 * 1024 * 1024
# The request body: a JSON upload carries the file in base64 (4/3 larger) plus its fields.
MAX_UPLOAD_BODY_BYTES = MAX_SRT_BYTES * 4 // 3 + 64 * 1024
