"""The store's table and its keys (the layout is in the package's docstring)."""

import zlib
from datetime import datetime, timedelta
from typing import Any

from psap.clock import format_timestamp
from psap.config import cad_table
from psap.webhooks.models import ConnectorStatus

# Longer than one attempt (10 s) plus its bookkeeping; short, so a delivery whose dispatcher
# died holding it is sent again within a minute (docs/faults.md).
LEASE_SECONDS = 30
TENANT_DIRECTORY = "DIRECTORY#WEBHOOK_TENANTS"
_DELIVERY_SK = "DELIVERY"


def _table() -> str:
    """This store's table, from the settings read at cold start (psap.config)."""
    return cad_table()


def _connectors_pk(tenant_id: int) -> str:
    return f"T#{tenant_id}#CON"


def _delivery_pk(tenant_id: int, delivery_id: str) -> str:
    return f"T#{tenant_id}#DLV#{delivery_id}"


def _delivery_key(tenant_id: int, delivery_id: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": _delivery_pk(tenant_id, delivery_id)}, "sk": {"S": _DELIVERY_SK}}


def _listing_pk(tenant_id: int, connector_id: str) -> str:
    return f"T#{tenant_id}#CON#{connector_id}#DLV"


def _dead_pk(tenant_id: int, connector_id: str) -> str:
    return f"T#{tenant_id}#CON#{connector_id}#DEAD"


def _legacy_due_pk(tenant_id: int) -> str:
    """Where due pointers were kept before the time-bucketed index (one key per tenant):
    a delivery armed before the change still names it, so its pointer is deleted there."""
    return f"T#{tenant_id}#DUE"


DUE_SHARDS = 16  # partitions per minute of the due index (docs/design.md, "Capacity")
# An enqueued delivery this late is presumed to have lost its message: its pointer is filed
# at due time + this, so the scheduler only meets it if no attempt removed it first.
LOST_MESSAGE_GRACE = timedelta(minutes=5)
DELIVERY_RETENTION = timedelta(days=45)  # TTL after a delivery's last change (docs/webhooks.md)


def due_bucket(moment: datetime) -> str:
    """The minute of the due index a moment falls in (UTC, `YYYY-MM-DDTHH:MM`)."""
    return format_timestamp(moment)[:16]


def due_pk(bucket: str, shard: int) -> str:
    return f"DUE#{bucket}#{shard:02d}"


def due_minutes_key(bucket: str) -> dict[str, dict[str, str]]:
    """The marker naming the shards of minute `bucket` that hold pointers: the day's
    markers share a partition, so the scheduler reads a day's worth with one Query."""
    return _key(due_minutes_pk(bucket[:10]), bucket)


def due_minutes_pk(day: str) -> str:
    return f"DUEMINUTES#{day}"


def due_count_key(bucket: str, shard: int) -> dict[str, dict[str, str]]:
    """The count of the pointers filed in one minute's shard, at least as many as are there:
    its own partition, so the writes that keep it never share the pointers' key."""
    return _key(f"DUECOUNT#{bucket}#{shard:02d}", "COUNT")


def due_key(tenant_id: int, delivery_id: str, look_at: datetime) -> tuple[str, str]:
    """The due pointer's key: filed under the minute the scheduler should look at it, in one
    of DUE_SHARDS partitions (by the delivery), sorted by that moment."""
    shard = zlib.crc32(f"{tenant_id}#{delivery_id}".encode()) % DUE_SHARDS
    return (
        due_pk(due_bucket(look_at), shard),
        f"{format_timestamp(look_at)}#{tenant_id}#{delivery_id}",
    )


def expires_at_epoch(now: datetime) -> int:
    """The TTL of a delivery record written now (DynamoDB deletes it after)."""
    return int((now + DELIVERY_RETENTION).timestamp())


def _held_pk(tenant_id: int, connector_id: str) -> str:
    return f"T#{tenant_id}#CON#{connector_id}#HELD"


def _connector_not_active(tenant_id: int, connector_id: str) -> dict[str, Any]:
    """A transaction item: holding is right only while the connector is not active. With
    it, a hold and an enable (which writes the status, then releases) cannot cross."""
    return {
        "ConditionCheck": {
            "TableName": _table(),
            "Key": _key(_connectors_pk(tenant_id), connector_id),
            "ConditionExpression": "#s <> :active",
            "ExpressionAttributeNames": {"#s": "status"},
            "ExpressionAttributeValues": {":active": {"S": ConnectorStatus.ACTIVE.value}},
        }
    }


def _key(pk: str, sk: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": pk}, "sk": {"S": sk}}
