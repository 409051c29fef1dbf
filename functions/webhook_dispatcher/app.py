"""The webhook dispatcher (SQS, main and slow lane): one signed attempt per delivery message.

The tenants of a batch are sent side by side (psap.webhooks.dispatcher.dispatch_batch), so
one tenant's hanging endpoint cannot hold another's delivery back behind it; the failed
messages are reported as partial batch failures, as Powertools' BatchProcessor would.
"""

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSEvent
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import ValidationError

from psap.observability import logger, metrics, tracer
from psap.webhooks.deliveries import DispatchMessage
from psap.webhooks.dispatcher import dispatch_batch


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer().capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    messages: list[tuple[str, DispatchMessage]] = []
    failed: list[str] = []
    for record in SQSEvent(event).records:
        try:
            messages.append((record.message_id, DispatchMessage.from_body(record.body)))
        except ValidationError:
            logger.exception("unreadable dispatch message", extra={"message_id": record.message_id})
            failed.append(record.message_id)
    failed += dispatch_batch(messages, context.get_remaining_time_in_millis)
    return {"batchItemFailures": [{"itemIdentifier": message_id} for message_id in failed]}
