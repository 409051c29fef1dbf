"""SQS consumer: rebuilds the resource-center search index when the catalog changes.

Every message means "the catalog changed"; a batch of them is one rebuild of the whole
published catalog (idempotent). If the rebuild fails the handler raises, the batch returns
to the queue and, after the queue's maxReceiveCount, goes to its DLQ.
"""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from psap.config import resource_center_table, search_index_bucket
from psap.observability import logger, metrics, tracer
from psap.resource_center.indexing import rebuild_index


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer().capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    requests = [record.get("body", "") for record in event.get("Records", [])]
    logger.info("index rebuild requested", extra={"requests": requests})
    result, _ = rebuild_index(resource_center_table(), search_index_bucket())
    return {"indexVersion": result.index_version, "documents": result.documents}
