"""A connector's hourly attempt rollup: what the console's charts read (docs/design.md,
"Connector stats").

One item per connector, hour and shard, pk `T#{t}#CON#{c}#STATS` (shard 0) or
`T#{t}#CON#{c}#STATS#{n}` (shards 1..STATS_SHARDS-1), sk `YYYY-MM-DDTHH`: an ADD per
attempt to one outcome counter and one latency bucket, so p50/p95 come from the buckets and
no attempt is listed. The shard is the delivery's (CRC32 of its id): a connector whose
receiver fails fast at 200 updates/s makes up to 12 attempts per delivery, 2 400 ADDs/s,
more than one key's 1 000 WCU/s (docs/design.md, "Capacity of the CAD and webhook keys").
Shard 0 is the key of the unsharded rollup, so hours written before the shards are still
read. Items expire STATS_RETENTION after their hour; a 7-day chart is one Query per shard
of at most 168 items each.
"""

import zlib
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from psap.clock import format_timestamp
from psap.storage.aws_errors import translated
from psap.storage.dynamodb import dynamodb
from psap.webhooks.store.keys import _key, _table
from psap.webhooks.store.reads import _query_page

STATS_RETENTION = timedelta(days=8)  # a day more than the longest window
STATS_SHARDS = 4  # 4 x 1 000 WCU/s: 12 attempts per delivery at 250 deliveries/s fit
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


def _stats_pk(tenant_id: int, connector_id: str, shard: int) -> str:
    unsharded = f"T#{tenant_id}#CON#{connector_id}#STATS"
    return unsharded if shard == 0 else f"{unsharded}#{shard}"


def stats_shard(delivery_id: str) -> int:
    return zlib.crc32(delivery_id.encode()) % STATS_SHARDS


def hour_of(moment: datetime) -> str:
    return format_timestamp(moment)[:13]


def latency_bucket(latency_ms: int) -> int:
    for index, bound in enumerate(LATENCY_BOUNDS_MS):
        if latency_ms <= bound:
            return index
    return len(LATENCY_BOUNDS_MS)


def add_to_stats(  # noqa: PLR0913 - keyword-only: which delivery, what, when
    tenant_id: int,
    connector_id: str,
    *,
    delivery_id: str,
    tally: AttemptTally,
    latency_ms: int | None,
    now: datetime,
) -> None:
    """One UpdateItem on the delivery's shard: +1 to the outcome, and +1 to the latency
    bucket when an attempt was made (a hold sends nothing, so it has no latency)."""
    hour_start = now.replace(minute=0, second=0, microsecond=0)
    adds = ["#t :one"]
    names = {"#t": tally.value}
    if latency_ms is not None:
        adds.append("#b :one")
        names["#b"] = f"l{latency_bucket(latency_ms):02d}"
    with translated("stats update failed"):
        dynamodb().update_item(
            TableName=_table(),
            Key=_key(_stats_pk(tenant_id, connector_id, stats_shard(delivery_id)), hour_of(now)),
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
    one Query per shard of at most `hours` items, the shards added up."""
    first = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=hours - 1)
    found: dict[str, Counter[str]] = {}
    for shard in range(STATS_SHARDS):
        items, _ = _query_page(
            "pk = :p AND sk >= :first",
            {
                ":p": {"S": _stats_pk(tenant_id, connector_id, shard)},
                ":first": {"S": hour_of(first)},
            },
            limit=hours,
            consistent=False,
        )
        for item in items:
            counts = found.setdefault(str(item["sk"]), Counter())
            counts.update({name: int(item.get(name, 0)) for name in _COUNTERS})
    answer = []
    for offset in range(hours):
        hour = hour_of(first + timedelta(hours=offset))
        counts = found.get(hour, Counter())
        answer.append(
            HourStats(
                hour=hour,
                delivered=counts["delivered"],
                retrying=counts["retrying"],
                dead=counts["dead"],
                held=counts["held"],
                latency_buckets=tuple(counts[f"l{index:02d}"] for index in range(LATENCY_BUCKETS)),
            )
        )
    return answer


# An hour item's counters: one per outcome, one per latency bucket.
_COUNTERS = (
    *(tally.value for tally in AttemptTally),
    *(f"l{index:02d}" for index in range(LATENCY_BUCKETS)),
)


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
