"""DynamoDB Query, one page or every page: the paging loop every store shares."""

from collections.abc import Iterator, Mapping
from typing import Any

from psap.storage.attributes import Item, from_item
from psap.storage.aws_errors import translated
from psap.storage.dynamodb import dynamodb

type RawItem = dict[str, Any]


def query_page(
    request: Mapping[str, Any], what: str, start: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """One Query answer (Items, LastEvaluatedKey...), from `start` when given."""
    arguments = dict(request)
    if start:
        arguments["ExclusiveStartKey"] = dict(start)
    with translated(what):
        answer: dict[str, Any] = dict(dynamodb().query(**arguments))
    return answer


def query_pages(request: Mapping[str, Any], what: str) -> Iterator[list[RawItem]]:
    """Every page of the Query, as DynamoDB returns them (raw attribute values), read as
    the caller goes: a caller that stops early reads no further page."""
    start: dict[str, Any] | None = None
    while True:
        answer = query_page(request, what, start)
        yield list(answer.get("Items", []))
        start = answer.get("LastEvaluatedKey")
        if not start:
            return


def query_all(request: Mapping[str, Any], what: str) -> list[Item]:
    """Every item of the Query, unmarshalled."""
    return [from_item(raw) for page in query_pages(request, what) for raw in page]


def partition_request(table: str, pk: Mapping[str, Any] | str) -> dict[str, Any]:
    """A strongly consistent Query of a whole partition (`pk` as a string or a value)."""
    return {
        "TableName": table,
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": pk} if isinstance(pk, str) else dict(pk)},
        "ConsistentRead": True,
    }
