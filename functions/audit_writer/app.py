"""SQS consumer of the audit queue: appends each record to its chain in the audit table.

Partial batch responses: a record that cannot be stored, is not a record, or would replace
another is failed alone; after the queue's maxReceiveCount it reaches the writer's
dead-letter queue (and its alarm). A batch's records share one appender, so a chain's head
is read once per batch.
"""

from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from psap.audit.store import RecordAppender
from psap.audit.writer import append_message
from psap.config import audit_retention_days
from psap.observability import logger

processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    appender = RecordAppender(audit_retention_days())

    def append(record: SQSRecord) -> str:
        return append_message(appender, record)

    answer = process_partial_response(
        event=event,
        record_handler=append,
        processor=processor,
        context=context,
    )
    failed = len(answer.get("batchItemFailures", []))
    logger.info(
        "audit records appended", extra={"messages": len(event["Records"]), "failed": failed}
    )
    return dict(answer)
