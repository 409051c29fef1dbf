"""The webhook dispatcher (SQS): one signed attempt per delivery message."""

from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from psap.config import cad_table
from psap.observability import logger, metrics, tracer
from psap.webhooks.deliveries import DispatchMessage
from psap.webhooks.dispatcher import dispatch

# Every failed record is reported, even when the whole batch failed (no exception).
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def process_record(record: SQSRecord) -> str:
    message = DispatchMessage.from_body(record.body)
    logger.append_keys(tenant_id=message.tenant_id, delivery_id=message.delivery_id)
    return dispatch(cad_table(), message).value


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer().capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(event, process_record, processor, context)
