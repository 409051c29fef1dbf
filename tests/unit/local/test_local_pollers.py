"""SQS event source mappings against a real moto server and real probe functions."""

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from local.aws import sqs_client
from local.pollers import SqsPoller, create_pollers, failed_message_ids, stop_pollers
from local.runtime import InvokeResult, LambdaRuntime
from local.template import Queue, StackTemplate


def _poller(
    deployed: StackTemplate,
    runtime: LambdaRuntime,
    moto_endpoint: str,
    console: Callable[[str], None],
    function_id: str,
    event_name: str,
) -> SqsPoller:
    function = deployed.functions[function_id]
    (event,) = [event for event in function.sqs_events if event.name == event_name]
    queue = deployed.queues[event.queue_id]
    return SqsPoller(
        function, event, queue, endpoint_url=moto_endpoint, invoke=runtime.invoke, log=console
    )


def _send(sqs: Any, queue: Queue, *bodies: str) -> dict[str, str]:
    ids = {}
    for body in bodies:
        ids[body] = sqs.send_message(
            QueueUrl=queue.url,
            MessageBody=body,
            MessageAttributes={"kind": {"DataType": "String", "StringValue": "probe"}},
        )["MessageId"]
    return ids


def _in_flight(sqs: Any, queue: Queue) -> int:
    """Messages received but not deleted: what waits out the visibility timeout for a retry."""
    attributes = sqs.get_queue_attributes(QueueUrl=queue.url, AttributeNames=["All"])["Attributes"]
    return int(attributes["ApproximateNumberOfMessagesNotVisible"])


def test_only_records_named_in_batch_item_failures_stay_in_the_queue(
    deployed, runtime, moto_endpoint, console
):
    # Given three messages, one of which the function reports as failed
    sqs = sqs_client(moto_endpoint)
    queue = deployed.queues["WorkQueue"]
    _send(sqs, queue, "ok-1", "fail-2", "ok-3")
    poller = _poller(deployed, runtime, moto_endpoint, console, "BatchFunction", "Work")
    # When the poller runs one receive-invoke-delete cycle
    outcome = poller.poll_once()
    # Then the two successes are deleted and the failure is left (in flight) for a retry
    assert (outcome.received, outcome.deleted, outcome.failed) == (3, 2, 1)
    assert _in_flight(sqs, queue) == 1


def test_the_function_receives_a_standard_sqs_event(
    deployed, runtime, moto_endpoint, console, fake_functions
):
    sqs = sqs_client(moto_endpoint)
    queue = deployed.queues["WorkQueue"]
    ids = _send(sqs, queue, "hello")
    fake_functions.behaviours["BatchFunction"] = lambda _event: InvokeResult(
        status="ok", payload=None
    )
    function = deployed.functions["BatchFunction"]
    poller = SqsPoller(
        function,
        function.sqs_events[0],
        queue,
        endpoint_url=moto_endpoint,
        invoke=fake_functions,
        log=console,
    )
    poller.poll_once()
    (event,) = fake_functions.calls_to("BatchFunction")
    (record,) = event["Records"]
    assert record["messageId"] == ids["hello"]
    assert record["body"] == "hello"
    assert record["receiptHandle"]
    assert record["eventSource"] == "aws:sqs"
    assert record["eventSourceARN"] == queue.arn
    assert record["awsRegion"] == "us-east-1"
    assert record["attributes"]["ApproximateReceiveCount"] == "1"
    assert "SentTimestamp" in record["attributes"]
    assert record["messageAttributes"]["kind"] == {
        "stringValue": "probe",
        "stringListValues": [],
        "binaryListValues": [],
        "dataType": "String",
    }
    assert record["md5OfBody"]


def _poll_until_empty(poller: SqsPoller, sqs: Any, queue: Queue, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        poller.poll_once()
        attributes = sqs.get_queue_attributes(QueueUrl=queue.url, AttributeNames=["All"])[
            "Attributes"
        ]
        if (
            attributes["ApproximateNumberOfMessages"] == "0"
            and attributes["ApproximateNumberOfMessagesNotVisible"] == "0"
        ):
            return
    pytest.fail(f"{queue.logical_id} never emptied")


def test_records_failing_max_receive_count_times_move_to_the_dlq(
    deployed, runtime, moto_endpoint, console
):
    # Given a queue with maxReceiveCount 2 and a function that always fails one record
    sqs = sqs_client(moto_endpoint)
    queue = deployed.queues["RetryQueue"]
    dead_letters = deployed.queues["RetryDeadLetterQueue"]
    _send(sqs, queue, "fail-always", "ok")
    poller = _poller(deployed, runtime, moto_endpoint, console, "BatchFunction", "Retry")
    # When the poller keeps polling (visibility 0: a failed record is back at once)
    _poll_until_empty(poller, sqs, queue)
    # Then the successful record was deleted and the failing one redriven to the DLQ
    moved = sqs.receive_message(
        QueueUrl=dead_letters.url, MaxNumberOfMessages=10, AttributeNames=["All"]
    )
    (message,) = moved["Messages"]
    assert message["Body"] == "fail-always"
    assert message["Attributes"]["ApproximateReceiveCount"] == "3"


@pytest.mark.parametrize(
    ("bodies", "left"),
    [
        (["ok-1", "raise"], 2),  # a function error fails the whole batch
        (["ok-1", "invalid"], 2),  # so does an invalid response
        (["ok-1", "unknown-id"], 2),  # and an itemIdentifier not in the batch
        (["ok-1", "ok-2"], 0),
    ],
    ids=["error", "invalid-response", "unknown-identifier", "success"],
)
def test_whole_batch_outcomes_with_report_batch_item_failures(
    deployed, runtime, moto_endpoint, console, bodies, left
):
    sqs = sqs_client(moto_endpoint)
    queue = deployed.queues["WorkQueue"]
    _send(sqs, queue, *bodies)
    outcome = _poller(
        deployed, runtime, moto_endpoint, console, "BatchFunction", "Work"
    ).poll_once()
    assert outcome.failed == left
    assert _in_flight(sqs, queue) == left


def test_without_report_batch_item_failures_success_deletes_everything(
    deployed, runtime, moto_endpoint, console
):
    # Given a mapping without ReportBatchItemFailures and a response naming a failure
    sqs = sqs_client(moto_endpoint)
    queue = deployed.queues["PlainQueue"]
    _send(sqs, queue, "ok-1", "fail-2")
    outcome = _poller(
        deployed, runtime, moto_endpoint, console, "PlainBatchFunction", "Plain"
    ).poll_once()
    # Then the response is ignored: a successful invoke deletes the whole batch
    assert (outcome.deleted, outcome.failed) == (2, 0)
    assert _in_flight(sqs, queue) == 0


def test_without_report_batch_item_failures_an_error_keeps_everything(
    deployed, runtime, moto_endpoint, console
):
    sqs = sqs_client(moto_endpoint)
    queue = deployed.queues["PlainQueue"]
    _send(sqs, queue, "ok-1", "raise")
    outcome = _poller(
        deployed, runtime, moto_endpoint, console, "PlainBatchFunction", "Plain"
    ).poll_once()
    assert (outcome.deleted, outcome.failed) == (0, 2)


def test_batch_size_limits_the_records_per_invoke(deployed, runtime, moto_endpoint, console):
    # Given seven messages and BatchSize 5
    sqs = sqs_client(moto_endpoint)
    _send(sqs, deployed.queues["WorkQueue"], *[f"ok-{n}" for n in range(7)])
    poller = _poller(deployed, runtime, moto_endpoint, console, "BatchFunction", "Work")
    # Then no invoke gets more than five
    first = poller.poll_once()
    second = poller.poll_once()
    assert first.received <= 5
    assert first.received + second.received == 7


def test_pollers_are_created_for_enabled_sources_and_stop_cleanly(
    deployed, runtime, moto_endpoint, console
):
    pollers = create_pollers(deployed, moto_endpoint, runtime.invoke, log=console)
    # The Paused source (Enabled: false) gets no poller
    assert sorted(poller.event.name for poller in pollers) == ["Plain", "Retry", "Work"]
    sqs = sqs_client(moto_endpoint)
    _send(sqs, deployed.queues["WorkQueue"], "ok-threaded")
    for poller in pollers:
        poller.start()
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and "1 deleted" not in console.text():
            time.sleep(0.05)
    finally:
        started = time.monotonic()
        stop_pollers(pollers)
    assert "SQS WorkQueue -> BatchFunction: 1 records, 1 deleted" in console.text()
    # Every poller ends within its last long poll
    assert time.monotonic() - started < 3
    assert not any(poller.running for poller in pollers)


@pytest.mark.parametrize(
    ("result", "failed"),
    [
        (
            InvokeResult(status="ok", payload={"batchItemFailures": [{"itemIdentifier": "b"}]}),
            {"b"},
        ),
        (InvokeResult(status="ok", payload={"batchItemFailures": []}), set()),
        (InvokeResult(status="ok", payload=None), set()),
        (InvokeResult(status="ok", payload={}), set()),
        (
            InvokeResult(status="ok", payload={"batchItemFailures": [{"itemIdentifier": ""}]}),
            {"a", "b"},
        ),
        (InvokeResult(status="ok", payload={"batchItemFailures": [{"id": "b"}]}), {"a", "b"}),
        (InvokeResult(status="ok", payload=["b"]), {"a", "b"}),
        (InvokeResult(status="timeout"), {"a", "b"}),
    ],
)
def test_batch_item_failures_rules(result, failed):
    assert failed_message_ids(result, ["a", "b"], reports_batch_item_failures=True) == failed


def test_batching_window_gathers_messages_sent_while_it_is_open(
    deployed, runtime, moto_endpoint, console
):
    # Given PlainQueue's 1 s batching window and one message waiting
    sqs = sqs_client(moto_endpoint)
    queue = deployed.queues["PlainQueue"]
    _send(sqs, queue, "ok-early")
    poller = _poller(deployed, runtime, moto_endpoint, console, "PlainBatchFunction", "Plain")
    outcomes = []
    collecting = threading.Thread(target=lambda: outcomes.append(poller.poll_once()))
    collecting.start()
    # When a second message arrives while the window is open
    time.sleep(0.3)
    _send(sqs, queue, "ok-late")
    collecting.join()
    # Then both arrive in one invoke
    assert outcomes[0].received == 2
