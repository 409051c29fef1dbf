"""CloudWatch Logs subscription: appends the functions' audit lines to the audit table.

A batch that cannot be stored raises: Lambda retries the asynchronous invoke, then sends it
to the writer's dead-letter queue, and the lines stay in the log group for the retention.
"""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from psap.audit.writer import write_batch
from psap.config import audit_retention_days
from psap.observability import logger


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    written = write_batch(event, audit_retention_days())
    logger.info("audit records appended", extra={"records": written})
    return {"written": written}
