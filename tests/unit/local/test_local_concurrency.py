"""Lambda concurrency in the local runtime: reserved concurrency, the account limit, SQS
mappings that scale up to MaximumConcurrency, throttled batches, idle environments reclaimed."""

import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from local.aws import create_resources, sqs_client
from local.concurrency import (
    ACCOUNT_LIMIT_EXCEEDED,
    DEFAULT_CONCURRENCY_SCALE,
    RESERVED_LIMIT_EXCEEDED,
    ConcurrencyConfigurationError,
    scale_concurrency,
)
from local.gateway import ApiGateway, HttpRequest
from local.pollers import DEFAULT_BATCH_CONCURRENCY, SqsPoller, batch_concurrency
from local.runtime import InvokeResult, LambdaRuntime
from local.template import (
    DEFAULT_TEMPLATE,
    StackTemplate,
    TemplateError,
    load_template,
    load_yaml,
)

CONCURRENCY_TEMPLATE = Path(__file__).parent / "fixtures" / "concurrency.yaml"
ENDPOINT = "http://127.0.0.1:9"


@pytest.fixture
def concurrency_template() -> StackTemplate:
    return load_template(CONCURRENCY_TEMPLATE)


@pytest.fixture
def deployed_concurrency(moto_endpoint: str) -> StackTemplate:
    template = load_template(
        CONCURRENCY_TEMPLATE, stack_name=f"c{uuid.uuid4().hex[:8]}", sqs_endpoint=moto_endpoint
    )
    create_resources(template, moto_endpoint)
    return template


@pytest.fixture
def make_runtime(console) -> Iterator[Callable[..., LambdaRuntime]]:
    started: list[LambdaRuntime] = []

    def make(template: StackTemplate, endpoint: str = ENDPOINT, **options: Any) -> LambdaRuntime:
        lambdas = LambdaRuntime(template, endpoint, log=console, reload_on_change=False, **options)
        started.append(lambdas)
        return lambdas

    yield make
    for lambdas in started:
        lambdas.shutdown()


def _all_at_once(calls: list[Callable[[], InvokeResult]]) -> list[InvokeResult]:
    """Run the calls on threads released together; their results in call order."""
    results: list[InvokeResult | None] = [None] * len(calls)
    barrier = threading.Barrier(len(calls))

    def run(index: int) -> None:
        barrier.wait()
        results[index] = calls[index]()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [result for result in results if result is not None]


class InvokeRecorder:
    """Wraps LambdaRuntime.invoke: how many invokes ran at once, and every result."""

    def __init__(self, invoke: Callable[[str, Any], InvokeResult]) -> None:
        self._invoke = invoke
        self._lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0
        self.results: list[tuple[Any, InvokeResult]] = []

    def __call__(self, function_id: str, event: Any) -> InvokeResult:
        with self._lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            result = self._invoke(function_id, event)
        finally:
            with self._lock:
                self.in_flight -= 1
        with self._lock:
            self.results.append((event, result))
        return result

    def bodies_processed(self) -> list[str]:
        with self._lock:
            return [
                record["body"]
                for event, result in self.results
                if result.ok
                for record in event["Records"]
            ]


def _queue_counts(sqs: Any, url: str) -> tuple[int, int]:
    """(visible, in flight) messages of a queue."""
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    return (
        int(attributes["ApproximateNumberOfMessages"]),
        int(attributes["ApproximateNumberOfMessagesNotVisible"]),
    )


def sqs_mapping(function, queue, endpoint_url, invoke, log, headroom=None) -> SqsPoller:
    """The function's first SQS event source mapping, polling `queue` on the embedded AWS."""
    return SqsPoller(
        function,
        function.sqs_events[0],
        queue,
        endpoint_url=endpoint_url,
        invoke=invoke,
        log=log,
        headroom=headroom,
    )


def _wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


# ---------------------------------------------------------------------------- the template


def test_template_reads_reserved_concurrency_from_a_number_or_a_parameter(tmp_path):
    # Given the reservation as a !Ref to a parameter (default 2) and as a literal number
    template = load_template(CONCURRENCY_TEMPLATE)
    assert template.functions["ReservedSleeper"].reserved_concurrency == 2
    assert template.functions["SingleBatchFunction"].reserved_concurrency == 1
    assert template.functions["SleeperA"].reserved_concurrency is None
    # When the stack's parameter value says otherwise, the parameter's value counts
    overridden = load_template(CONCURRENCY_TEMPLATE, parameter_overrides={"ReservedSlots": "7"})
    assert overridden.functions["ReservedSleeper"].reserved_concurrency == 7


def test_template_reads_each_sqs_mappings_maximum_concurrency(concurrency_template):
    (scaled,) = concurrency_template.functions["ScaledBatchFunction"].sqs_events
    assert scaled.maximum_concurrency == 2


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("SleeperA", "ReservedConcurrentExecutions"), -1, "at least 0"),
        (("SleeperA", "ReservedConcurrentExecutions"), "many", "whole number"),
        (
            ("ScaledBatchFunction", "Events", "Work", "Properties", "ScalingConfig"),
            {"MaximumConcurrency": 1},
            "between 2 and 1000",
        ),
    ],
    ids=["negative-reservation", "not-a-number", "maximum-concurrency-below-2"],
)
def test_template_refuses_concurrency_settings_cloudformation_refuses(
    tmp_path, path, value, message
):
    document = load_yaml(CONCURRENCY_TEMPLATE)
    properties = document["Resources"][path[0]].setdefault("Properties", {})
    for key in path[1:-1]:
        properties = properties[key]
    properties[path[-1]] = value
    changed = tmp_path / "template.yaml"
    changed.write_text(yaml.safe_dump(document))
    with pytest.raises(TemplateError, match=message):
        load_template(changed)


def test_a_mapping_runs_at_most_the_lower_of_maximum_and_reserved_concurrency(
    concurrency_template,
):
    scaled = concurrency_template.functions["ScaledBatchFunction"]
    single = concurrency_template.functions["SingleBatchFunction"]
    sleeper = concurrency_template.functions["SleeperA"]
    # MaximumConcurrency 2, no reservation
    assert batch_concurrency(scaled, scaled.sqs_events[0]) == 2
    # MaximumConcurrency 3 but reserved 1: more batches could only be throttled
    assert batch_concurrency(single, single.sqs_events[0]) == 1
    # Neither: the local default
    unscaled = replace(scaled.sqs_events[0], maximum_concurrency=None)
    assert batch_concurrency(sleeper, unscaled) == DEFAULT_BATCH_CONCURRENCY


def test_the_real_templates_mappings_take_their_scaling_config():
    template = load_template(DEFAULT_TEMPLATE)
    scaled = [
        (function, event)
        for function, event in template.sqs_events()
        if event.maximum_concurrency is not None
    ]
    # The template's queue consumers are capped (docs/design.md: every consumer has a cap)
    assert scaled
    for function, event in scaled:
        assert event.maximum_concurrency is not None
        assert batch_concurrency(function, event) <= event.maximum_concurrency
        if function.reserved_concurrency is not None:
            assert batch_concurrency(function, event) <= function.reserved_concurrency


# ---------------------------------------------------------------------------- the runtime


def test_reserved_concurrency_throttles_exactly_the_invokes_beyond_it(
    concurrency_template, make_runtime
):
    # Given a function with 2 reserved concurrent executions
    lambdas = make_runtime(concurrency_template)
    # When 3 invokes of a second each arrive together
    results = _all_at_once(
        [lambda: lambdas.invoke("ReservedSleeper", {"seconds": 1.0}) for _ in range(3)]
    )
    # Then two run, each in its own environment, and exactly one is throttled as Lambda does
    ran = [result for result in results if result.ok]
    throttled = [result for result in results if result.throttled]
    assert (len(ran), len(throttled)) == (2, 1)
    assert len({result.payload["pid"] for result in ran}) == 2
    (refused,) = throttled
    assert refused.error_type == "TooManyRequestsException"
    assert refused.throttle_reason == RESERVED_LIMIT_EXCEEDED
    # And once they are done the function runs again
    assert lambdas.invoke("ReservedSleeper", {"seconds": 0}).ok


def test_the_account_limit_throttles_unreserved_functions_and_spares_reservations(
    concurrency_template, make_runtime
):
    # Given an account of 6 where 3 are reserved (2 + 1): 3 left for everyone else
    lambdas = make_runtime(concurrency_template, account_concurrency=6)
    assert lambdas.concurrency.unreserved_limit == 3

    def sleeping(function_id: str) -> Callable[[], InvokeResult]:
        return lambda: lambdas.invoke(function_id, {"seconds": 1.0})

    # When four unreserved invokes (of two functions) and two reserved ones arrive together
    results = _all_at_once(
        [
            sleeping("SleeperA"),
            sleeping("SleeperA"),
            sleeping("SleeperB"),
            sleeping("SleeperB"),
            sleeping("ReservedSleeper"),
            sleeping("ReservedSleeper"),
        ]
    )
    # Then exactly one unreserved invoke is throttled by the account limit
    unreserved, reserved = results[:4], results[4:]
    throttled = [result for result in unreserved if result.throttled]
    assert len(throttled) == 1
    assert throttled[0].throttle_reason == ACCOUNT_LIMIT_EXCEEDED
    # And the reserved function's executions were there for it all along
    assert all(result.ok for result in reserved)


def test_reservations_that_leave_too_little_unreserved_are_refused(concurrency_template):
    # Given 3 reserved: an account of 3 would leave nothing for the other functions
    with pytest.raises(ConcurrencyConfigurationError, match="--account-concurrency"):
        LambdaRuntime(concurrency_template, ENDPOINT, account_concurrency=3)


def test_idle_workers_are_reclaimed_and_the_next_invoke_is_a_cold_start(
    concurrency_template, make_runtime
):
    # Given a runtime that reclaims workers idle for half a second
    lambdas = make_runtime(concurrency_template, idle_seconds=0.5)
    first = lambdas.invoke("SleeperA", {"seconds": 0})
    # And a worker that stays warm while it is used within that time
    assert lambdas.invoke("SleeperA", {"seconds": 0}).payload["pid"] == first.payload["pid"]
    assert lambdas.worker_count("SleeperA") == 1
    # When it is left idle
    _wait_for(lambda: lambdas.worker_count("SleeperA") == 0, 5, "the idle worker to go")
    # Then its process is gone and the next invoke starts a new one
    _wait_for(lambda: _process_gone(first.payload["pid"]), 3, "the process to exit")
    assert lambdas.invoke("SleeperA", {"seconds": 0}).payload["pid"] != first.payload["pid"]


def _process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


# ---------------------------------------------------------------------------- SQS mappings


def test_maximum_concurrency_bounds_the_batches_that_run_at_once(
    deployed_concurrency, moto_endpoint, make_runtime, console
):
    # Given a mapping with MaximumConcurrency 2, batches of one message of 0.4 s each
    lambdas = make_runtime(deployed_concurrency, moto_endpoint)
    recorder = InvokeRecorder(lambdas.invoke)
    function = deployed_concurrency.functions["ScaledBatchFunction"]
    queue = deployed_concurrency.queues["ScaledQueue"]
    sqs = sqs_client(moto_endpoint)
    for _ in range(6):
        sqs.send_message(QueueUrl=queue.url, MessageBody="0.4")
    poller = sqs_mapping(function, queue, moto_endpoint, recorder, console, lambdas.has_headroom)
    # When the mapping runs until the queue is empty
    poller.start()
    try:
        _wait_for(lambda: len(recorder.bodies_processed()) == 6, 30, "six batches")
        # And once the queue is empty the mapping is back to one long poll at a time
        _wait_for(lambda: poller.active_batches == 1, 10, "the mapping to scale down")
    finally:
        poller.stop()
    # Then two batches ran at once, never more
    assert recorder.most_in_flight == 2
    assert all(result.ok for _, result in recorder.results)
    assert _queue_counts(sqs, queue.url) == (0, 0)


def test_a_throttled_batch_is_left_in_the_queue_and_processed_later_exactly_once(
    deployed_concurrency, moto_endpoint, make_runtime, console
):
    # Given a function with one reserved execution, taken by another caller for now
    lambdas = make_runtime(deployed_concurrency, moto_endpoint)
    assert lambdas.concurrency.try_acquire("SingleBatchFunction") is None
    recorder = InvokeRecorder(lambdas.invoke)
    function = deployed_concurrency.functions["SingleBatchFunction"]
    queue = deployed_concurrency.queues["ShortVisibilityQueue"]
    dead_letters = deployed_concurrency.queues["ShortVisibilityDeadLetterQueue"]
    sqs = sqs_client(moto_endpoint)
    sqs.send_message(QueueUrl=queue.url, MessageBody="0")
    poller = sqs_mapping(function, queue, moto_endpoint, recorder, console)
    # When a batch is received while the function has no concurrency left
    outcome = poller.poll_once()
    # Then it is throttled: nothing deleted, nothing failed, the message waits out its
    # visibility timeout in flight
    assert outcome.throttled
    assert (outcome.received, outcome.deleted, outcome.failed) == (1, 0, 0)
    assert _queue_counts(sqs, queue.url) == (0, 1)
    assert recorder.bodies_processed() == []
    # When the other caller is done and the message is visible again
    lambdas.concurrency.release("SingleBatchFunction")
    _wait_for(lambda: poller.poll_once().deleted == 1, 15, "the message to be processed")
    # Then it was processed exactly once, on its second receive, and never reached the DLQ
    assert recorder.bodies_processed() == ["0"]
    (last_event, _) = recorder.results[-1]
    assert last_event["Records"][0]["attributes"]["ApproximateReceiveCount"] == "2"
    assert _queue_counts(sqs, queue.url) == (0, 0)
    assert _queue_counts(sqs, dead_letters.url) == (0, 0)


def test_a_mapping_whose_function_has_no_concurrency_left_does_not_receive(
    deployed_concurrency, moto_endpoint, make_runtime, console
):
    # Given a running mapping whose function's only reserved execution is taken
    lambdas = make_runtime(deployed_concurrency, moto_endpoint)
    assert lambdas.concurrency.try_acquire("SingleBatchFunction") is None
    recorder = InvokeRecorder(lambdas.invoke)
    function = deployed_concurrency.functions["SingleBatchFunction"]
    queue = deployed_concurrency.queues["ShortVisibilityQueue"]
    sqs = sqs_client(moto_endpoint)
    poller = sqs_mapping(function, queue, moto_endpoint, recorder, console, lambdas.has_headroom)
    poller.start()
    try:
        sqs.send_message(QueueUrl=queue.url, MessageBody="0")
        time.sleep(1.0)
        # Then the message stays visible in the queue: no receive is spent on a throttle
        assert _queue_counts(sqs, queue.url) == (1, 0)
        assert recorder.results == []
        # When the execution is free again, the message is processed once, on its first receive
        lambdas.concurrency.release("SingleBatchFunction")
        _wait_for(lambda: recorder.bodies_processed() == ["0"], 10, "the message")
    finally:
        poller.stop()
    (event, _) = recorder.results[0]
    assert event["Records"][0]["attributes"]["ApproximateReceiveCount"] == "1"


# ---------------------------------------------------------------------------- the real template


def test_real_template_throttled_authorizer_and_integration_are_500s(tmp_path, console):
    # Given a copy of template.yaml where the partner authorizer and the API docs function
    # have no concurrency at all (ReservedConcurrentExecutions 0, as a throttled function)
    document = load_yaml(DEFAULT_TEMPLATE)
    for function_id in ("PartnerAuthorizerFunction", "ApiDocsFunction"):
        document["Resources"][function_id]["Properties"]["ReservedConcurrentExecutions"] = 0
    copy = tmp_path / "template.yaml"
    copy.write_text(yaml.safe_dump(document))
    # (the plan at the local stack's scale, as psap-local runs it)
    template = scale_concurrency(load_template(copy), DEFAULT_CONCURRENCY_SCALE)
    lambdas = LambdaRuntime(template, ENDPOINT, log=console, reload_on_change=False)
    try:
        gateway = ApiGateway(template, lambdas.invoke, log=console)
        # When a partner request needs its authorizer
        guarded = gateway.handle(
            HttpRequest(
                "GET", "/api/v1/external/knowledge", (("Authorization", "Bearer some-token"),)
            )
        )
        # And an open request needs the throttled integration
        docs = gateway.handle(HttpRequest("GET", "/api/v1/external/openapi.json", ()))
    finally:
        lambdas.shutdown()
    # Then both are the API's 500 ErrorInfo, never a 401/429 or the function's own answer
    assert guarded.status == 500
    assert guarded.header("x-amzn-ErrorType") == "AuthorizerConfigurationException"
    assert b'"reason": "INTERNAL_ERROR"' in guarded.body
    assert docs.status == 500
    assert b'"reason": "INTERNAL_ERROR"' in docs.body
    # And no environment was ever started for them
    assert lambdas.worker_count("PartnerAuthorizerFunction") == 0
    assert lambdas.worker_count("ApiDocsFunction") == 0
