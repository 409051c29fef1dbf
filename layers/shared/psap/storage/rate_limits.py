"""Fixed-window rate limits kept in DynamoDB, so every Lambda container sees the same count.

One counter item per (subject, window): a conditional `ADD used :one` succeeds only while the
count is under the limit, so concurrent callers can never pass more than `limit` times in a
window, whatever the number of containers. The item expires (TTL) a day after its window.
"""

from dataclasses import dataclass
from datetime import datetime

from psap.errors import RateLimited
from psap.storage.aws_errors import ConditionFailed, translated
from psap.storage.dynamodb import dynamodb

_KEEP_AFTER_WINDOW_SECONDS = 24 * 3600


@dataclass(frozen=True)
class RateLimit:
    action: str  # what is limited, in words: "signing secret rotation"
    limit: int  # allowed calls per window
    window_seconds: int

    def describe(self) -> str:
        hours = self.window_seconds / 3600
        return f"{self.limit} per {hours:g} h" if hours >= 1 else f"{self.limit} per window"


def consume(table: str, pk: str, sk_prefix: str, *, rate: RateLimit, now: datetime) -> None:
    """Counts one call against the window `now` falls in; raises RateLimited when it is full.

    The key is the caller's (its table's layout: the tenant first); the window start is
    appended to `sk_prefix`."""
    epoch = int(now.timestamp())
    window_start = epoch - epoch % rate.window_seconds
    window_end = window_start + rate.window_seconds
    try:
        with translated("rate limit update failed"):
            dynamodb().update_item(
                TableName=table,
                Key={"pk": {"S": pk}, "sk": {"S": f"{sk_prefix}#{window_start}"}},
                UpdateExpression="ADD used :one SET expiresAtEpoch = :expires",
                ConditionExpression="attribute_not_exists(used) OR used < :limit",
                ExpressionAttributeValues={
                    ":one": {"N": "1"},
                    ":limit": {"N": str(rate.limit)},
                    ":expires": {"N": str(window_end + _KEEP_AFTER_WINDOW_SECONDS)},
                },
            )
    except ConditionFailed as full:
        retry_after = max(1, window_end - epoch)
        raise RateLimited(
            f"Too many requests: {rate.action} is limited to {rate.describe()}; "
            f"retry in {retry_after} s",
            retry_after,
        ) from full
