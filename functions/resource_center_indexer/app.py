"""SQS consumer: rebuilds the resource-center search index when the catalog changes.

Every message means "the catalog changed"; a batch of them is one rebuild of the whole
published catalog (idempotent). A build that cannot finish in this run (a first build of
thousands of documents) stops STOP_MARGIN_MS before the timeout, checkpoints its vectors
and sends the queue a message to go on; the next run resumes from the checkpoint. If the
rebuild fails the handler raises, the batch returns to the queue and, after the queue's
maxReceiveCount, goes to its DLQ.
"""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from psap.config import search_index_bucket, search_index_queue_url
from psap.faults import fault_point
from psap.observability import logger, metrics, tracer
from psap.resource_center.catalog import queue_rebuild_request
from psap.resource_center.indexing import rebuild_index

# Room left for the chunk being embedded when the time check passes, plus the checkpoint.
STOP_MARGIN_MS = 180_000


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer().capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    requests = [record.get("body", "") for record in event.get("Records", [])]
    logger.info("index rebuild requested", extra={"requests": requests})
    result, _ = rebuild_index(
        search_index_bucket(),
        should_stop=lambda: context.get_remaining_time_in_millis() < STOP_MARGIN_MS,
    )
    fault_point("indexer.after_rebuild")
    if not result.finished:
        queue_rebuild_request(search_index_queue_url())(
            f"resume the interrupted build ({result.embedded} documents embedded this run)"
        )
    return {
        "indexVersion": result.index_version,
        "documents": result.documents,
        "finished": result.finished,
    }
