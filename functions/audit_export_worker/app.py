"""SQS worker: writes an audit export's file to S3, a page of records at a time, in steps
that hand over to a new message before the run's time is up (psap.audit.exports); and, by
the same steps, a tenant export's signed archive (psap.offboarding.exports).

Partial batch responses: a failed export is retried alone; its last attempt (the queue's
maxReceiveCount) marks it FAILED before the message goes to the DLQ.
"""

from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from psap.audit.exports import ExportJob, ExportMessage, run_export
from psap.config import audit_export_max_receives
from psap.observability import bind_request, detailed_tracing, logger, metrics, tracer
from psap.offboarding import exports as tenant_exports

processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
_context: list[LambdaContext] = []  # the invocation's context, for its remaining time


def export_record(record: SQSRecord) -> str:
    message = ExportMessage.model_validate_json(record.body)
    bind_request(message.tenant_id, record.message_id, None)
    # The queue's maxReceiveCount, as the template tells the function.
    max_receives = audit_export_max_receives()
    last_attempt = int(record.attributes.approximate_receive_count) >= max_receives
    remaining = _context[-1].get_remaining_time_in_millis
    run = tenant_exports.run_export if message.job is ExportJob.TENANT else run_export
    outcome = str(run(message.tenant_id, message.export_id, last_attempt, remaining_ms=remaining))
    what = "tenant export" if message.job is ExportJob.TENANT else "audit export"
    logger.info(what, extra={"export_id": message.export_id, "outcome": outcome})
    return outcome


def export_batch(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    _context[:] = [context]
    return dict(
        process_partial_response(
            event=event, record_handler=export_record, processor=processor, context=context
        )
    )


# The Tracer imports the X-Ray SDK: only with detailed tracing on (psap.observability).
traced = tracer().capture_lambda_handler(export_batch) if detailed_tracing() else export_batch


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return traced(event, context)
