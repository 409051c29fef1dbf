"""What a tenant holds of the resource center: its licenses and the items it imported."""

from collections.abc import Sequence
from datetime import datetime

from psap.clock import format_timestamp
from psap.resource_center.store.keys import import_key, license_key, licenses_key, table
from psap.storage.attributes import to_item
from psap.storage.aws_errors import TransactionCancelled, translated
from psap.storage.dynamodb import batch_get, dynamodb, read_item, transact_write


def grant_license(tenant_id: int, license_name: str, now: datetime) -> None:
    """Idempotent: granting a held license again only refreshes its grantedAt."""
    attributes = {"tenantId": tenant_id, "licenseName": license_name}
    transact_write(
        [
            {
                "Put": {
                    "TableName": table(),
                    "Item": {
                        **license_key(tenant_id, license_name),
                        **to_item({**attributes, "grantedAt": format_timestamp(now)}),
                    },
                }
            },
            {
                "Update": {
                    "TableName": table(),
                    "Key": licenses_key(tenant_id),
                    "UpdateExpression": "ADD licenseNames :name SET tenantId = :tenant",
                    "ExpressionAttributeValues": {
                        ":name": {"SS": [license_name]},
                        ":tenant": {"N": str(tenant_id)},
                    },
                }
            },
        ]
    )


def revoke_license(tenant_id: int, license_name: str) -> bool:
    """False when the tenant did not hold the license (then nothing is written)."""
    try:
        transact_write(
            [
                {
                    "Delete": {
                        "TableName": table(),
                        "Key": license_key(tenant_id, license_name),
                        "ConditionExpression": "attribute_exists(pk)",
                    }
                },
                {
                    "Update": {
                        "TableName": table(),
                        "Key": licenses_key(tenant_id),
                        # DynamoDB removes the attribute when its last name goes.
                        "UpdateExpression": "DELETE licenseNames :name",
                        "ExpressionAttributeValues": {":name": {"SS": [license_name]}},
                    }
                },
            ]
        )
    except TransactionCancelled:
        return False
    return True


def tenant_licenses(tenant_id: int) -> frozenset[str]:
    """The license names the tenant holds: one GetItem, whatever the table holds."""
    item = read_item(
        table(),
        licenses_key(tenant_id),
        "resource center license read",
        consistent=False,
        projection="licenseNames",
    )
    return frozenset(str(name) for name in (item or {}).get("licenseNames", ()))


def record_import(tenant_id: int, item_id: int, version: int, *, now: datetime) -> None:
    attributes = {
        "tenantId": tenant_id,
        "itemId": item_id,
        "importedVersion": version,
        "importedAt": format_timestamp(now),
    }
    with translated("resource center import write"):
        dynamodb().put_item(
            TableName=table(), Item={**import_key(tenant_id, item_id), **to_item(attributes)}
        )


def imported_versions(tenant_id: int, item_ids: Sequence[int]) -> dict[int, int]:
    """item id -> the catalog version the tenant imported, for the items it imported."""
    if not item_ids:
        return {}
    items = batch_get(
        table(),
        [import_key(tenant_id, item_id) for item_id in dict.fromkeys(item_ids)],
        projection="itemId, importedVersion",
    )
    return {int(item["itemId"]): int(item["importedVersion"]) for item in items}
