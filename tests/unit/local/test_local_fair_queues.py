"""The embedded AWS's standard queues deliver as SQS fair queues: a tenant whose messages take
the consumers' time waits behind the quiet tenants' messages, never the other way round."""

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from local.moto_fair_queues import NOISY_MINIMUM_IN_FLIGHT, fair_order
from psap.storage.sqs import fairness_group, send_messages, sqs

pytestmark = pytest.mark.usefixtures("aws")


@dataclass(frozen=True)
class Msg:
    group_id: str | None
    name: str


def names(messages: list[Any]) -> list[str]:
    return [message.name for message in messages]


def test_quiet_groups_come_first_and_noisy_ones_by_fewest_in_flight() -> None:
    visible = [Msg("a", "a1"), Msg("b", "b1"), Msg("a", "a2"), Msg("c", "c1"), Msg(None, "x")]
    in_flight = [Msg("a", "")] * 40 + [Msg("b", "")] * 35 + [Msg("c", "")] * 2
    # a and b are noisy by concurrency (>= 30 in flight and > 10 %), c is quiet: c and the
    # message without a group first, then b (fewer in flight), then a, each in its own order.
    assert names(fair_order(visible, in_flight, {})) == ["c1", "x", "b1", "a1", "a2"]


def test_a_processing_time_share_over_a_tenth_is_noisy() -> None:
    visible = [Msg("a", "a1"), Msg("b", "b1")]
    assert names(fair_order(visible, [], {"a": 0.95, "b": 0.05})) == ["b1", "a1"]
    assert names(fair_order(visible, [], {"a": 0.5, "b": 0.5})) == ["a1", "b1"]


def test_few_in_flight_is_not_noisy_by_concurrency() -> None:
    visible = [Msg("a", "a1"), Msg("b", "b1")]
    in_flight = [Msg("a", "")] * (NOISY_MINIMUM_IN_FLIGHT - 1)
    assert names(fair_order(visible, in_flight, {})) == ["a1", "b1"]


def test_a_tenants_message_names_its_tenant_as_its_group() -> None:
    assert fairness_group({"tenantId": 7, "deliveryId": "d"}) == {"MessageGroupId": "tenant-7"}
    assert fairness_group({"reason": "rebuild"}) == {}
    assert fairness_group("text") == {}
    assert fairness_group({"tenantId": True}) == {}


@pytest.fixture
def queue_url() -> Iterator[str]:
    url = sqs().create_queue(QueueName="fairness-probe", Attributes={"VisibilityTimeout": "30"})
    yield url["QueueUrl"]
    sqs().delete_queue(QueueUrl=url["QueueUrl"])


def _receive(queue_url: str) -> list[Any]:
    answer = sqs().receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10)
    return list(answer.get("Messages", []))


def _tenants(messages: list[Any]) -> list[int]:
    return [json.loads(message["Body"])["tenantId"] for message in messages]


def test_a_quiet_tenant_is_not_kept_behind_a_busy_tenants_backlog(queue_url: str) -> None:
    # Given tenant 1's backlog of 200 messages whose processing has taken the consumers' time
    send_messages(queue_url, [{"tenantId": 1, "n": n} for n in range(200)])
    for _ in range(3):
        batch = _receive(queue_url)
        assert set(_tenants(batch)) == {1}
        time.sleep(0.02)
        sqs().delete_message_batch(
            QueueUrl=queue_url,
            Entries=[
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(batch)
            ],
        )
    # When tenant 2 sends two messages after the backlog
    send_messages(queue_url, [{"tenantId": 2, "n": n} for n in range(2)])
    # Then the next receive gives tenant 2's first (arrival order would give 10 of tenant 1's)
    batch = _receive(queue_url)
    assert _tenants(batch)[:2] == [2, 2]
    # And tenant 1's backlog follows, in its own order
    assert _tenants(batch)[2:] == [1] * 8
