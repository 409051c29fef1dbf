"""A connector's charts (docs/console.md): the hourly rollup the dispatcher writes beside each
attempt, the admin API's answer read from it with one Query per shard, and the signature
headers each attempt record keeps. Functions run in-process on moto; webhooks go to a real
receiver."""

import uuid
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest

from psap import clock
from psap.config import cad_table
from psap.storage.dynamodb import dynamodb
from psap.webhooks import store
from psap.webhooks.connector_stats import StatsWindow, connector_stats
from psap.webhooks.deliveries import DispatchMessage
from tests.support.admin import AdminApi
from tests.support.cad import TENANT, CadFunctions, drain
from tests.support.clock import Clock
from tests.support.receiver import Answer, Receiver
from tests.support.webhooks import BEARER, add_connector, send_update

STATS = "/connectors/{connectorId}/stats"


def attempt_now(cad: CadFunctions, delivery_id: str) -> None:
    delivery = store.get_delivery(TENANT, delivery_id)
    cad.dispatch([DispatchMessage.of(TENANT, delivery_id, delivery.attempt_count).body()])


def test_the_dispatcher_counts_each_outcome_in_the_connectors_hour(
    cad: CadFunctions, receiver: Receiver, fake_clock: Clock
) -> None:
    # Given a connector whose receiver answers 500, then 200, then 410 Gone
    receiver.script = [Answer(500), Answer(200), Answer(410)]
    connector = add_connector(receiver.url)
    connector_id = connector.connector.connector_id
    retried = send_update(connector, "retried")
    gone = send_update(connector, "gone")
    held = send_update(connector, "held")
    drain("WebhookQueue")
    # When the first delivery fails once and then lands, the second meets 410 (which
    # disables the connector) and the third finds the connector disabled
    attempt_now(cad, retried)
    fake_clock.now = store.get_delivery(TENANT, retried).next_attempt_at or fake_clock.now
    attempt_now(cad, retried)
    attempt_now(cad, gone)
    attempt_now(cad, held)
    # Then the hour holds one of each outcome, and three attempts' latencies
    stats = connector_stats(TENANT, connector_id, window=StatsWindow.DAY, now=fake_clock.now)
    assert (stats.delivered, stats.retrying, stats.dead, stats.held) == (1, 1, 1, 1)
    (hour,) = store.hourly_stats(TENANT, connector_id, hours=1, now=fake_clock.now)
    assert sum(hour.latency_buckets) == 3
    assert stats.hours[-1].delivered == 1
    assert stats.p50_ms is not None


def test_an_attempt_keeps_the_signature_headers_it_sent_and_never_the_bearer(
    cad: CadFunctions, receiver: Receiver, fake_clock: Clock
) -> None:
    # Given a connector with a bearer credential
    receiver.script = [Answer(200)]
    delivery_id = send_update(add_connector(receiver.url), "signed")
    drain("WebhookQueue")
    # When the delivery is attempted
    attempt_now(cad, delivery_id)
    # Then its attempt record holds exactly the signing headers the receiver got
    (attempt,) = store.list_attempts(TENANT, delivery_id)
    sent = receiver.requests[0].headers
    assert attempt.signature_headers is not None
    assert set(attempt.signature_headers) == {
        "X-SVC-Delivery-Id",
        "X-SVC-Timestamp",
        "X-SVC-Signature",
        "X-SVC-Event-Type",
    }
    for name, value in attempt.signature_headers.items():
        assert sent[name] == value
    assert BEARER not in str(attempt.model_dump())


def test_the_api_answers_counts_and_percentiles_from_one_query_per_shard_and_window(
    admin: AdminApi,
) -> None:
    # Given a connector with known attempts: this hour 90 fast (40 ms) and 10 slow (2.5 s),
    # an hour ago one dead, three days ago one delivered
    connector_id = add_connector("http://127.0.0.1:9/hook", tenant=admin.tenant)
    path = {"connectorId": connector_id.connector.connector_id}
    now = clock.utc_now()

    def add(tally: store.AttemptTally, latency_ms: int | None, at: Any, times: int = 1) -> None:
        for _ in range(times):
            store.add_to_stats(
                admin.tenant,
                path["connectorId"],
                delivery_id=f"dlv-{uuid.uuid4().hex}",
                tally=tally,
                latency_ms=latency_ms,
                now=at,
            )

    add(store.AttemptTally.DELIVERED, 40, now, times=90)
    add(store.AttemptTally.RETRYING, 2500, now, times=10)
    add(store.AttemptTally.DEAD, 900, now - timedelta(hours=1))
    add(store.AttemptTally.DELIVERED, 40, now - timedelta(days=3))
    queries: list[int] = []

    def count(parsed: dict[str, Any], **_: Any) -> None:
        queries.append(len(parsed.get("Items", [])))

    dynamodb().meta.events.register("after-call.dynamodb.Query", count)
    # When the charts of the last 24 hours and of the last 7 days are asked for
    day = admin.call("GET", STATS, path=path)
    day_queries = list(queries)
    week = admin.call("GET", STATS, path=path, query={"window": "7d"})
    # Then each window is one Query per shard, reading only the hours that had attempts
    assert len(day_queries) == store.STATS_SHARDS
    assert 2 <= sum(day_queries) <= 2 * store.STATS_SHARDS
    assert len(queries) == 2 * store.STATS_SHARDS
    assert sum(queries) - sum(day_queries) <= 3 * store.STATS_SHARDS
    # And the 24 hours hold this hour's and the last hour's attempts, one point per hour
    assert day.status == 200, day.body
    assert (day.body["delivered"], day.body["retrying"], day.body["dead"]) == (90, 10, 1)
    assert len(day.body["hours"]) == 24
    assert day.body["hours"][-1]["delivered"] == 90
    # ... p50 in the 50 ms bucket, p95 in the 3 s bucket (bucket upper bounds)
    assert day.body["hours"][-1]["p50Ms"] == 50
    assert day.body["hours"][-1]["p95Ms"] == 3000
    assert day.body["hours"][-2]["p95Ms"] == 1000
    assert day.body["hours"][0]["p50Ms"] is None
    # And the 7 days add the attempt of three days ago
    assert week.status == 200, week.body
    assert week.body["delivered"] == 91
    assert len(week.body["hours"]) == 168


@pytest.mark.parametrize("window", ["30d", "24H", "7"])
def test_a_window_other_than_24h_or_7d_is_a_400_error_info(admin: AdminApi, window: str) -> None:
    connector_id = add_connector("http://127.0.0.1:9/hook", tenant=admin.tenant)
    path = {"connectorId": connector_id.connector.connector_id}
    reply = admin.call("GET", STATS, path=path, query={"window": window})
    assert reply.status == 400
    assert set(reply.body) == {"info", "reason"}
    assert "window" in reply.body["info"]


def test_another_tenants_connector_has_no_stats(
    admin: AdminApi, admin_env: tuple[int, int]
) -> None:
    other = add_connector("http://127.0.0.1:9/hook", tenant=admin.tenant)
    path = {"connectorId": other.connector.connector_id}
    reply = admin.call("GET", STATS, path=path, tenant=admin_env[1])
    assert reply.status == 404
    assert set(reply.body) == {"info", "reason"}


def test_a_busy_connectors_hour_is_spread_over_shards_and_an_hour_written_unsharded_is_read(
    cad_aws: None, fake_clock: Clock
) -> None:
    # Given a connector's hour written before the rollup had shards (one key per connector)
    connector_id = "con-busy"
    unsharded = f"T#{TENANT}#CON#{connector_id}#STATS"
    dynamodb().put_item(
        TableName=cad_table(),
        Item={
            "pk": {"S": unsharded},
            "sk": {"S": store.hour_of(fake_clock.now)},
            "delivered": {"N": "5"},
            "l00": {"N": "5"},
        },
    )
    # When 400 more attempts are tallied in that hour (a retry storm's worth of a second)
    for index in range(400):
        store.add_to_stats(
            TENANT,
            connector_id,
            delivery_id=f"dlv-{index:032x}",
            tally=store.AttemptTally.DELIVERED,
            latency_ms=20,
            now=fake_clock.now,
        )
    # Then they are spread over every shard's key, none taking more than half
    per_key = Counter[str]()
    for item in dynamodb().scan(TableName=cad_table())["Items"]:
        if item["pk"]["S"].startswith(unsharded):
            per_key[item["pk"]["S"]] += int(item["delivered"]["N"])
    assert len(per_key) == store.STATS_SHARDS
    assert max(per_key.values()) < 400 / 2
    # And the chart adds them all up, the hour written unsharded included
    (hour,) = store.hourly_stats(TENANT, connector_id, hours=1, now=fake_clock.now)
    assert hour.delivered == 405
    assert hour.latency_buckets[0] == 405
