"""SQS worker: makes the knowledge card's section digests after each knowledge write.

Partial batch responses: a record that fails is retried alone, and after the queue's
maxReceiveCount it moves to the DLQ (its last attempt marks the card FAILED first).
"""

from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from psap.knowledge.card import DigestRequest, digest_knowledge
from psap.observability import bind_request, detailed_tracing, logger, metrics, tracer

# Every failed record is reported, even when all of a batch failed (no exception).
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def digest_record(record: SQSRecord) -> str:
    request = DigestRequest.model_validate_json(record.body)
    bind_request(request.tenant_id, record.message_id, None)
    outcome = digest_knowledge(request, int(record.attributes.approximate_receive_count))
    logger.info(
        "knowledge card digest", extra={"knowledge_id": request.knowledge_id, "outcome": outcome}
    )
    return outcome


def digest_batch(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return dict(
        process_partial_response(
            event=event, record_handler=digest_record, processor=processor, context=context
        )
    )


# The Tracer imports the X-Ray SDK: only with detailed tracing on (psap.observability).
traced = tracer().capture_lambda_handler(digest_batch) if detailed_tracing() else digest_batch


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return traced(event, context)
