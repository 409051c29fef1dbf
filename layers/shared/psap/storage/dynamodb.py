"""The DynamoDB client and the write patterns every store shares.

botocore directly, not boto3: the low-level client is the same object, and skipping boto3's
import of s3transfer keeps cold starts small. AWS_ENDPOINT_URL (the local stack) is honoured
by botocore itself.
"""

import random
import time
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, cast

import botocore.session
from botocore.config import Config

from psap.config import client_options
from psap.errors import StoreUnavailable
from psap.storage.attributes import AttributeValue, Item, from_item
from psap.storage.aws_errors import TransactionCancelled, translated

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

_BATCH_GET_LIMIT = 100
_BATCH_WRITE_LIMIT = 25
_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 4},
    connect_timeout=2,
    read_timeout=5,
)


@cache
def dynamodb() -> "DynamoDBClient":
    """One client per warm container, created on first use (after a test's moto is up)."""
    client = botocore.session.get_session().create_client(
        "dynamodb", config=_CONFIG, **client_options()
    )
    return cast("DynamoDBClient", client)


def transact_write(
    items: Sequence[Mapping[str, Any]],
    on_cancel: Callable[[list[str]], Exception] | None = None,
    attempts: int = 8,
) -> None:
    """Writes all items or none. Concurrent writers on the same counters make DynamoDB
    cancel one transaction with TransactionConflict; that one is retried with jittered
    backoff (and is StoreUnavailable when it lasts). Other cancellations (a failed
    condition) raise TransactionCancelled with each item's reason, or what `on_cancel`
    makes of the reasons."""
    for attempt in range(attempts):
        try:
            with translated("transaction failed"):
                dynamodb().transact_write_items(TransactItems=list(items))  # type: ignore[arg-type]
            return
        except TransactionCancelled as cancelled:
            if "TransactionConflict" not in cancelled.codes:
                if on_cancel is not None:
                    raise on_cancel(cancelled.codes) from cancelled
                raise
            if attempt + 1 == attempts:
                raise StoreUnavailable(str(cancelled)) from cancelled
            time.sleep(random.uniform(0, 0.02 * 2**attempt))  # noqa: S311 - jitter, not crypto


def read_item(
    table: str,
    key: Mapping[str, AttributeValue],
    what: str,
    *,
    consistent: bool = True,
    projection: str | None = None,
    names: Mapping[str, str] | None = None,
) -> Item | None:
    """One GetItem, unmarshalled; None when there is no such item."""
    request: dict[str, Any] = {"TableName": table, "Key": dict(key), "ConsistentRead": consistent}
    if projection:
        request["ProjectionExpression"] = projection
    if names:
        request["ExpressionAttributeNames"] = dict(names)
    with translated(what):
        answer = dynamodb().get_item(**request)
    raw = answer.get("Item")
    return from_item(raw) if raw else None


def batch_get(
    table: str,
    keys: Sequence[Mapping[str, AttributeValue]],
    projection: str | None = None,
    *,
    names: Mapping[str, str] | None = None,
    consistent: bool = False,
) -> list[Item]:
    """Reads items by key, 100 per request (DynamoDB's limit), retrying what DynamoDB leaves
    unprocessed. The order of the result is not the order of `keys`."""
    found: list[Item] = []
    for first in range(0, len(keys), _BATCH_GET_LIMIT):
        request: dict[str, Any] = {"Keys": list(keys[first : first + _BATCH_GET_LIMIT])}
        if consistent:
            request["ConsistentRead"] = True
        if projection:
            request["ProjectionExpression"] = projection
        if names:
            request["ExpressionAttributeNames"] = dict(names)
        found.extend(_batch_get_all(table, request))
    return found


def _batch_get_all(table: str, request: dict[str, Any]) -> list[Item]:
    pending: dict[str, Any] = {table: request}
    found: list[Item] = []
    for attempt in range(8):
        if not pending:
            break
        with translated("batch read failed"):
            answer = dynamodb().batch_get_item(RequestItems=pending)
        found.extend(from_item(item) for item in answer.get("Responses", {}).get(table, []))
        pending = dict(answer.get("UnprocessedKeys") or {})
        if pending:
            time.sleep(random.uniform(0, 0.02 * 2**attempt))  # noqa: S311 - jitter, not crypto
    if pending:
        raise StoreUnavailable("batch read left keys unprocessed")
    return found


def batch_put(table: str, items: Sequence[Mapping[str, AttributeValue]]) -> None:
    """Writes items 25 per request (DynamoDB's limit), retrying unprocessed ones."""
    for first in range(0, len(items), _BATCH_WRITE_LIMIT):
        pending: dict[str, Any] = {
            table: [
                {"PutRequest": {"Item": item}} for item in items[first : first + _BATCH_WRITE_LIMIT]
            ]
        }
        for attempt in range(8):
            with translated("batch write failed"):
                answer = dynamodb().batch_write_item(RequestItems=pending)
            pending = dict(answer.get("UnprocessedItems") or {})
            if not pending:
                break
            time.sleep(random.uniform(0, 0.02 * 2**attempt))  # noqa: S311 - jitter, not crypto
        if pending:
            raise StoreUnavailable("batch write left items unprocessed")
