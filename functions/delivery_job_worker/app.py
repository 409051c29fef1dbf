"""SQS worker: one step of a connector's delivery job (releasing what a disabled connector
held, or recovering dead-letter deliveries), which queues the next step itself.

Partial batch responses: a step that fails is retried alone (its job record admits it once),
and after the queue's maxReceiveCount it moves to the DLQ, which raises an alarm.
"""

from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from psap.clock import utc_now
from psap.observability import bind_request, detailed_tracing, logger, metrics, tracer
from psap.webhooks.jobs import JobStep, run_step

# Every failed record is reported, even when all of a batch failed (no exception).
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def step_record(record: SQSRecord) -> str:
    message = JobStep.model_validate_json(record.body)
    bind_request(message.tenant_id, record.message_id, None)
    job = run_step(message, utc_now())
    return job.state.value if job is not None else "STALE"


def step_batch(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return dict(
        process_partial_response(
            event=event, record_handler=step_record, processor=processor, context=context
        )
    )


# The Tracer imports the X-Ray SDK: only with detailed tracing on (psap.observability).
traced = tracer().capture_lambda_handler(step_batch) if detailed_tracing() else step_batch


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return traced(event, context)
