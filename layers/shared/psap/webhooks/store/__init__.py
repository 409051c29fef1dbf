"""Connectors, deliveries and attempts in the CAD table.

One module per concern: `keys` (the table and its keys), `connectors`, `deliveries`
(made, leased, attempted, re-armed), `held` (kept while a connector is not active),
`records` (typed records from items), `listing` (attempts, deliveries, dead letters),
`pointers` (filing in the due index, its markers and counts), `due` (the scheduler's
reads of the index), `jobs` (releases and recoveries), `log` (the admin API's reads),
`stats` (hourly rollups), `legacy` (the first design's due pointers, moved), `reads`
(low-level access).
Callers import this package: `from psap.webhooks import store`.

Layout (every key begins with the tenant, except the platform's due index, the scheduler's
cursor and the tenant directory); the ceiling of each pattern is in docs/design.md,
"Capacity of the CAD and webhook keys":

  T#{t}#CON              / {connectorId}              a connector (no secret values)
  T#{t}#DLV#{deliveryId} / DELIVERY                   a delivery, with its body bytes
  T#{t}#DLV#{deliveryId} / ATTEMPT#{n:04d}            each attempt of it
  T#{t}#CON#{c}#DLV      / {createdAt}#{deliveryId}   a connector's deliveries, by time
  T#{t}#CON#{c}#DEAD     / {deadAt}#{deliveryId}      its dead-letter deliveries, by time
  T#{t}#CON#{c}#HELD     / {createdAt}#{deliveryId}   its held deliveries, in creation order
  T#{t}#CON#{c}#JOB      / {startedAt}#{jobId}        its release and recovery jobs
  DUE#{minute}#{shard:02d} / {lookAt}#{t}#{deliveryId} pending deliveries, by the minute the
                                                      scheduler should look at them
  DUEMINUTES#{day}       / {minute}                   which shards of that minute were filed in
  DUECOUNT#{minute}#{shard:02d} / COUNT               how many pointers that shard may hold
  SCHEDULER#DUE          / CURSOR                     the first minute not yet finished
  DIRECTORY#WEBHOOK_TENANTS / T#{t:012d}              tenants with pre-minute-index connectors

A delivery, its pointers and its attempt records change in one transaction, conditioned on
the lease the dispatcher took, so two dispatchers can never both record the same attempt.
`nextAttemptAt` in the delivery is the truth; the due index lets the scheduler find what is
due (SQS delays stop at 15 minutes) by minute, whatever the number of tenants. Deliveries,
attempts, list pointers and jobs expire (`expiresAtEpoch`, DELIVERY_RETENTION after their
last change); due pointers do not (they leave with the attempt).
"""

from psap.webhooks.store.connectors import (
    disable_connector,
    get_connector,
    list_connectors,
    mark_connector_slow,
    put_new_connector,
    replace_connector,
    set_connector_status,
)
from psap.webhooks.store.deliveries import (
    AttemptResult,
    Claim,
    NewDelivery,
    NewHeldDelivery,
    claim,
    create_delivery,
    create_held_in_bulk,
    find_delivery,
    get_delivery,
    rearm,
    record_attempt,
    release,
)
from psap.webhooks.store.due import (
    DueCursor,
    DuePointer,
    Refiled,
    counted_shards,
    due_cursor,
    due_page,
    marked_shards,
    minutes,
    refile,
    save_due_cursor,
)
from psap.webhooks.store.held import HeldDelivery, expire_held, held_deliveries, hold
from psap.webhooks.store.jobs import get_job, list_jobs, put_new_job, record_step
from psap.webhooks.store.keys import (
    DELIVERY_RETENTION,
    DUE_SHARDS,
    LEASE_SECONDS,
    LOST_MESSAGE_GRACE,
    TENANT_DIRECTORY,
    due_bucket,
    due_key,
)
from psap.webhooks.store.legacy import move_legacy_pointers
from psap.webhooks.store.listing import dead_since, list_attempts, list_dead, list_deliveries
from psap.webhooks.store.log import (
    LogPointer,
    deliveries_by_id,
    delivery_log_pointers,
    recent_attempts,
)
from psap.webhooks.store.stats import (
    LATENCY_BOUNDS_MS,
    LATENCY_BUCKETS,
    STATS_SHARDS,
    AttemptTally,
    HourStats,
    add_to_stats,
    hour_of,
    hourly_stats,
    latency_percentile,
)

__all__ = [
    "DELIVERY_RETENTION",
    "DUE_SHARDS",
    "LATENCY_BOUNDS_MS",
    "LATENCY_BUCKETS",
    "LEASE_SECONDS",
    "LOST_MESSAGE_GRACE",
    "STATS_SHARDS",
    "TENANT_DIRECTORY",
    "AttemptResult",
    "AttemptTally",
    "Claim",
    "DueCursor",
    "DuePointer",
    "HeldDelivery",
    "HourStats",
    "LogPointer",
    "NewDelivery",
    "NewHeldDelivery",
    "Refiled",
    "add_to_stats",
    "claim",
    "counted_shards",
    "create_delivery",
    "create_held_in_bulk",
    "dead_since",
    "deliveries_by_id",
    "delivery_log_pointers",
    "disable_connector",
    "due_bucket",
    "due_cursor",
    "due_key",
    "due_page",
    "expire_held",
    "find_delivery",
    "get_connector",
    "get_delivery",
    "get_job",
    "held_deliveries",
    "hold",
    "hour_of",
    "hourly_stats",
    "latency_percentile",
    "list_attempts",
    "list_connectors",
    "list_dead",
    "list_deliveries",
    "list_jobs",
    "mark_connector_slow",
    "marked_shards",
    "minutes",
    "move_legacy_pointers",
    "put_new_connector",
    "put_new_job",
    "rearm",
    "recent_attempts",
    "record_attempt",
    "record_step",
    "refile",
    "release",
    "replace_connector",
    "save_due_cursor",
    "set_connector_status",
]
