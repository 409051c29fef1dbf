"""Releasing a connector's held deliveries, and recovering its dead ones, as jobs.

Enabling a connector after an outage may find hundreds of thousands of held deliveries;
no request can send them in its 10 s. So enabling (and the admin API's recover) starts a
job and answers at once; the job runs as steps of at most JOB_STEP deliveries, each one
queue message handled by DeliveryJobWorkerFunction, which queues the next step when it is
done. The lists are their own cursors: re-arming a delivery takes it off the held (or
dead-letter) list, so a step run twice finds only what is left. The job record (store:
`T#{t}#CON#{c}#JOB`) admits each step once and shows the progress (admin API: the
connector's `deliveryJob`). A step that dies is retried by SQS, then goes to the DLQ
(an alarm); a delivery it re-armed but did not enqueue is sent by the scheduler after
store.LOST_MESSAGE_GRACE.
"""

import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from itertools import islice

from psap.config import delivery_job_queue_url
from psap.errors import Conflict, InvalidField, NotFound
from psap.models import WireModel
from psap.observability import logger
from psap.storage.sqs import send_message
from psap.webhooks import store
from psap.webhooks.deliveries import enqueue_in_order, rearm_held
from psap.webhooks.models import (
    Delivery,
    DeliveryJob,
    DeliveryJobKind,
    DeliveryJobPhase,
    DeliveryJobState,
)

# Deliveries re-armed per step: about 3 calls each, a few seconds, far inside the worker's
# timeout; a release of 720,000 held deliveries is 3,600 steps.
JOB_STEP = 200
# A step re-arms this many deliveries at once (their messages still go in creation order):
# about 400 deliveries/s per job, under the 500/s the held list's key takes (docs/design.md).
REARM_PARALLELISM = 8


class JobStep(WireModel):
    """What the delivery job queue carries: run step `step` of this job."""

    tenant_id: int
    connector_id: str
    job_id: str
    step: int
    # The job's start, which with its id is the job record's key: the step reads the record
    # with one GetItem. Absent from steps queued before it was sent (then: one Query).
    started_at: datetime | None = None


def start_release(tenant_id: int, connector_id: str, now: datetime) -> DeliveryJob:
    """Starts sending the connector's held deliveries, oldest first (just enabled)."""
    return _start(tenant_id, connector_id, DeliveryJobKind.RELEASE, since=None, now=now)


def start_recover(
    tenant_id: int, connector_id: str, since: datetime, *, now: datetime
) -> DeliveryJob:
    """Starts sending again the connector's dead-letter deliveries that died at or after
    `since`, then its held ones created since then. The connector must be active."""
    if since > now:
        raise InvalidField("since", "is in the future")
    connector = store.get_connector(tenant_id, connector_id)
    if not connector.active:
        raise Conflict(f"Connector {connector_id} is disabled; enable it first")
    return _start(tenant_id, connector_id, DeliveryJobKind.RECOVER, since=since, now=now)


def _start(
    tenant_id: int,
    connector_id: str,
    kind: DeliveryJobKind,
    *,
    since: datetime | None,
    now: datetime,
) -> DeliveryJob:
    job = DeliveryJob(
        # Leading nanoseconds (fixed-width hex): jobs started in one clock tick still sort
        # in the order they started, so "latest" is the last one.
        job_id=f"job-{time.time_ns():016x}{uuid.uuid4().hex[:16]}",
        tenant_id=tenant_id,
        connector_id=connector_id,
        kind=kind,
        state=DeliveryJobState.RUNNING,
        phase=DeliveryJobPhase.DEAD if kind is DeliveryJobKind.RECOVER else DeliveryJobPhase.HELD,
        since=since,
        started_at=now,
        updated_at=now,
    )
    store.put_new_job(job)
    _queue_step(job, 0)
    return job


def _queue_step(job: DeliveryJob, step: int) -> None:
    message = JobStep(
        tenant_id=job.tenant_id,
        connector_id=job.connector_id,
        job_id=job.job_id,
        step=step,
        started_at=job.started_at,
    )
    send_message(delivery_job_queue_url(), message.model_dump(mode="json", by_alias=True))


def latest_job(tenant_id: int, connector_id: str) -> DeliveryJob | None:
    jobs = store.list_jobs(tenant_id, connector_id, limit=1)
    return jobs[0] if jobs else None


def run_step(message: JobStep, now: datetime) -> DeliveryJob | None:
    """Runs one step of a job and queues the next; None when the message is stale (the job
    is gone, finished, or past this step)."""
    try:
        job = store.get_job(
            message.tenant_id, message.connector_id, message.job_id, started_at=message.started_at
        )
    except NotFound:
        return None
    if job.state is not DeliveryJobState.RUNNING:
        return None
    if job.step == message.step + 1:
        # This step was recorded by a run that died before queuing the next: queue it.
        _queue_step(job, job.step)
        return None
    if job.step != message.step:
        return None
    connector = store.get_connector(job.tenant_id, job.connector_id)
    if not connector.active:
        # Disabled again: what is left stays held; enabling starts a new release.
        _record(job.model_copy(update={"state": DeliveryJobState.STOPPED}), message.step, now)
        return job
    if job.phase is DeliveryJobPhase.DEAD:
        rearmed, expired, phase_done = _dead_step(job, now)
    else:
        rearmed, expired, phase_done = _held_step(job, now)
    enqueue_in_order(job.tenant_id, rearmed)
    state: DeliveryJobState = DeliveryJobState.RUNNING
    phase = job.phase
    if phase_done and phase is DeliveryJobPhase.DEAD:
        phase = DeliveryJobPhase.HELD
    elif phase_done:
        state = DeliveryJobState.DONE
    updated = job.model_copy(
        update={
            "state": state,
            "phase": phase,
            "step": message.step + 1,
            "released": job.released + len(rearmed),
            "expired": job.expired + expired,
            "updated_at": now,
        }
    )
    if _record(updated, message.step, now) and state is DeliveryJobState.RUNNING:
        _queue_step(updated, updated.step)
    logger.info(
        "delivery job step",
        extra={
            "job_id": job.job_id,
            "step": message.step,
            "released": len(rearmed),
            "expired": expired,
            "state": state.value,
        },
    )
    return updated


_pool: list[ThreadPoolExecutor] = []


def _in_parallel[T](rearm: Callable[[T], list[Delivery]], items: list[T]) -> list[Delivery]:
    """Re-arms each item on the step's threads; the result keeps the items' order."""
    if not _pool:
        _pool.append(ThreadPoolExecutor(REARM_PARALLELISM, thread_name_prefix="rearm"))
    return [delivery for rearmed in _pool[0].map(rearm, items) for delivery in rearmed]


def _record(job: DeliveryJob, step: int, now: datetime) -> bool:
    return store.record_step(job, step, now)


def _dead_step(job: DeliveryJob, now: datetime) -> tuple[list[Delivery], int, bool]:
    """Re-arms up to JOB_STEP dead-letter deliveries that died since the job's `since`;
    returns them, none expired, and whether none is left."""
    since = job.since or job.started_at  # a recovery always has one
    found = list(islice(store.dead_since(job.tenant_id, job.connector_id, since), JOB_STEP))

    def rearm(delivery_id: str) -> list[Delivery]:
        try:
            return [store.rearm(job.tenant_id, delivery_id, now)]
        except NotFound:
            return []

    return _in_parallel(rearm, found), 0, len(found) < JOB_STEP


def _held_step(job: DeliveryJob, now: datetime) -> tuple[list[Delivery], int, bool]:
    """Re-arms up to JOB_STEP held deliveries (created since `since`, for a recovery),
    oldest first; returns them, how many expired instead, and whether none is left."""
    held = store.held_deliveries(job.tenant_id, job.connector_id, job.since, limit=JOB_STEP)
    rearmed = _in_parallel(lambda one: rearm_held(job.tenant_id, [one], now), held)
    return rearmed, len(held) - len(rearmed), len(held) < JOB_STEP
