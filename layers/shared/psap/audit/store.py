"""Audit records in the audit table: append-only, tenant-keyed, expiring after the retention.

Layout (every key begins with the tenant):

  T#{t}#DAY#{yyyy-mm-dd}   / {time}#{requestId}   one record: the record as JSON, plus the
                                                  filterable fields and `expiresAt` (TTL)

A day partition keeps one Query per day of an export's range, in time order, and spreads a
tenant's records over many partitions. There is no update or delete here: records are only
put, and the writer's IAM policy allows nothing else (template.yaml). A key derives from the
request id, so a line delivered twice writes the same record twice, not two records.
"""

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from psap.audit.recording import AuditRecord, audit_line
from psap.clock import format_timestamp
from psap.config import audit_table
from psap.storage.dynamodb import batch_put
from psap.storage.queries import query_pages

_PAGE = 500  # records per Query page: an export holds one page in memory at a time


def _table() -> str:
    """This store's table, from the settings read at cold start (psap.config)."""
    return audit_table()


def day_key(tenant_id: int, day: date) -> str:
    return f"T#{tenant_id}#DAY#{day.isoformat()}"


def record_item(record: AuditRecord, retention_days: int) -> dict[str, Any]:
    expires = record.time + timedelta(days=retention_days)
    return {
        "pk": {"S": day_key(record.tenant_id, record.time.date())},
        "sk": {"S": f"{format_timestamp(record.time)}#{record.request_id}"},
        "record": {"S": audit_line(record)},
        "operation": {"S": record.operation},
        "credentialId": {"S": record.credential_id},
        "status": {"N": str(record.status)},
        "expiresAt": {"N": str(int(expires.timestamp()))},
    }


def append_records(records: Sequence[AuditRecord], retention_days: int) -> None:
    # One item per request id: a batch may carry a line twice (redelivery).
    items = {
        (record.tenant_id, record.request_id, format_timestamp(record.time)): record_item(
            record, retention_days
        )
        for record in records
    }
    batch_put(_table(), list(items.values()))


@dataclass(frozen=True)
class RecordFilter:
    operation: str | None = None
    credential_id: str | None = None
    status: int | None = None


def records_between(
    tenant_id: int, start: datetime, end: datetime, where: RecordFilter
) -> Iterator[list[dict[str, Any]]]:
    """The tenant's records with start <= time < end, a page at a time, in time order."""
    day = start.date()
    while day <= end.date():
        yield from _day_pages(tenant_id, day, start, end, where)
        day += timedelta(days=1)


def _day_pages(
    tenant_id: int,
    day: date,
    start: datetime,
    end: datetime,
    where: RecordFilter,
) -> Iterator[list[dict[str, Any]]]:
    names = {"#record": "record"}
    values: dict[str, Any] = {
        ":pk": {"S": day_key(tenant_id, day)},
        ":low": {"S": format_timestamp(start)},
        # Sort keys are "{time}#{requestId}": the end's own timestamp is excluded.
        ":high": {"S": format_timestamp(end)},
    }
    conditions: list[str] = []
    if where.operation is not None:
        names["#operation"] = "operation"
        values[":operation"] = {"S": where.operation}
        conditions.append("#operation = :operation")
    if where.credential_id is not None:
        names["#credential"] = "credentialId"
        values[":credential"] = {"S": where.credential_id}
        conditions.append("#credential = :credential")
    if where.status is not None:
        names["#status"] = "status"
        values[":status"] = {"N": str(where.status)}
        conditions.append("#status = :status")
    request: dict[str, Any] = {
        "TableName": _table(),
        "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
        "ProjectionExpression": "#record, sk",
        "Limit": _PAGE,
    }
    if conditions:
        request["FilterExpression"] = " AND ".join(conditions)
    for items in query_pages(request, f"audit records of {day}"):
        page = [
            json.loads(item["record"]["S"])
            for item in items
            # BETWEEN includes sort keys that begin with the end's timestamp: not wanted.
            if item["sk"]["S"] < values[":high"]["S"]
        ]
        if page:
            yield page
