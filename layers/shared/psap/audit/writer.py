"""The audit writer: CloudWatch Logs subscription batches into audit records.

The subscription filter (template.yaml) delivers the functions' audit lines as
`{"awslogs": {"data": base64(gzip(json))}}`. Each log event's message is one audit line
(psap.audit.recording). A line that is not a valid record is logged and skipped (it can only
come from a code change; failing would block every later batch); a store failure raises, so
Lambda retries the batch and then sends it to the writer's dead-letter queue.
"""

import base64
import gzip
import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from psap.audit.recording import AuditRecord
from psap.audit.store import append_records
from psap.observability import logger


def records_of(event: Mapping[str, Any]) -> list[AuditRecord]:
    payload = json.loads(gzip.decompress(base64.b64decode(event["awslogs"]["data"])))
    if payload.get("messageType") != "DATA_MESSAGE":
        return []  # CloudWatch's CONTROL_MESSAGE checks that the destination is reachable
    records: list[AuditRecord] = []
    for log_event in payload.get("logEvents", []):
        try:
            records.append(AuditRecord.model_validate_json(str(log_event["message"]).strip()))
        except (ValidationError, KeyError) as error:
            logger.warning(
                "log line is not an audit record; skipped",
                extra={"log_event_id": log_event.get("id"), "error": str(error)[:500]},
            )
    return records


def write_batch(event: Mapping[str, Any], retention_days: int) -> int:
    records = records_of(event)
    append_records(records, retention_days)
    return len(records)
