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
from botocore.exceptions import BotoCoreError, ClientError

from psap.errors import StoreUnavailable
from psap.storage.attributes import AttributeValue, Item, from_item

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
    client = botocore.session.get_session().create_client("dynamodb", config=_CONFIG)
    return cast("DynamoDBClient", client)


def transaction_conflict(error: ClientError) -> bool:
    if error.response.get("Error", {}).get("Code") != "TransactionCanceledException":
        return False
    reasons = error.response.get("CancellationReasons", [])
    return any(reason.get("Code") == "TransactionConflict" for reason in reasons)


def cancellation_codes(error: ClientError) -> list[str]:
    """Per-item outcome of a cancelled transaction ('None' for items that were fine)."""
    return [
        str(reason.get("Code", "None")) for reason in error.response.get("CancellationReasons", [])
    ]


def transact_write(
    items: Sequence[Mapping[str, Any]],
    on_cancel: Callable[[list[str]], Exception] | None = None,
    attempts: int = 8,
) -> None:
    """Writes all items or none. Concurrent writers on the same counters make DynamoDB
    cancel one transaction with TransactionConflict; that one is retried with jittered
    backoff. Other cancellations (a failed condition) go to `on_cancel` to become a
    domain error."""
    for attempt in range(attempts):
        try:
            dynamodb().transact_write_items(TransactItems=list(items))  # type: ignore[arg-type]
            return
        except ClientError as error:
            if transaction_conflict(error) and attempt + 1 < attempts:
                time.sleep(random.uniform(0, 0.02 * 2**attempt))  # noqa: S311 - jitter, not crypto
                continue
            if error.response.get("Error", {}).get("Code") == "TransactionCanceledException":
                codes = cancellation_codes(error)
                if on_cancel is not None and "TransactionConflict" not in codes:
                    raise on_cancel(codes) from error
            raise StoreUnavailable(f"transaction failed: {error}") from error
        except BotoCoreError as error:
            raise StoreUnavailable(f"transaction failed: {error}") from error


def batch_get(
    table: str,
    keys: Sequence[Mapping[str, AttributeValue]],
    projection: str | None = None,
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
        try:
            answer = dynamodb().batch_get_item(RequestItems=pending)
        except (ClientError, BotoCoreError) as error:
            raise StoreUnavailable(f"batch read failed: {error}") from error
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
            try:
                answer = dynamodb().batch_write_item(RequestItems=pending)
            except (ClientError, BotoCoreError) as error:
                raise StoreUnavailable(f"batch write failed: {error}") from error
            pending = dict(answer.get("UnprocessedItems") or {})
            if not pending:
                break
            time.sleep(random.uniform(0, 0.02 * 2**attempt))  # noqa: S311 - jitter, not crypto
        if pending:
            raise StoreUnavailable("batch write left items unprocessed")
