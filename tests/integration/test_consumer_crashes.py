"""A consumer that dies between two of its writes, then gets the same message again, ends with
the records and the answer of a clean run (docs/faults.md).

A crash is a process exit: nothing after the fault point runs, no `except` sees it. Here it is
a BaseException raised at the point, which no consumer catches, so the run stops there as the
process would; the message is then delivered again, as SQS does after the visibility timeout.
"""

import json
from collections.abc import Iterator
from typing import Any

import pytest

from psap import clock, faults
from psap.webhooks import dispatcher, store
from psap.webhooks import store as webhook_store
from psap.webhooks.catalogue import ConnectorTest, UpdateKind, WebhookUpdate
from psap.webhooks.deliveries import emit_update
from psap.webhooks.models import DeliveryStatus
from tests.support.cad import TEMPLATE, TENANT, CadFunctions, delayed, drain, flat_submission
from tests.support.clock import Clock
from tests.support.receiver import Receiver
from tests.support.webhooks import add_connector

# The most a crashed or timed-out invocation may delay an update (docs/faults.md).
MAX_UPDATE_DELAY_SECONDS = 60
# The consumers an update passes through, with their queues.
UPDATE_PATH = [
    ("CadWorkerFunction", "CadIntakeQueue"),
    ("WebhookDispatcherFunction", "WebhookQueue"),
    ("WebhookDispatcherFunction", "WebhookSlowQueue"),
]
UNUSED_URL = "http://127.0.0.1:9/never-called"


class Crash(BaseException):
    """The process exits at a fault point."""


@pytest.fixture
def crash_once() -> Iterator[set[str]]:
    """The names of the fault points to crash at, each on its first pass only."""
    armed: set[str] = set()

    def hook(name: str) -> None:
        if name in armed:
            armed.discard(name)
            raise Crash(name)

    faults.install(hook)
    yield armed
    faults.install(None)


def worker_event(cad: CadFunctions, body: str, receives: int) -> dict[str, Any]:
    event = cad.load_event("cad_worker")
    event["Records"][0]["body"] = body
    event["Records"][0]["attributes"]["ApproximateReceiveCount"] = str(receives)
    return event


def run_until_done(cad: CadFunctions, body: str) -> None:
    """Deliver the message until a run ends (a crash ends the run; SQS delivers it again)."""
    for receives in range(1, 5):
        try:
            assert cad.worker(worker_event(cad, body, receives), cad.context) == {
                "batchItemFailures": []
            }
            return
        except Crash:
            continue
    raise AssertionError("the worker never finished")


def accepted_updates() -> list[dict[str, Any]]:
    messages = drain("WebhookQueue")
    ids = {message["deliveryId"] for message in messages}
    return [json.loads(webhook_store.get_delivery(TENANT, i).body) for i in sorted(ids)]


CAD_POINTS = [
    "cad.before_incident_write",
    "cad.after_incident_write",
    "cad.after_outcome_recorded",
]


@pytest.mark.parametrize("point", CAD_POINTS)
def test_a_cad_worker_crash_at_any_point_gives_the_clean_runs_answer(
    cad: CadFunctions, crash_once: set[str], point: str
) -> None:
    # Given a connector, and a first submission that creates its incident
    add_connector(UNUSED_URL)
    cad.submit(flat_submission())
    (message,) = drain("CadIntakeQueue")
    # When the worker dies at the fault point and the message comes back
    crash_once.add(point)
    run_until_done(cad, json.dumps(message))
    # Then the CAD is told CREATED, once, as a clean run would have told it
    assert not crash_once, f"{point} was never reached"
    (update,) = accepted_updates()
    assert update["type"] == "incident.accepted"
    assert update["data"]["outcome"] == "CREATED"


def test_a_crash_after_an_update_is_written_still_answers_updated(
    cad: CadFunctions, crash_once: set[str]
) -> None:
    add_connector(UNUSED_URL)
    cad.submit(flat_submission())
    cad.run_worker()
    drain("WebhookQueue")
    cad.submit(
        flat_submission(event_id="A-2", event_type="incident.updated", time="2026-11-23T02:40:00Z")
    )
    (message,) = drain("CadIntakeQueue")
    crash_once.add("cad.after_incident_write")
    run_until_done(cad, json.dumps(message))
    (update,) = accepted_updates()
    assert update["data"]["outcome"] == "UPDATED"


def test_a_crash_after_the_write_of_a_stale_update_still_answers_stale(
    cad: CadFunctions, crash_once: set[str]
) -> None:
    add_connector(UNUSED_URL)
    cad.submit(flat_submission(event_id="A-3", time="2026-11-23T03:00:00Z"))
    cad.run_worker()
    drain("WebhookQueue")
    cad.submit(flat_submission(event_id="A-2", time="2026-11-23T02:50:00Z"))
    (message,) = drain("CadIntakeQueue")
    crash_once.add("cad.after_incident_write")
    run_until_done(cad, json.dumps(message))
    (update,) = accepted_updates()
    assert update["data"]["outcome"] == "STALE_IGNORED"


# ---------------------------------------------------------------- the webhook dispatcher


def send_update(connector_url: str) -> str:
    connector = add_connector(connector_url)
    (delivery_id,) = emit_update(
        TENANT,
        WebhookUpdate(
            UpdateKind.CONNECTOR_TEST,
            ConnectorTest(connector_id=connector.connector.connector_id, message="hello"),
        ),
        seed="seed-1",
        now=clock.utc_now(),
        only_connector=connector.connector,
    )
    return delivery_id


def test_the_update_path_redelivers_a_crashed_batch_within_a_minute() -> None:
    # Lambda requires a visibility timeout at least the function's timeout; past it, the
    # messages of a crashed or timed-out invocation are received again.
    for function_id, queue_id in UPDATE_PATH:
        timeout = TEMPLATE.functions[function_id].timeout
        visibility = TEMPLATE.queues[queue_id].visibility_timeout
        assert timeout <= visibility <= MAX_UPDATE_DELAY_SECONDS, (function_id, queue_id)


@pytest.mark.parametrize("claimed_into_batch", [0, 40])
def test_a_dispatcher_crash_after_its_claim_is_sent_again_within_a_minute(
    cad: CadFunctions,
    crash_once: set[str],
    receiver: Receiver,
    fake_clock: Clock,
    claimed_into_batch: int,
) -> None:
    # Given a delivery whose dispatcher died holding its lease, taken `claimed_into_batch`
    # seconds after the batch was received
    delivery_id = send_update(receiver.url)
    (message,) = drain("WebhookQueue")
    crash_once.add("webhook.after_claim")
    with pytest.raises(Crash):
        cad.dispatch([message])
    crashed_at = fake_clock.now
    # When SQS gives the message back after the visibility timeout (counted from the receive)
    fake_clock.advance(TEMPLATE.queues["WebhookQueue"].visibility_timeout - claimed_into_batch)
    assert cad.dispatch([message]) == {"batchItemFailures": []}
    # Then the delivery is sent then, or, while the dead dispatcher's lease lasts, a message
    # is on its way for when it ends, rather than waiting for the scheduler's lost-message
    # grace (five minutes)
    while store.get_delivery(TENANT, delivery_id).status is not DeliveryStatus.DELIVERED:
        assert delayed("WebhookQueue") >= 1  # one per look; the clock is the test's
        fake_clock.advance(dispatcher.BUSY_RECHECK_SECONDS)
        assert (fake_clock.now - crashed_at).total_seconds() <= MAX_UPDATE_DELAY_SECONDS
        assert cad.dispatch([message]) == {"batchItemFailures": []}
    assert store.get_delivery(TENANT, delivery_id).status is DeliveryStatus.DELIVERED
    assert (fake_clock.now - crashed_at).total_seconds() <= MAX_UPDATE_DELAY_SECONDS
    assert len(receiver.requests) == 1
