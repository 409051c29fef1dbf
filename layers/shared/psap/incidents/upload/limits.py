"""Where the synchronous, inline-asynchronous and presigned upload paths divide."""

SYNC_MAX_ROWS = 500  # applied within the request (about 1 500 DynamoDB calls at most)
INLINE_MAX_BYTES = 5_242_880  # a larger body is 413: API Gateway and Lambda payload limits
FILE_MAX_BYTES = 104_857_600  # the presigned path (about 500 000 rows)
