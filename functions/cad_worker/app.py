"""The intake worker (SQS): maps stored submissions into incidents and events."""

from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from psap.cad.intake import IntakeMessage
from psap.cad.worker import process_submission
from psap.observability import logger, metrics, tracer

# Every failed record is reported, even when the whole batch failed (no exception).
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def process_record(record: SQSRecord) -> str:
    message = IntakeMessage.model_validate_json(record.body)
    logger.append_keys(tenant_id=message.tenant_id, receipt_id=message.receipt_id)
    receives = int(record.attributes.approximate_receive_count or 1)
    return process_submission(message, receives).value


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer().capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(event, process_record, processor, context)
