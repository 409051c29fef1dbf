"""A connector's hourly attempt rollup: what the console's charts read (docs/design.md,
"Connector stats").

One item per connector and hour, pk `T#{t}#CON#{c}#STATS`, sk `YYYY-MM-DDTHH`: an ADD per
attempt to one outcome counter and one latency bucket, so p50/p95 come from the buckets and
no attempt is listed. Items expire STATS_RETENTION after their hour; a 7-day chart is one
Query of at most 168 items.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from psap.clock import format_timestamp
from psap.storage.aws_errors import translated
from psap.storage.dynamodb import dynamodb
from psap.webhooks.store.keys import _key, _table
from psap.webhooks.store.reads import _query_page

STATS_RETENTION = timedelta(days=8)  # a day more than the longest window
# Upper bounds (ms) of the latency buckets; the last bucket is open-ended. Fixed, so hours add.
LATENCY_BOUNDS_MS: tuple[int, ...] = (50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000)
LATENCY_BUCKETS = len(LATENCY_BOUNDS_MS) + 1


class AttemptTally(StrEnum):
    """Which outcome counter a dispatcher's step adds to (attribute names of the item)."""

    DELIVERED = "delivered"
    RETRYING = "retrying"  # the attempt failed and the delivery waits for its next one
    DEAD = "dead"  # the attempt failed and the delivery ended in a dead-letter state
    HELD = "held"  # the connector was disabled: the delivery was held, nothing was sent


@dataclass(frozen=True)
class HourStats:
    hour: str  # `YYYY-MM-DDTHH` (UTC)
    delivered: int
    retrying: int
    dead: int
    held: int
    latency_buckets: tuple[int, ...]  # attempts per LATENCY_BOUNDS_MS bucket


def _stats_pk(tenant_id: int, connector_id: str) -> str:
    return f"T#{tenant_id}#CON#{connector_id}#STATS"


def hour_of(moment: datetime) -> str:
    return format_timestamp(moment)[:13]


def latency_bucket(latency_ms: int) -> int:
    for index, bound in enumerate(LATENCY_BOUNDS_MS):
        if latency_ms <= bound:
            return index
    return len(LATENCY_BOUNDS_MS)


def add_to_stats(
    tenant_id: int,
    connector_id: str,
    *,
    tally: AttemptTally,
    latency_ms: int | None,
    now: datetime,
) -> None:
    """One UpdateItem: +1 to the outcome, and +1 to the latency bucket when an attempt was
    made (a hold sends nothing, so it has no latency)."""
    hour_start = now.replace(minute=0, second=0, microsecond=0)
    adds = ["#t :one"]
    names = {"#t": tally.value}
    if latency_ms is not None:
        adds.append("#b :one")
        names["#b"] = f"l{latency_bucket(latency_ms):02d}"
    with translated("stats update failed"):
        dynamodb().update_item(
            TableName=_table(),
            Key=_key(_stats_pk(tenant_id, connector_id), hour_of(now)),
            UpdateExpression=f"ADD {', '.join(adds)} SET expiresAtEpoch = :ttl",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues={
                ":one": {"N": "1"},
                ":ttl": {"N": str(int((hour_start + STATS_RETENTION).timestamp()))},
            },
        )


def hourly_stats(
    tenant_id: int, connector_id: str, *, hours: int, now: datetime
) -> list[HourStats]:
    """The last `hours` hours up to now's, oldest first, hours without attempts as zeros:
    one Query of at most `hours` items."""
    first = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=hours - 1)
    items, _ = _query_page(
        "pk = :p AND sk >= :first",
        {":p": {"S": _stats_pk(tenant_id, connector_id)}, ":first": {"S": hour_of(first)}},
        limit=hours,
        consistent=False,
    )
    found = {str(item["sk"]): item for item in items}
    answer = []
    for offset in range(hours):
        hour = hour_of(first + timedelta(hours=offset))
        item = found.get(hour, {})
        answer.append(
            HourStats(
                hour=hour,
                delivered=int(item.get("delivered", 0)),
                retrying=int(item.get("retrying", 0)),
                dead=int(item.get("dead", 0)),
                held=int(item.get("held", 0)),
                latency_buckets=tuple(
                    int(item.get(f"l{index:02d}", 0)) for index in range(LATENCY_BUCKETS)
                ),
            )
        )
    return answer


def latency_percentile(buckets: tuple[int, ...], fraction: float) -> int | None:
    """The upper bound (ms) of the bucket holding the `fraction` quantile; None without
    attempts. The open last bucket answers its lower bound (reported as "over")."""
    total = sum(buckets)
    if total == 0:
        return None
    rank = fraction * total
    seen = 0
    for index, count in enumerate(buckets):
        seen += count
        if seen >= rank:
            return LATENCY_BOUNDS_MS[min(index, len(LATENCY_BOUNDS_MS) - 1)]
    return LATENCY_BOUNDS_MS[-1]
