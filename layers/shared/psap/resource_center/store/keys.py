"""The resource-center table's keys: every item's pk / sk, spelled in one place."""

from urllib.parse import quote

from psap.config import resource_center_table


def table() -> str:
    """This store's table, from the settings read at cold start (psap.config)."""
    return resource_center_table()


CATALOG_PK = "CATALOG"
ITEM_PREFIX = "ITEM#"
POINTER_KEY = {"pk": {"S": "INDEX"}, "sk": {"S": "CURRENT"}}


def item_key(item_id: int) -> dict[str, dict[str, str]]:
    return {"pk": {"S": CATALOG_PK}, "sk": {"S": f"{ITEM_PREFIX}{item_id:012d}"}}


def external_id_key(external_id: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"CATALOG#XID#{quote(external_id, safe='')}"}, "sk": {"S": "XID"}}


def tenant_pk(tenant_id: int) -> str:
    return f"T#{tenant_id}#RC"


def license_key(tenant_id: int, license_name: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": tenant_pk(tenant_id)}, "sk": {"S": f"LICENSE#{license_name}"}}


def import_key(tenant_id: int, item_id: int) -> dict[str, dict[str, str]]:
    return {"pk": {"S": tenant_pk(tenant_id)}, "sk": {"S": f"IMPORT#{item_id:012d}"}}


def licenses_key(tenant_id: int) -> dict[str, dict[str, str]]:
    return {"pk": {"S": tenant_pk(tenant_id)}, "sk": {"S": "LICENSES"}}
