"""The webhook scheduler (every minute): enqueues deliveries whose next attempt is due.

SQS delays stop at 15 minutes; longer retry waits live only in DynamoDB (nextAttemptAt).
"""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from psap.observability import logger, metrics, tracer
from psap.webhooks.dispatcher import enqueue_due


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer().capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    enqueued = enqueue_due()
    logger.info("due deliveries enqueued", extra={"enqueued": enqueued})
    return {"enqueued": enqueued}
