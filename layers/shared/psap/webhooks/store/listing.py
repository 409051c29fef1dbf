"""A delivery's attempts, and a connector's deliveries and dead letters, newest first."""

from collections.abc import Iterator
from datetime import datetime

from psap.clock import format_timestamp
from psap.storage.dynamodb import batch_get
from psap.webhooks.models import Attempt, Delivery
from psap.webhooks.store.keys import (
    _dead_pk,
    _delivery_key,
    _delivery_pk,
    _listing_pk,
    _table,
)
from psap.webhooks.store.reads import _query_all, _query_page
from psap.webhooks.store.records import _attempt, _delivery


def list_attempts(tenant_id: int, delivery_id: str) -> list[Attempt]:
    items = _query_all(
        "pk = :p AND begins_with(sk, :a)",
        {":p": {"S": _delivery_pk(tenant_id, delivery_id)}, ":a": {"S": "ATTEMPT#"}},
        consistent=True,
    )
    return [_attempt(item) for item in items]


def list_deliveries(
    tenant_id: int, connector_id: str, limit: int, *, before: str | None = None
) -> tuple[list[Delivery], str | None]:
    """A connector's deliveries, newest first: one keys-only Query and one BatchGetItem."""
    return _page_of(tenant_id, _listing_pk(tenant_id, connector_id), limit, before=before)


def list_dead(
    tenant_id: int, connector_id: str, limit: int, *, before: str | None = None
) -> tuple[list[Delivery], str | None]:
    """A connector's dead-letter deliveries (failed, stopped by 410, expired), newest first."""
    return _page_of(tenant_id, _dead_pk(tenant_id, connector_id), limit, before=before)


def dead_since(tenant_id: int, connector_id: str, since: datetime) -> Iterator[str]:
    """Ids of the connector's dead-letter deliveries that died at or after `since`."""
    for item in _query_all(
        "pk = :p AND sk >= :since",
        {":p": {"S": _dead_pk(tenant_id, connector_id)}, ":since": {"S": format_timestamp(since)}},
        consistent=True,
    ):
        yield str(item["deliveryId"])


def _page_of(
    tenant_id: int, pk: str, limit: int, *, before: str | None
) -> tuple[list[Delivery], str | None]:
    condition = "pk = :p AND sk < :before" if before else "pk = :p"
    values = {":p": {"S": pk}}
    if before:
        values[":before"] = {"S": before}
    pointers, more = _query_page(condition, values, limit=limit, newest_first=True)
    if not pointers:
        return [], None
    found = batch_get(
        _table(), [_delivery_key(tenant_id, str(pointer["deliveryId"])) for pointer in pointers]
    )
    by_id = {item["deliveryId"]: _delivery(item) for item in found}
    deliveries = [by_id[p["deliveryId"]] for p in pointers if p["deliveryId"] in by_id]
    return deliveries, str(pointers[-1]["sk"]) if more else None
