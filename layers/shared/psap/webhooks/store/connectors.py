"""Connectors, and the directory of tenants that have them."""

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from psap.clock import format_timestamp, parse_timestamp
from psap.errors import Conflict, NotFound
from psap.storage.attributes import to_item
from psap.storage.dynamodb import transact_write
from psap.webhooks.models import (
    Connector,
    ConnectorStatus,
)
from psap.webhooks.signing import SigningProfile
from psap.webhooks.store.keys import _connectors_pk, _key, _table
from psap.webhooks.store.reads import _get, _query_all, _update

# ---------------------------------------------------------------- connectors


def _connector_item(connector: Connector) -> dict[str, Any]:
    item = {"pk": _connectors_pk(connector.tenant_id), "sk": connector.connector_id}
    item.update(connector.model_dump(mode="json", by_alias=True))
    return to_item(item)


def put_new_connector(connector: Connector) -> None:
    """The connector, under its tenant's key only. The tenant directory (TENANT_DIRECTORY)
    lists the tenants that had connectors before the due index moved to minutes, for the
    move of their legacy pointers; a connector made since has none to move, and writing the
    directory for it would put every tenant's connector creates on one platform-wide key."""
    transact_write(
        [
            {
                "Put": {
                    "TableName": _table(),
                    "Item": _connector_item(connector),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
        ],
        on_cancel=lambda codes: Conflict(f"Connector {connector.connector_id} already exists"),
    )


def replace_connector(connector: Connector, expected_updated_at: str) -> None:
    """Writes a changed connector unless someone else changed it since it was read."""
    transact_write(
        [
            {
                "Put": {
                    "TableName": _table(),
                    "Item": _connector_item(connector),
                    "ConditionExpression": "updatedAt = :seen",
                    "ExpressionAttributeValues": {":seen": {"S": expected_updated_at}},
                }
            }
        ],
        on_cancel=lambda codes: Conflict(
            f"Connector {connector.connector_id} changed meanwhile; try again"
        ),
    )


def get_connector(tenant_id: int, connector_id: str) -> Connector:
    item = _get(_key(_connectors_pk(tenant_id), connector_id), consistent=True)
    if item is None:
        raise NotFound(f"Connector {connector_id} does not exist")
    return _connector(item)


def list_connectors(tenant_id: int) -> list[Connector]:
    return [
        _connector(item)
        for item in _query_all("pk = :p", {":p": {"S": _connectors_pk(tenant_id)}}, consistent=True)
    ]


def disable_connector(tenant_id: int, connector_id: str, reason: str, *, now: datetime) -> None:
    """Disables an active connector for a reason (410 Gone): its updates are held from now."""
    stamp = format_timestamp(now)
    _update(
        _key(_connectors_pk(tenant_id), connector_id),
        "SET #s = :disabled, flaggedAt = :now, flagReason = :why, updatedAt = :now",
        {
            ":disabled": {"S": ConnectorStatus.DISABLED.value},
            ":now": {"S": stamp},
            ":why": {"S": reason},
            ":active": {"S": ConnectorStatus.ACTIVE.value},
        },
        names={"#s": "status"},
        condition="#s = :active",
        tolerate_condition=True,
    )


def set_connector_status(tenant_id: int, connector_id: str, status: ConnectorStatus) -> None:
    """The status alone, nothing released (tests and repairs; operators use update)."""
    _update(
        _key(_connectors_pk(tenant_id), connector_id),
        "SET #s = :status",
        {":status": {"S": status.value}},
        names={"#s": "status"},
    )


def mark_connector_slow(tenant_id: int, connector_id: str, until: datetime | None) -> None:
    """Sends the connector's deliveries through the slow lane until `until` (None: no more)."""
    key = _key(_connectors_pk(tenant_id), connector_id)
    if until is None:
        _update(key, "REMOVE slowUntil", {})
        return
    _update(key, "SET slowUntil = :until", {":until": {"S": format_timestamp(until)}})


def _connector(item: Mapping[str, Any]) -> Connector:
    return Connector(
        connector_id=item["connectorId"],
        tenant_id=int(item["tenantId"]),
        name=item["name"],
        url=item["url"],
        profile=SigningProfile(item["profile"]),
        event_types=list(item["eventTypes"]) if item.get("eventTypes") is not None else None,
        status=ConnectorStatus(item["status"]),
        local_dev=bool(item.get("localDev", False)),
        secret_name=item["secretName"],
        created_at=parse_timestamp(item["createdAt"]),
        updated_at=parse_timestamp(item["updatedAt"]),
        flagged_at=parse_timestamp(item["flaggedAt"]) if item.get("flaggedAt") else None,
        flag_reason=item.get("flagReason"),
        slow_until=parse_timestamp(item["slowUntil"]) if item.get("slowUntil") else None,
    )
