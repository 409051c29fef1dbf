"""The scheduler (every minute): enqueues the deliveries whose next attempt has come.

A wait of up to 15 minutes rides on an SQS message delay; a longer one lives only in
DynamoDB (`nextAttemptAt`), and so does the safety net for a message that is lost. The due
index files both by the minute the scheduler should look (store/pointers.py); this module
reads it from its cursor to now and sends the dispatch messages.
"""

import time
from dataclasses import replace
from datetime import datetime, timedelta

from aws_lambda_powertools.metrics import MetricUnit

from psap import clock
from psap.config import webhook_queue_url
from psap.observability import logger, metrics
from psap.storage.sqs import send_messages
from psap.webhooks import store
from psap.webhooks.deliveries import DispatchMessage
from psap.webhooks.retry_policy import JITTER, RETRY_AFTER_CAP_SECONDS, RETRY_WAITS_SECONDS

SCHEDULER_PAGE = 100  # due pointers per Query
# Minutes one run reads at most: a scheduler that was down catches up over a few runs.
SCHEDULER_MAX_MINUTES = 120
# Where the very first run starts: pointers are filed at or after their writer's now.
SCHEDULER_FIRST_LOOKBACK = timedelta(minutes=5)
SCHEDULER_BUDGET = 40.0  # seconds of work per run (its Lambda has 60)
_CLOCK_SKEW = timedelta(seconds=30)
# How far ahead of its clock a writer files a pointer (the longest retry wait, jittered,
# plus the lost-message grace), and how long a function that started before a deployment
# may still run (Lambda's longest timeout): a table whose scheduler ran before the minute
# markers may hold unmarked pointers up to this far past the first run that knows them.
UNMARKED_HORIZON = (
    timedelta(seconds=max(*RETRY_WAITS_SECONDS, RETRY_AFTER_CAP_SECONDS) * (1 + JITTER))
    + store.LOST_MESSAGE_GRACE
    + timedelta(minutes=15)
)


def enqueue_due(now: datetime | None = None, budget_seconds: float = SCHEDULER_BUDGET) -> int:
    """Enqueues every delivery the due index files under the minutes that have come (waits
    longer than SQS delays, and messages presumed lost); returns how many.

    Its work is what is due, not the number of tenants nor the minutes it covers: it reads
    the markers of the minutes from its cursor (the first one not finished) to now (one
    Query per day), the counts of the shards they name (one BatchGetItem per 100), then only
    the shards that hold pointers (store/pointers.py). A shard that fails (a throttle) is left
    for the next run and the others go on; the cursor stops at the first minute not
    finished, so nothing is skipped, and a run that stops midway (time budget, crash) is
    taken up by the next. Each pointer is re-filed before its message is sent: running
    twice is harmless (the dispatcher drops a stale message)."""
    now = now or clock.utc_now()
    started = time.monotonic()
    cursor = _legacy_moved(_cursor(now), now, until=started + budget_seconds / 2)
    first = cursor.bucket
    # A minute is finished once every writer's clock is past it (filing uses their clocks).
    complete_until = store.due_bucket(now - _CLOCK_SKEW - timedelta(minutes=1))
    covered = store.minutes(first, store.due_bucket(now), SCHEDULER_MAX_MINUTES)
    marked = store.marked_shards(covered[0], covered[-1]) if covered else {}
    counted = store.counted_shards(
        [(bucket, shard) for bucket in covered for shard in marked.get(bucket, [])]
    )
    sent = 0
    # A run whose clock is behind the cursor's (skew between containers) reads nothing and
    # leaves the cursor where it is.
    unfinished: str | None = first
    last = first
    for bucket in covered:
        if bucket == first:
            unfinished = None
        last = bucket
        drained = True
        if bucket < cursor.marked_from:  # may hold pointers filed unmarked: every shard
            shards: list[int] = list(range(store.DUE_SHARDS))
        else:
            shards = [shard for shard in marked.get(bucket, []) if (bucket, shard) in counted]
        for shard in shards:
            try:
                count, shard_drained = _enqueue_shard(bucket, shard, now)
            except Exception:  # a throttle on one shard: the others go on; the next run retries
                logger.exception("due shard failed", extra={"bucket": bucket, "shard": shard})
                count, shard_drained = 0, False
            sent += count
            drained = drained and shard_drained
        if unfinished is None and (not drained or bucket > complete_until):
            unfinished = bucket
        if time.monotonic() - started > budget_seconds:
            break
    following = store.minutes(last, "9999-12-31T23:59", 2)[-1]
    store.save_due_cursor(
        store.DueCursor(unfinished or following, cursor.marked_from, cursor.legacy_after), now
    )
    metrics.add_metric(name="DueDeliveriesEnqueued", unit=MetricUnit.Count, value=sent)
    return sent


def _cursor(now: datetime) -> store.DueCursor:
    """The saved cursor; on the first run, one that starts a lookback ago. Every pointer
    of a table the scheduler never ran on was filed with its marker; a cursor saved before
    markers existed says pointers up to UNMARKED_HORIZON from now may have none."""
    saved = store.due_cursor()
    if saved is None:
        first = store.due_bucket(now - SCHEDULER_FIRST_LOOKBACK)
        return store.DueCursor(first, marked_from=first)
    if not saved.marked_from:
        return store.DueCursor(saved.bucket, store.due_bucket(now + UNMARKED_HORIZON))
    return saved


def _legacy_moved(cursor: store.DueCursor, now: datetime, *, until: float) -> store.DueCursor:
    """Goes on moving the first design's per-tenant pointers into the minute index (before
    this run reads it), within half the run's budget; a failure is retried next run."""
    if cursor.legacy_after is None:
        return cursor  # done: nothing read
    try:
        after = store.move_legacy_pointers(cursor.legacy_after, now=now, until=until)
    except Exception:
        logger.exception("legacy due pointers not moved", extra={"after": cursor.legacy_after})
        return cursor
    return replace(cursor, legacy_after=after)


def _enqueue_shard(bucket: str, shard: int, now: datetime) -> tuple[int, bool]:
    """Re-files and enqueues one shard's pointers due by now; whether none was left."""
    sent = 0
    drained = True
    after: dict[str, object] | None = None
    while True:
        pointers, after = store.due_page(bucket, shard, now, after=after, limit=SCHEDULER_PAGE)
        messages = []
        for pointer in pointers:
            outcome = store.refile(pointer, now)
            if outcome is store.Refiled.SEND:
                messages.append(
                    DispatchMessage.of(
                        pointer.tenant_id, pointer.delivery_id, pointer.attempt_count
                    ).body()
                )
            elif outcome is store.Refiled.BUSY:
                drained = False
        if messages:
            send_messages(webhook_queue_url(), messages)
            sent += len(messages)
        if after is None:
            return sent, drained
