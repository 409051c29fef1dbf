"""The store's table and its keys (the layout is in the package's docstring)."""

from typing import Any

from psap.config import cad_table
from psap.webhooks.models import ConnectorStatus

LEASE_SECONDS = 60  # longer than one attempt (10 s) plus its bookkeeping
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


def _due_pk(tenant_id: int) -> str:
    return f"T#{tenant_id}#DUE"


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
