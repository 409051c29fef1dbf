"""The incident upload worker (SQS): applies a stored upload file, line by line."""

from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from psap.incidents.upload.service import UploadMessage, run_upload
from psap.observability import logger, metrics, tracer

processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
_context: list[LambdaContext] = []  # the invocation's context, for its remaining time


def process_record(record: SQSRecord) -> str:
    message = UploadMessage.model_validate_json(record.body)
    logger.append_keys(tenant_id=message.tenant_id, upload_id=message.upload_id)
    return run_upload(message, _context[-1].get_remaining_time_in_millis)


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer().capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    _context[:] = [context]
    return process_partial_response(event, process_record, processor, context)
