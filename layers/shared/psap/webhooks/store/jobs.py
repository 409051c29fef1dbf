"""Delivery jobs: a connector's release of held deliveries, or a recovery since a time.

  T#{t}#CON#{c}#JOB  / {startedAt}#{jobId}   a job: kind, state, step, counts

A job runs as steps, one queue message each (psap.webhooks.jobs); the record is its
progress and its guard: a step is recorded only if the record still expects that step,
so a redelivered message cannot count twice or fork the chain.
"""

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from psap.clock import format_timestamp
from psap.errors import NotFound
from psap.storage.attributes import to_item
from psap.storage.aws_errors import ConditionFailed, translated
from psap.storage.dynamodb import dynamodb
from psap.webhooks.models import DeliveryJob, DeliveryJobState
from psap.webhooks.store.keys import _key, _table, expires_at_epoch
from psap.webhooks.store.reads import _get, _query_page


def _jobs_pk(tenant_id: int, connector_id: str) -> str:
    return f"T#{tenant_id}#CON#{connector_id}#JOB"


def _job_sk(started_at: datetime, job_id: str) -> str:
    return f"{format_timestamp(started_at)}#{job_id}"


def _job_key(job: DeliveryJob) -> dict[str, dict[str, str]]:
    return _key(_jobs_pk(job.tenant_id, job.connector_id), _job_sk(job.started_at, job.job_id))


def put_new_job(job: DeliveryJob) -> None:
    item = {
        "pk": _jobs_pk(job.tenant_id, job.connector_id),
        "sk": _job_sk(job.started_at, job.job_id),
        **job.model_dump(mode="json", by_alias=True, exclude_none=True),
        "expiresAtEpoch": expires_at_epoch(job.started_at),
    }
    with translated("delivery job write failed"):
        dynamodb().put_item(
            TableName=_table(), Item=to_item(item), ConditionExpression="attribute_not_exists(pk)"
        )


def get_job(
    tenant_id: int, connector_id: str, job_id: str, *, started_at: datetime | None = None
) -> DeliveryJob:
    """A connector's job by id: one GetItem when its start time is known (a step's message
    names it), else one Query of the connector's few jobs, newest first."""
    if started_at is not None:
        item = _get(_key(_jobs_pk(tenant_id, connector_id), _job_sk(started_at, job_id)), True)
        if item is None:
            raise NotFound(f"Delivery job {job_id} does not exist")
        return _job(item)
    for job in list_jobs(tenant_id, connector_id, limit=100):
        if job.job_id == job_id:
            return job
    raise NotFound(f"Delivery job {job_id} does not exist")


def list_jobs(tenant_id: int, connector_id: str, limit: int) -> list[DeliveryJob]:
    """A connector's jobs, newest first (they expire with the deliveries)."""
    items, _ = _query_page(
        "pk = :p",
        {":p": {"S": _jobs_pk(tenant_id, connector_id)}},
        limit=limit,
        newest_first=True,
    )
    return [_job(item) for item in items]


def record_step(job: DeliveryJob, step: int, now: datetime) -> bool:
    """Writes the job's progress after `step` (the counts in `job`) if the record still
    expects that step; False when another run of the step recorded it first."""
    values: dict[str, Any] = {
        ":expected": step,
        ":next": step + 1,
        ":state": job.state.value,
        ":phase": job.phase.value,
        ":released": job.released,
        ":expired": job.expired,
        ":now": format_timestamp(now),
    }
    sets = (
        "step = :next, #s = :state, phase = :phase, released = :released, expired = :expired, "
        "updatedAt = :now"
    )
    if job.state is not DeliveryJobState.RUNNING:
        sets += ", finishedAt = :now"
    try:
        with translated("delivery job update failed"):
            dynamodb().update_item(
                TableName=_table(),
                Key=_job_key(job),
                UpdateExpression=f"SET {sets}",
                ConditionExpression="step = :expected",
                ExpressionAttributeNames={"#s": "state"},
                ExpressionAttributeValues=to_item(values),
            )
    except ConditionFailed:
        return False
    return True


def _job(item: Mapping[str, Any]) -> DeliveryJob:
    return DeliveryJob.model_validate(
        {name: value for name, value in item.items() if name not in {"pk", "sk", "expiresAtEpoch"}}
    )
