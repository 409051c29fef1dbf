"""The tenant admin API's reads of the delivery log."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psap.clock import format_timestamp
from psap.storage.dynamodb import batch_get
from psap.webhooks.models import (
    Attempt,
    Delivery,
)
from psap.webhooks.store.keys import _delivery_key, _delivery_pk, _listing_pk, _table
from psap.webhooks.store.reads import _query_page
from psap.webhooks.store.records import _attempt, _delivery

# ---------------------------------------------------------------- the tenant admin API's reads


@dataclass(frozen=True)
class LogPointer:
    sort_key: str  # `{createdAt}#{deliveryId}`: what a delivery-log cursor carries
    delivery_id: str


def delivery_log_pointers(
    tenant_id: int,
    connector_id: str,
    *,
    limit: int,
    before: str | None,
    since: datetime | None,
) -> tuple[list[LogPointer], bool]:
    """Up to `limit` of a connector's delivery pointers, newest first, created before the
    pointer `before` (exclusive) and at or after `since`: one Query. True when more follow."""
    values: dict[str, Any] = {":p": {"S": _listing_pk(tenant_id, connector_id)}}
    low = format_timestamp(since) if since is not None else None
    if before is not None and low is not None:
        # BETWEEN is inclusive: one more item is read and the `before` pointer itself dropped.
        condition = "pk = :p AND sk BETWEEN :low AND :before"
        values.update({":low": {"S": low}, ":before": {"S": before}})
    elif before is not None:
        condition = "pk = :p AND sk < :before"
        values[":before"] = {"S": before}
    elif low is not None:
        condition = "pk = :p AND sk >= :low"
        values[":low"] = {"S": low}
    else:
        condition = "pk = :p"
    extra = 1 if before is not None and low is not None else 0
    items, more = _query_page(condition, values, limit=limit + extra, newest_first=True)
    pointers = [
        LogPointer(str(item["sk"]), str(item["deliveryId"]))
        for item in items
        if str(item["sk"]) != before
    ]
    if len(pointers) > limit:
        return pointers[:limit], True
    return pointers, more


def deliveries_by_id(tenant_id: int, delivery_ids: list[str]) -> dict[str, Delivery]:
    """The deliveries with these ids (one BatchGetItem per 100); missing ones are left out."""
    if not delivery_ids:
        return {}
    found = batch_get(
        _table(), [_delivery_key(tenant_id, delivery_id) for delivery_id in delivery_ids]
    )
    return {str(item["deliveryId"]): _delivery(item) for item in found}


def recent_attempts(tenant_id: int, delivery_id: str, limit: int) -> list[Attempt]:
    """A delivery's latest `limit` attempts, newest first: one Query."""
    items, _ = _query_page(
        "pk = :p AND begins_with(sk, :a)",
        {":p": {"S": _delivery_pk(tenant_id, delivery_id)}, ":a": {"S": "ATTEMPT#"}},
        limit=limit,
        newest_first=True,
    )
    return [_attempt(item) for item in items]
