"""A connector's deliveries per hour by outcome and its attempt latency (p50/p95), over the
last 24 hours or 7 days, from the hourly rollup the dispatcher keeps
(psap.webhooks.store.stats): the console's charts and the tenant admin API's answer."""

from datetime import datetime
from enum import StrEnum

from pydantic import Field

from psap.models import WireModel
from psap.webhooks import store


class StatsWindow(StrEnum):
    DAY = "24h"
    WEEK = "7d"

    @property
    def hours(self) -> int:
        return 24 if self is StatsWindow.DAY else 24 * 7


class HourPoint(WireModel):
    hour: str = Field(description="The hour's start, UTC (`YYYY-MM-DDTHH:00:00Z`)")
    delivered: int = Field(description="Attempts that delivered")
    retrying: int = Field(description="Attempts that failed; the delivery will be tried again")
    dead: int = Field(description="Attempts that failed for good (FAILED or STOPPED)")
    held: int = Field(description="Deliveries held because the connector was disabled")
    p50_ms: int | None = Field(description="Median attempt latency (bucket upper bound), ms")
    p95_ms: int | None = Field(description="95th percentile attempt latency (bucket bound), ms")


class ConnectorStats(WireModel):
    connector_id: str
    window: StatsWindow
    latency_bounds_ms: list[int] = Field(
        description="Upper bounds of the latency buckets the percentiles are read from; a "
        "percentile equal to the last bound means that bound or more"
    )
    delivered: int
    retrying: int
    dead: int
    held: int
    p50_ms: int | None = Field(description="Median attempt latency over the window, ms")
    p95_ms: int | None = Field(description="95th percentile attempt latency over the window")
    hours: list[HourPoint] = Field(description="One point per hour, oldest first")


def connector_stats(
    tenant_id: int, connector_id: str, *, window: StatsWindow, now: datetime
) -> ConnectorStats:
    """A GetItem (404 for another tenant's or an unknown connector) and one Query per shard."""
    store.get_connector(tenant_id, connector_id)
    hours = store.hourly_stats(tenant_id, connector_id, hours=window.hours, now=now)
    total = [0] * store.LATENCY_BUCKETS
    points = []
    for hour in hours:
        total = [a + b for a, b in zip(total, hour.latency_buckets, strict=True)]
        points.append(
            HourPoint(
                hour=f"{hour.hour}:00:00Z",
                delivered=hour.delivered,
                retrying=hour.retrying,
                dead=hour.dead,
                held=hour.held,
                p50_ms=store.latency_percentile(hour.latency_buckets, 0.5),
                p95_ms=store.latency_percentile(hour.latency_buckets, 0.95),
            )
        )
    return ConnectorStats(
        connector_id=connector_id,
        window=window,
        latency_bounds_ms=list(store.LATENCY_BOUNDS_MS),
        delivered=sum(h.delivered for h in hours),
        retrying=sum(h.retrying for h in hours),
        dead=sum(h.dead for h in hours),
        held=sum(h.held for h in hours),
        p50_ms=store.latency_percentile(tuple(total), 0.5),
        p95_ms=store.latency_percentile(tuple(total), 0.95),
        hours=points,
    )
