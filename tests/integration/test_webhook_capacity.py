"""The CAD-to-webhook path scales with the tenant, not with one DynamoDB partition
(DESIGN section 4, "Capacity"; docs/design.md, "Capacity of the CAD and webhook keys"):
submissions keyed by their own id, due deliveries in a sharded index by minute that the
scheduler reads by minute, releases and recoveries as resumable jobs, and a TTL on every
delivery record. Given / When / Then; the clock is moved, retry waits are not slept."""

import os
import time
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

import pytest

from psap import clock
from psap.cad.store import SubmissionKey
from psap.config import cad_table
from psap.errors import Conflict, StoreUnavailable
from psap.storage import queries
from psap.storage.dynamodb import dynamodb
from psap.webhooks import dispatcher, jobs, store
from psap.webhooks.deliveries import (
    HELD_RETENTION,
    DispatchMessage,
    PastUpdate,
    hold_backlog,
    replay,
)
from psap.webhooks.dispatcher import enqueue_due
from psap.webhooks.models import ConnectorStatus, DeliveryJobState, DeliveryStatus
from tests.support.cad import TEMPLATE, TENANT, CadFunctions, drain, flat_submission, table_items
from tests.support.clock import Clock
from tests.support.receiver import Answer, Receiver
from tests.support.webhooks import (
    add_connector,
    an_update,
    broadcast_update,
    connector_to_a_gone_receiver,
    set_connector_status,
)


def keys(prefix: str) -> list[str]:
    return [item["pk"]["S"] for item in table_items() if item["pk"]["S"].startswith(prefix)]


# ---------------------------------------------------------------- CAD submissions


def test_submissions_of_one_source_each_have_their_own_partition_and_a_write_once_body(
    cad: CadFunctions,
) -> None:
    # Given three submissions from one CAD source
    for number in range(3):
        status, _ = cad.submit(flat_submission(event_id=f"A-{number}"))
        assert status == 202
    # When the worker processes them (two more state changes each)
    cad.run_worker()
    # Then each submission is its own partition, not one partition per source
    partitions = Counter(keys(f"T#{TENANT}#SUB#"))
    assert len(partitions) == 3
    # And the state changes rewrote a small record, never the body beside it
    items = {
        (item["pk"]["S"], item["sk"]["S"]): item
        for item in table_items()
        if item["pk"]["S"].startswith(f"T#{TENANT}#SUB#")
    }
    for pk in partitions:
        assert "raw" not in items[(pk, "STATE")]
        assert items[(pk, "STATE")]["state"]["S"] == "PROCESSED"
        assert "raw" in items[(pk, "BODY")]
        assert "state" not in items[(pk, "BODY")]
    key = SubmissionKey(TENANT, "urn:cad:riverside", "A-1")
    assert key.partition() in partitions


# ---------------------------------------------------------------- the due index


def test_due_pointers_are_spread_over_minute_shards_not_one_key_per_tenant(
    cad_aws: None, receiver: Receiver, fake_clock: Clock
) -> None:
    # Given an active connector
    add_connector(receiver.url)
    # When one tenant makes 64 deliveries
    for index in range(64):
        broadcast_update(f"seed-{index}")
    # Then their due pointers are under the minute index's shards, none under the tenant
    due = Counter(keys("DUE#"))
    assert sum(due.values()) == 64
    assert keys(f"T#{TENANT}#DUE") == []
    assert len(due) > store.DUE_SHARDS // 2
    assert max(due.values()) < 64 / 4


def test_a_connector_create_writes_only_under_its_tenant(cad_aws: None, receiver: Receiver) -> None:
    # When connectors are made for several tenants
    for tenant in (TENANT, TENANT + 1, TENANT + 2):
        add_connector(receiver.url, tenant)
    # Then every item written begins with its tenant: none goes to a platform-wide key (the
    # tenant directory took every tenant's creates on one partition)
    written = [str(item["pk"]["S"]) for item in table_items()]
    assert written and all(pk.startswith("T#") for pk in written), written


class CountingQueries:
    """The DynamoDB client seen by the Query helper, counting its Query calls."""

    def __init__(self) -> None:
        self.queries = 0

    def __call__(self) -> Any:
        counter = self
        real = dynamodb()

        class Client:
            def query(self, **arguments: Any) -> Any:
                counter.queries += 1
                return real.query(**arguments)

        return Client()


def test_the_scheduler_reads_what_is_due_not_every_tenant(
    cad_aws: None, fake_clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given 300 tenants with connectors (as the tenant directory lists them) and nothing due
    many_tenants_in_the_directory(300)
    enqueue_due(fake_clock.now)  # the first run places its cursor
    counting = CountingQueries()
    monkeypatch.setattr(queries, "dynamodb", counting)
    # When the scheduler runs a minute later
    fake_clock.advance(60)
    enqueue_due(fake_clock.now)
    # Then it read the minutes since its last run, a few shards each: not one per tenant
    assert 0 < counting.queries <= 3 * store.DUE_SHARDS


class CountingReads:
    """Every DynamoDB read request the service's client makes, by operation."""

    READS = frozenset({"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"})

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, model: Any, **_: Any) -> None:
        if model.name in self.READS:
            self.calls.append(model.name)

    def __enter__(self) -> "CountingReads":
        dynamodb().meta.events.register("before-call.dynamodb", self)
        return self

    def __exit__(self, *_: object) -> None:
        dynamodb().meta.events.unregister("before-call.dynamodb", self)


def in_the_directory(tenant: int) -> None:
    """The tenant directory's entry, as connector creates wrote it before the minute index."""
    dynamodb().put_item(
        TableName=cad_table(),
        Item={
            "pk": {"S": store.TENANT_DIRECTORY},
            "sk": {"S": f"T#{tenant:012d}"},
            "tenantId": {"N": str(tenant)},
        },
    )


def many_tenants_in_the_directory(count: int) -> None:
    for tenant in range(1000, 1000 + count):
        in_the_directory(tenant)


def test_the_scheduler_reads_a_few_items_per_due_delivery_however_many_minutes_it_covers(
    cad: CadFunctions, receiver: Receiver, fake_clock: Clock
) -> None:
    # Given 300 tenants, and five minutes of deliveries, every one delivered at once (each
    # filed a pointer in case its message was lost, removed by its attempt)
    many_tenants_in_the_directory(300)
    enqueue_due(fake_clock.now)  # the first run places its cursor
    add_connector(receiver.url)
    for minute in range(5):
        for index in range(16):
            broadcast_update(f"seed-{minute}-{index}")
        cad.run_dispatcher()
        fake_clock.advance(60)
    assert len(receiver.requests) == 5 * 16
    # And ten tenants with one delivery each whose message was lost
    due = []
    for tenant in range(1000, 1010):
        add_connector(receiver.url, tenant=tenant)
        due.append(broadcast_update(f"seed-{tenant}", tenant=tenant))
    drain("WebhookQueue")
    # When the scheduler runs an hour later (every minute since its cursor to cover)
    fake_clock.advance(timedelta(hours=1).total_seconds())
    with CountingReads() as reads:
        enqueued = enqueue_due(fake_clock.now)
    # Then it enqueued the ten, reading at most two items per due delivery: its work
    # follows what is due, not the minutes it covers nor the tenants
    assert enqueued == len(due)
    assert {message["deliveryId"] for message in drain("WebhookQueue")} == set(due)
    assert len(reads.calls) <= 2 * len(due), Counter(reads.calls)


def test_a_minute_with_nothing_due_costs_the_scheduler_one_read_besides_its_cursor(
    cad_aws: None, fake_clock: Clock
) -> None:
    # Given a scheduler that has run, and nothing due anywhere
    many_tenants_in_the_directory(300)
    enqueue_due(fake_clock.now)
    # When it runs a minute later
    fake_clock.advance(60)
    with CountingReads() as reads:
        assert enqueue_due(fake_clock.now) == 0
    # Then it read its cursor and which shards of those minutes have work: no shard at all
    assert len(reads.calls) <= 2, Counter(reads.calls)


def pointers_and_counts() -> tuple[Counter[str], Counter[str]]:
    """Pointers per minute shard, and what each shard's count says."""
    pointers: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    for item in table_items():
        pk = item["pk"]["S"]
        if pk.startswith("DUE#"):
            pointers[pk.removeprefix("DUE#")] += 1
        elif pk.startswith("DUECOUNT#"):
            counts[pk.removeprefix("DUECOUNT#")] = int(item["pointers"]["N"])
    return pointers, counts


def test_each_shard_counts_its_pointers_as_deliveries_are_attempted_refiled_and_replayed(
    cad: CadFunctions, receiver: Receiver, fake_clock: Clock
) -> None:
    # Given twenty deliveries whose first attempt failed (each re-filed for its retry)
    receiver.default = Answer(500)
    add_connector(receiver.url)
    made = [broadcast_update(f"seed-{index}") for index in range(20)]
    cad.run_dispatcher()
    pointers, counts = pointers_and_counts()
    assert sum(pointers.values()) == 20
    assert +counts == pointers
    # When their retry messages are lost and the scheduler re-files them, and five are replayed
    drain("WebhookQueue")
    enqueue_due(fake_clock.now)
    fake_clock.advance((store.LOST_MESSAGE_GRACE + timedelta(minutes=2)).total_seconds())
    assert enqueue_due(fake_clock.now) == 20
    for delivery_id in made[:5]:
        replay(TENANT, delivery_id, fake_clock.now)
    # Then every shard's count is its pointers, no more, no less
    pointers, counts = pointers_and_counts()
    assert sum(pointers.values()) == 20
    assert +counts == pointers
    # And once every delivery went through, every count is back to zero
    receiver.default = Answer(200)
    fake_clock.advance(60)
    cad.run_dispatcher()
    pointers, counts = pointers_and_counts()
    assert (sum(pointers.values()), +counts) == (0, Counter())
    assert len({r.headers["X-SVC-Delivery-Id"] for r in receiver.requests}) == 20


def test_pointers_filed_before_the_minute_markers_existed_are_still_sent(
    cad_aws: None, receiver: Receiver, fake_clock: Clock
) -> None:
    # Given a scheduler whose cursor was saved before the minute markers existed
    add_connector(receiver.url)
    dynamodb().put_item(
        TableName=cad_table(),
        Item={
            "pk": {"S": "SCHEDULER#DUE"},
            "sk": {"S": "CURSOR"},
            "bucket": {"S": store.due_bucket(fake_clock.now)},
            "updatedAt": {"S": clock.format_timestamp(fake_clock.now)},
        },
    )
    # And a delivery whose message was lost, its pointer filed with no marker (as then)
    delivery_id = broadcast_update("seed-unmarked")
    drain("WebhookQueue")
    for item in table_items():
        if item["pk"]["S"].startswith("DUEMINUTES#"):
            dynamodb().delete_item(TableName=cad_table(), Key={"pk": item["pk"], "sk": item["sk"]})
    # When the scheduler runs after the lost-message grace, every minute since
    for _ in range(8):
        fake_clock.advance(60)
        enqueue_due(fake_clock.now)
    # Then the delivery was enqueued once: the minutes that may hold unmarked pointers are
    # read shard by shard
    assert [m["deliveryId"] for m in drain("WebhookQueue")] == [delivery_id]


def test_a_delivery_waiting_under_the_first_designs_per_tenant_key_is_moved_and_sent(
    cad_aws: None, receiver: Receiver, fake_clock: Clock
) -> None:
    # Given a delivery whose next attempt waits under the per-tenant key of the first design
    # (`T#{t}#DUE`, which no scheduler reads any more), with no message to carry it; its
    # connector was made then, so its tenant is in the tenant directory
    add_connector(receiver.url)
    in_the_directory(TENANT)
    delivery_id = broadcast_update("seed-first-design")
    drain("WebhookQueue")
    key = {"pk": {"S": f"T#{TENANT}#DLV#{delivery_id}"}, "sk": {"S": "DELIVERY"}}
    item = dynamodb().get_item(TableName=cad_table(), Key=key, ConsistentRead=True)["Item"]
    dynamodb().delete_item(TableName=cad_table(), Key={"pk": item["duePk"], "sk": item["dueSk"]})
    first_design_sk = f"{item['nextAttemptAt']['S']}#{delivery_id}"
    dynamodb().update_item(
        TableName=cad_table(),
        Key=key,
        UpdateExpression="SET dueSk = :sk REMOVE duePk",
        ExpressionAttributeValues={":sk": {"S": first_design_sk}},
    )
    dynamodb().put_item(
        TableName=cad_table(),
        Item={
            "pk": {"S": f"T#{TENANT}#DUE"},
            "sk": {"S": first_design_sk},
            "deliveryId": {"S": delivery_id},
            "attemptCount": {"N": "0"},
            "enqueued": {"BOOL": False},
        },
    )
    # When the scheduler runs
    sent = enqueue_due(fake_clock.now)
    # Then its pointer was moved into the minute index and its message sent
    assert sent == 1
    assert [m["deliveryId"] for m in drain("WebhookQueue")] == [delivery_id]
    assert keys(f"T#{TENANT}#DUE") == []
    # And it is delivered once, leaving no pointer behind
    assert dispatcher.dispatch(DispatchMessage.of(TENANT, delivery_id, 0)) is (
        dispatcher.DispatchResult.DELIVERED
    )
    assert len(receiver.requests) == 1
    assert keys("DUE#") == []
    # And the move is done: the next run reads its cursor, the markers and the counts of
    # the minute the pointer was moved to, and no tenant's key
    fake_clock.advance(60)
    with CountingReads() as reads:
        enqueue_due(fake_clock.now)
    assert Counter(reads.calls) == Counter({"GetItem": 1, "Query": 1, "BatchGetItem": 1})


def test_a_throttled_shard_does_not_hold_back_the_others_and_is_taken_up_next_run(
    cad_aws: None, receiver: Receiver, fake_clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given deliveries whose messages were lost (due pointers only, past the grace period)
    add_connector(receiver.url)
    delivered = [broadcast_update(f"seed-{index}") for index in range(12)]
    drain("WebhookQueue")
    enqueue_due(fake_clock.now)
    fake_clock.advance((store.LOST_MESSAGE_GRACE + timedelta(minutes=2)).total_seconds())
    shards = {
        store.due_key(TENANT, delivery_id, fake_clock.now)[0].rsplit("#", 1)[1]
        for delivery_id in delivered
    }
    assert len(shards) > 1
    throttled = int(sorted(shards)[0])
    real_page = store.due_page

    def page(bucket: str, shard: int, until: Any, **arguments: Any) -> Any:
        if shard == throttled:
            raise StoreUnavailable("ProvisionedThroughputExceededException")
        return real_page(bucket, shard, until, **arguments)

    monkeypatch.setattr(store, "due_page", page)
    # When the scheduler runs while one shard is throttled
    first = enqueue_due(fake_clock.now)
    first_ids = {message["deliveryId"] for message in drain("WebhookQueue")}
    # Then every other shard's deliveries are enqueued
    assert 0 < first < len(delivered)
    assert len(first_ids) == first
    # And the next run takes up the throttled shard, without sending the others twice
    monkeypatch.setattr(store, "due_page", real_page)
    fake_clock.advance(60)
    second = enqueue_due(fake_clock.now)
    second_ids = {message["deliveryId"] for message in drain("WebhookQueue")}
    assert first + second == len(delivered)
    assert first_ids | second_ids == set(delivered)
    assert not first_ids & second_ids


# ---------------------------------------------------------------- release and recovery jobs


def test_enabling_answers_at_once_and_a_job_releases_the_held_in_bounded_steps(
    cad: CadFunctions, receiver: Receiver, fake_clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jobs, "JOB_STEP", 3)
    # Given seven deliveries held by a disabled connector
    connector = add_connector(receiver.url)
    connector_id = connector.connector.connector_id
    set_connector_status(connector, ConnectorStatus.DISABLED)
    held = []
    for index in range(7):
        held.append(broadcast_update(f"seed-{index}"))
        fake_clock.advance(1)
    # When the connector is enabled
    set_connector_status(connector, ConnectorStatus.ACTIVE)
    # Then the request sent nothing itself: a job is running, with nothing released yet
    assert drain("WebhookQueue") == []
    job = jobs.latest_job(TENANT, connector_id)
    assert job is not None
    assert (job.state, job.released) == (DeliveryJobState.RUNNING, 0)
    # When its first step runs, then it queues one step's worth, oldest first
    (step,) = drain("DeliveryJobQueue")
    jobs.run_step(jobs.JobStep.model_validate(step), fake_clock.now)
    assert [m["deliveryId"] for m in drain("WebhookQueue")] == held[:3]
    job = jobs.latest_job(TENANT, connector_id)
    assert job is not None
    assert (job.state, job.released, job.step) == (DeliveryJobState.RUNNING, 3, 1)
    # When the same step's message comes again (SQS delivers at least once), nothing repeats
    jobs.run_step(jobs.JobStep.model_validate(step), fake_clock.now)
    assert drain("WebhookQueue") == []
    # When the remaining steps run through the worker function
    cad.run_job_steps()
    # Then the job is done, every held delivery released once, and sent in creation order
    job = jobs.latest_job(TENANT, connector_id)
    assert job is not None
    assert (job.state, job.released, job.finished_at) == (DeliveryJobState.DONE, 7, fake_clock.now)
    queued = [m["deliveryId"] for m in drain("WebhookQueue")]
    assert queued == held[3:]
    cad.dispatch([DispatchMessage.of(TENANT, d, 0, connector_id=connector_id).body() for d in held])
    assert [r.headers["X-SVC-Delivery-Id"] for r in receiver.requests] == held


def test_a_release_stops_when_the_connector_is_disabled_again_and_keeps_the_rest_held(
    cad_aws: None, receiver: Receiver, fake_clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jobs, "JOB_STEP", 2)
    connector = add_connector(receiver.url)
    set_connector_status(connector, ConnectorStatus.DISABLED)
    held = [broadcast_update(f"seed-{index}") for index in range(5)]
    set_connector_status(connector, ConnectorStatus.ACTIVE)
    (step,) = drain("DeliveryJobQueue")
    # When the connector is disabled again before the first step runs
    set_connector_status(connector, ConnectorStatus.DISABLED)
    drain("DeliveryJobQueue")  # the disable starts nothing
    stopped = jobs.run_step(jobs.JobStep.model_validate(step), fake_clock.now)
    # Then the job stops, and every delivery is still held
    assert stopped is not None
    job = jobs.latest_job(TENANT, connector.connector.connector_id)
    assert job is not None and job.state is DeliveryJobState.STOPPED
    assert drain("DeliveryJobQueue") == []
    assert {store.get_delivery(TENANT, d).status for d in held} == {DeliveryStatus.HELD}


def test_a_step_reads_its_job_by_key_and_a_step_queued_without_its_start_still_runs(
    cad_aws: None, receiver: Receiver, fake_clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jobs, "JOB_STEP", 2)
    # Given a release of three held deliveries
    connector = add_connector(receiver.url)
    set_connector_status(connector, ConnectorStatus.DISABLED)
    for index in range(3):
        broadcast_update(f"seed-{index}")
    set_connector_status(connector, ConnectorStatus.ACTIVE)
    (first,) = drain("DeliveryJobQueue")
    # When its first step runs
    with CountingReads() as reads:
        jobs.run_step(jobs.JobStep.model_validate(first), fake_clock.now)
    # Then it read its job and its connector by key, one page of the held list, and each
    # delivery it re-armed: not a Query of the connector's jobs
    assert Counter(reads.calls) == Counter({"GetItem": 2 + 2, "Query": 1})
    # And a step whose message was queued before messages named the job's start still runs
    (second,) = drain("DeliveryJobQueue")
    assert "startedAt" in second
    del second["startedAt"]
    done = jobs.run_step(jobs.JobStep.model_validate(second), fake_clock.now)
    assert done is not None
    assert (done.state, done.released) == (DeliveryJobState.DONE, 3)


def test_the_admin_api_recover_answers_with_a_job_and_the_connector_shows_its_progress(
    cad: CadFunctions, receiver: Receiver, fake_clock: Clock
) -> None:
    # Given a delivery that died (410) and the connector enabled again
    connector, connector_id = connector_to_a_gone_receiver(receiver)
    gone = broadcast_update("seed-gone")
    cad.run_dispatcher()
    receiver.default = Answer(200)
    set_connector_status(connector, ConnectorStatus.ACTIVE)
    cad.run_job_steps()
    # When the operator recovers since before it
    job = jobs.start_recover(
        TENANT, connector_id, fake_clock.now - timedelta(hours=1), now=fake_clock.now
    )
    assert job.state is DeliveryJobState.RUNNING
    cad.run_job_steps()
    cad.run_dispatcher()
    # Then it is sent again with its id, and the job shows what it did
    assert receiver.requests[-1].headers["X-SVC-Delivery-Id"] == gone
    done = jobs.latest_job(TENANT, connector_id)
    assert done is not None
    assert (done.job_id, done.state, done.released) == (job.job_id, DeliveryJobState.DONE, 1)


# ---------------------------------------------------------------- retention


def test_deliveries_attempts_and_their_pointers_expire_after_the_documented_retention(
    cad: CadFunctions, receiver: Receiver, fake_clock: Clock
) -> None:
    # Given the CAD table's TTL attribute
    ttl = TEMPLATE.tables["CadTable"].properties["TimeToLiveSpecification"]
    assert ttl == {"AttributeName": "expiresAtEpoch", "Enabled": True}
    # When a delivery is made and attempted
    add_connector(receiver.url)
    delivery_id = broadcast_update("seed-1")
    cad.run_dispatcher()
    # Then the delivery, its attempt and its listing pointer expire after the retention,
    # which is longer than a held delivery is kept (and recover looks back)
    horizon = int((fake_clock.now + store.DELIVERY_RETENTION).timestamp())
    assert store.DELIVERY_RETENTION > HELD_RETENTION
    records = [
        item
        for item in table_items()
        if delivery_id in item["pk"]["S"] or item.get("deliveryId", {}).get("S") == delivery_id
    ]
    kinds = {
        item["sk"]["S"].split("#")[0] if "#" in item["sk"]["S"] else item["sk"]["S"]
        for item in records
    }
    assert {"DELIVERY", "ATTEMPT"} <= kinds
    for item in records:
        assert int(item["expiresAtEpoch"]["N"]) == horizon, item["sk"]
    # And replaying it later keeps it for the retention from then
    fake_clock.advance(timedelta(days=20).total_seconds())
    replay(TENANT, delivery_id, fake_clock.now)
    item = dynamodb().get_item(
        TableName=cad_table(),
        Key={"pk": {"S": f"T#{TENANT}#DLV#{delivery_id}"}, "sk": {"S": "DELIVERY"}},
    )["Item"]
    later = int((fake_clock.now + store.DELIVERY_RETENTION).timestamp())
    assert int(item["expiresAtEpoch"]["N"]) == later


# ---------------------------------------------------------------- the outage, released


# PSAP_HELD_AFTER_OUTAGE=20000 runs the full outage (docs/webhooks.md, "Delivery jobs").
# The default keeps the test within a minute on a shared machine (moto answers in ms); the
# job runs in steps of 40 here, so it still crosses several steps.
HELD_AFTER_OUTAGE = int(os.environ.get("PSAP_HELD_AFTER_OUTAGE", "240"))
OUTAGE_STEP = int(os.environ.get("PSAP_OUTAGE_STEP", "40"))
INCIDENTS = 40


def an_outage(count: int, at: datetime) -> list[PastUpdate]:
    """`count` updates for 40 incidents, 10 ms apart from `at`."""
    return [
        PastUpdate(
            an_update(f"seed-{index}", subject=f"2026-{index % INCIDENTS:06d}"),
            f"seed-{index}",
            at + timedelta(milliseconds=10 * index),
        )
        for index in range(count)
    ]


def test_a_backlog_held_in_bulk_is_the_items_the_service_holds_one_by_one(
    cad_aws: None, receiver: Receiver, fake_clock: Clock
) -> None:
    # Given a disabled connector, and the items its holds wrote for an outage's updates
    connector = add_connector(receiver.url)
    set_connector_status(connector, ConnectorStatus.DISABLED)
    before = {(item["pk"]["S"], item["sk"]["S"]) for item in table_items()}
    outage = an_outage(30, fake_clock.now)
    held_one_by_one = []
    for past in outage:
        fake_clock.now = past.at
        held_one_by_one.append(broadcast_update(past.seed, subject=past.update.subject))
    written = [item for item in table_items() if (item["pk"]["S"], item["sk"]["S"]) not in before]
    for item in written:
        dynamodb().delete_item(TableName=cad_table(), Key={"pk": item["pk"], "sk": item["sk"]})
    # When the same updates are held in bulk
    held_in_bulk = hold_backlog(TENANT, connector.connector.connector_id, outage)
    # Then the same deliveries were written, item for item
    assert held_in_bulk == held_one_by_one
    rewritten = [item for item in table_items() if (item["pk"]["S"], item["sk"]["S"]) not in before]
    assert len(written) == 3 * len(outage)
    assert sorted(rewritten, key=repr) == sorted(written, key=repr)
    # And holding in bulk is refused for an active connector (its updates are sent)
    set_connector_status(connector, ConnectorStatus.ACTIVE)
    with pytest.raises(Conflict):
        hold_backlog(TENANT, connector.connector.connector_id, an_outage(1, fake_clock.now))


def test_deliveries_held_through_an_outage_are_each_delivered_once_in_order_per_incident(
    cad: CadFunctions,
    receiver: Receiver,
    fake_clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
    record_property: Any,
) -> None:
    monkeypatch.setattr(jobs, "JOB_STEP", OUTAGE_STEP)
    # Given a connector disabled through an outage while updates for 40 incidents piled up
    # (held as the service holds them, the items written in bulk: see the test above)
    connector = add_connector(receiver.url)
    set_connector_status(connector, ConnectorStatus.DISABLED)
    began = time.perf_counter()
    outage = an_outage(HELD_AFTER_OUTAGE, fake_clock.now)
    held = hold_backlog(TENANT, connector.connector.connector_id, outage)
    made: dict[str, list[str]] = {}
    for past, delivery_id in zip(outage, held, strict=True):
        made.setdefault(str(past.update.subject), []).append(delivery_id)
    fake_clock.now = outage[-1].at + timedelta(seconds=1)
    phases = {"hold": time.perf_counter() - began}
    # When the connector is enabled
    started = time.perf_counter()
    set_connector_status(connector, ConnectorStatus.ACTIVE)
    enable_seconds = time.perf_counter() - started
    # And the job's steps run, the dispatcher beside them on what each step queued
    dispatching: list[float] = []

    def dispatch_what_was_queued() -> None:
        started = time.perf_counter()
        while cad.run_dispatcher():
            pass
        dispatching.append(time.perf_counter() - started)

    step_seconds = cad.run_job_steps(after_each=dispatch_what_was_queued)
    dispatch_what_was_queued()
    phases["release"] = sum(step_seconds)
    phases["dispatch"] = sum(dispatching)
    record_property("outage_seconds", {"held": HELD_AFTER_OUTAGE, **phases})
    # Then no request came near its timeout: the enable (API: 10 s), each step (60 s)
    assert enable_seconds < 5
    assert max(step_seconds) < 30
    assert len(step_seconds) == HELD_AFTER_OUTAGE // OUTAGE_STEP + 1
    # And every delivery was sent exactly once, in creation order within each incident
    sent = [r.headers["X-SVC-Delivery-Id"] for r in receiver.requests]
    assert len(sent) == HELD_AFTER_OUTAGE
    assert len(set(sent)) == HELD_AFTER_OUTAGE
    position = {delivery_id: index for index, delivery_id in enumerate(sent)}
    for deliveries in made.values():
        assert [position[d] for d in deliveries] == sorted(position[d] for d in deliveries)
    job = jobs.latest_job(TENANT, connector.connector.connector_id)
    assert job is not None
    assert (job.state, job.released) == (DeliveryJobState.DONE, HELD_AFTER_OUTAGE)
