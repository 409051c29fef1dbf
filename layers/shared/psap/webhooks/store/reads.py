"""Low-level reads and updates of the CAD table, for the store's modules."""

from collections.abc import Iterator, Mapping
from typing import Any

from psap.storage.attributes import from_item
from psap.storage.aws_errors import ConditionFailed, translated
from psap.storage.dynamodb import dynamodb, read_item
from psap.storage.queries import query_page, query_pages
from psap.webhooks.store.keys import _table

# ---------------------------------------------------------------- low-level reads


def _get(key: Mapping[str, Any], consistent: bool = False) -> dict[str, Any] | None:
    return read_item(_table(), key, "read failed", consistent=consistent)


def _query_page(
    condition: str,
    values: Mapping[str, Any],
    *,
    limit: int,
    newest_first: bool = False,
    consistent: bool = True,
) -> tuple[list[dict[str, Any]], bool]:
    request = {
        "TableName": _table(),
        "KeyConditionExpression": condition,
        "ExpressionAttributeValues": dict(values),
        "Limit": limit,
        "ScanIndexForward": not newest_first,
        "ConsistentRead": consistent,
    }
    answer = query_page(request, "query failed")
    return [from_item(item) for item in answer.get("Items", [])], "LastEvaluatedKey" in answer


def _query_all(
    condition: str, values: Mapping[str, Any], consistent: bool = False
) -> Iterator[dict[str, Any]]:
    request: dict[str, Any] = {
        "TableName": _table(),
        "KeyConditionExpression": condition,
        "ExpressionAttributeValues": dict(values),
        "ConsistentRead": consistent,
    }
    for page in query_pages(request, "query failed"):
        yield from (from_item(item) for item in page)


def _update(
    key: Mapping[str, Any],
    expression: str,
    values: Mapping[str, Any],
    *,
    names: Mapping[str, str] | None = None,
    condition: str | None = None,
    tolerate_condition: bool = False,
) -> None:
    request: dict[str, Any] = {
        "TableName": _table(),
        "Key": dict(key),
        "UpdateExpression": expression,
    }
    if values:
        request["ExpressionAttributeValues"] = dict(values)
    if names:
        request["ExpressionAttributeNames"] = dict(names)
    if condition:
        request["ConditionExpression"] = condition
    try:
        with translated("update failed"):
            dynamodb().update_item(**request)
    except ConditionFailed:
        if not tolerate_condition:
            raise
