"""The audit writer: audit queue messages into the audit table's chains.

Each message of the audit queue (template.yaml, AuditQueue) is one record (psap.audit.lines),
sent by the shared API entrypoint, the authorizers or the operator's CLI, the only
principals whose roles may send to it. A message that is not a valid record, or that would
replace a stored record (psap.audit.store.ForgedRecord), fails: SQS retries it, then moves
it to the dead-letter queue, whose alarm calls an operator; it is never dropped silently.
"""

from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from psap.audit.recording import AuditRecord
from psap.audit.store import Appended, RecordAppender
from psap.faults import fault_point


def append_message(appender: RecordAppender, message: SQSRecord) -> Appended:
    """Appends the message's record; raises (pydantic's ValidationError, ForgedRecord or a
    store failure) for the batch to report the message as failed."""
    appended = appender.append(AuditRecord.model_validate_json(message.body))
    fault_point("audit.after_append")
    return appended
