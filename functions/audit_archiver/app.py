"""SQS consumer of the audit archive queue: copies each tenant's sealed records of a period,
with the seal and the digest, to the write-once archive bucket (psap.audit.archive).

Partial batch responses: a seal whose digest is not stored yet, or whose copy fails, is
retried alone; after the queue's maxReceiveCount it reaches the dead-letter queue and its
alarm.
"""

from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from psap.audit.archive import ArchiveMessage, archive_seal
from psap.observability import logger

processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def archive_record(record: SQSRecord) -> int:
    return archive_seal(ArchiveMessage.model_validate_json(record.body))


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    answer = process_partial_response(
        event=event, record_handler=archive_record, processor=processor, context=context
    )
    logger.info(
        "audit seals archived",
        extra={"messages": len(event["Records"]), "failed": len(answer["batchItemFailures"])},
    )
    return dict(answer)
