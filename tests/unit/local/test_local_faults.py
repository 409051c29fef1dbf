"""The local fault injector: a fault file's rules, checked against the template and the code,
acted on inside real worker processes (local/faults.py, local/fault_worker.py)."""

import dataclasses
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local.fault_worker import fires
from local.faults import (
    FaultPlan,
    FaultPlanError,
    fault_plan,
    known_fault_points,
    load_fault_plan,
    scale_timeouts,
)
from local.runtime import InvokeResult, LambdaRuntime
from local.template import StackTemplate
from psap import faults

ENDPOINT = "http://127.0.0.1:9"
POINT = "cad.after_incident_write"


def plan(template: StackTemplate, tmp_path: Path, *rules: dict[str, Any]) -> FaultPlan:
    return fault_plan({"seed": 7, "rules": list(rules)}, template, tmp_path / "state")


@pytest.fixture
def faulty(fixture_template: StackTemplate, tmp_path: Path, console: Any) -> Iterator[Any]:
    """A runtime whose workers run the given rules."""
    runtimes: list[LambdaRuntime] = []

    def start(*rules: dict[str, Any], template: StackTemplate = fixture_template) -> LambdaRuntime:
        chosen = plan(template, tmp_path, *rules)
        runtime = LambdaRuntime(
            chosen.scaled(template),
            ENDPOINT,
            log=console,
            reload_on_change=False,
            extra_environment={f: chosen.worker_environment(f) for f in template.functions},
        )
        runtimes.append(runtime)
        return runtime

    yield start
    for runtime in runtimes:
        runtime.shutdown()


def dynamodb_error(error: str, **scope: str) -> dict[str, Any]:
    """A rule: the echo function's DynamoDB calls (those `scope` narrows to) answer `error`."""
    return {"fault": "dynamodb-error", "function": "EchoFunction", "error": error, **scope}


def echo_calls(
    runtime: LambdaRuntime, service: str, operation: str, parameters: dict[str, Any]
) -> InvokeResult:
    """The echo function's answer when it calls `operation` of `service` with boto3."""
    aws = {"service": service, "operation": operation, "parameters": parameters}
    return runtime.invoke("EchoFunction", {"aws": aws})


# ---------------------------------------------------------------- the fault file


def test_the_fault_points_come_from_the_code() -> None:
    points = known_fault_points()
    assert {
        "cad.before_incident_write",
        "cad.after_incident_write",
        "cad.after_outcome_recorded",
        "webhook.after_claim",
        "webhook.after_send",
        "webhook.after_attempt_recorded",
    } <= points


@pytest.mark.parametrize(
    ("rule", "named"),
    [
        ({"fault": "explode", "function": "EchoFunction"}, "unknown fault 'explode'"),
        ({"fault": "crash", "function": "NoSuchFunction"}, "unknown function 'NoSuchFunction'"),
        (
            {"fault": "crash", "function": "EchoFunction", "point": "cad.nowhere"},
            "unknown fault point 'cad.nowhere'",
        ),
        (
            {
                "fault": "dynamodb-error",
                "function": "*",
                "table": "NoTable",
                "error": "InternalServerError",
            },
            "unknown table 'NoTable'",
        ),
        (
            {"fault": "dynamodb-error", "function": "*", "error": "Gremlins"},
            "unknown error 'Gremlins'",
        ),
        ({"fault": "sqs-duplicate", "queue": "NoQueue"}, "unknown queue 'NoQueue'"),
        ({"fault": "crash", "function": "EchoFunction", "when": "now"}, "unknown field 'when'"),
        ({"fault": "latency", "function": "EchoFunction"}, "needs 'milliseconds'"),
        ({"fault": "crash", "function": "EchoFunction", "probability": 2}, "probability"),
    ],
)
def test_a_rule_naming_what_does_not_exist_stops_with_its_name(
    fixture_template: StackTemplate, tmp_path: Path, rule: dict[str, Any], named: str
) -> None:
    with pytest.raises(FaultPlanError, match="rule 1: .*" + named.replace("(", r"\(")):
        plan(fixture_template, tmp_path, rule)


def test_an_unreadable_fault_file_names_the_file(
    fixture_template: StackTemplate, tmp_path: Path
) -> None:
    path = tmp_path / "faults.json"
    path.write_text("{not json")
    with pytest.raises(FaultPlanError, match=str(path)):
        load_fault_plan(path, fixture_template)


def test_tables_and_buckets_are_named_by_logical_id_and_matched_by_physical_name(
    fixture_template: StackTemplate, tmp_path: Path
) -> None:
    chosen = plan(
        fixture_template,
        tmp_path,
        {
            "fault": "dynamodb-error",
            "function": "EchoFunction",
            "table": "NamedTable",
            "error": "InternalServerError",
        },
    )
    (rule,) = json.loads(chosen.worker_environment("EchoFunction")["PSAP_LOCAL_FAULT_RULES"])[
        "rules"
    ]
    assert rule["table"] == fixture_template.tables["NamedTable"].name
    assert chosen.worker_environment("SlowFunction") == {}  # no rules, nothing loaded


def test_the_time_scale_shortens_consumers_timeouts_and_visibility_timeouts_alike(
    fixture_template: StackTemplate,
) -> None:
    scaled = scale_timeouts(fixture_template, 10)
    queue = scaled.queues["WorkQueue"]
    assert queue.visibility_timeout == 3
    assert queue.properties["VisibilityTimeout"] == 3  # what the embedded AWS creates
    assert scaled.functions["BatchFunction"].timeout == 1  # a queue consumer
    assert scaled.functions["EchoFunction"].timeout == 5  # an API function keeps its own


def test_draws_are_seeded_and_times_caps_the_firings(tmp_path: Path) -> None:
    rule = {"index": 0, "probability": 0.5}
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
    first = [fires(rule, 7, tmp_path / "a") for _ in range(40)]
    again = [fires(rule, 7, tmp_path / "b") for _ in range(40)]
    assert first == again
    assert 5 < sum(first) < 35
    capped = [fires({"index": 0, "times": 2}, 7, tmp_path / "c") for _ in range(5)]
    assert capped == [True, True, False, False, False]


# ---------------------------------------------------------------- inside the worker


def test_a_crash_at_a_named_point_ends_the_worker_and_the_next_try_passes(faulty: Any) -> None:
    runtime = faulty({"fault": "crash", "function": "EchoFunction", "point": POINT, "times": 1})
    crashed = runtime.invoke("EchoFunction", {"point": POINT})
    assert crashed.status == "error"
    assert crashed.error_type == "Runtime.ExitError"
    assert "exit status 137" in (crashed.error_message or "")
    passed = runtime.invoke("EchoFunction", {"point": POINT})
    assert passed.ok
    assert passed.payload["passed"] == POINT


def test_other_points_and_functions_are_untouched(faulty: Any) -> None:
    runtime = faulty({"fault": "crash", "function": "EchoFunction", "point": POINT})
    assert runtime.invoke("EchoFunction", {"point": "webhook.after_claim"}).ok
    assert runtime.invoke("EchoFunction", {}).ok


def test_a_timeout_at_a_point_is_ended_at_the_function_timeout(
    faulty: Any, fixture_template: StackTemplate
) -> None:
    functions = dict(fixture_template.functions)
    functions["EchoFunction"] = dataclasses.replace(functions["EchoFunction"], timeout=1)
    template = dataclasses.replace(fixture_template, functions=functions)
    runtime = faulty(
        {"fault": "timeout", "function": "EchoFunction", "point": POINT}, template=template
    )
    result = runtime.invoke("EchoFunction", {"point": POINT})
    assert result.status == "timeout"
    assert result.error_message == "Task timed out after 1.00 seconds"


def test_a_crash_without_a_point_happens_at_the_start_of_an_invocation(faulty: Any) -> None:
    runtime = faulty({"fault": "crash", "function": "EchoFunction", "times": 1})
    assert runtime.invoke("EchoFunction", {}).error_type == "Runtime.ExitError"
    assert runtime.invoke("EchoFunction", {}).ok


def test_dynamodb_answers_the_rules_error_for_its_table_and_operation(
    faulty: Any, fixture_template: StackTemplate
) -> None:
    table = fixture_template.tables["NamedTable"].name
    runtime = faulty(
        dynamodb_error(
            "ProvisionedThroughputExceededException", table="NamedTable", operation="PutItem"
        )
    )
    put = {"TableName": table, "Item": {"pk": {"S": "a"}}}
    answer = echo_calls(runtime, "dynamodb", "put_item", put)
    assert answer.payload == {"code": "ProvisionedThroughputExceededException", "status": 400}
    get = {"TableName": table, "Key": {"pk": {"S": "a"}}}
    other = echo_calls(runtime, "dynamodb", "get_item", get)
    assert other.payload["code"] != "ProvisionedThroughputExceededException"  # not faulted


def test_a_transaction_is_cancelled_with_a_reason_per_item(
    faulty: Any, fixture_template: StackTemplate
) -> None:
    table = fixture_template.tables["NamedTable"].name
    runtime = faulty(dynamodb_error("TransactionCanceledException"))
    items = [{"Put": {"TableName": table, "Item": {"pk": {"S": str(i)}}}} for i in range(2)]
    answer = echo_calls(runtime, "dynamodb", "transact_write_items", {"TransactItems": items})
    assert answer.payload == {"code": "TransactionCanceledException", "status": 400}


def test_s3_answers_503_slow_down(faulty: Any, fixture_template: StackTemplate) -> None:
    bucket = fixture_template.buckets["UploadBucket"].name
    runtime = faulty({"fault": "s3-slowdown", "function": "*", "bucket": "UploadBucket"})
    answer = echo_calls(
        runtime, "s3", "put_object", {"Bucket": bucket, "Key": "k", "Body": b"x".decode()}
    )
    assert answer.payload == {"code": "SlowDown", "status": 503}


# ---------------------------------------------------------------- never deployed


def test_no_hook_means_a_fault_point_does_nothing() -> None:
    faults.install(None)
    faults.fault_point(POINT)  # returns, whatever the name


def test_a_deployed_function_refuses_an_injector(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_EXECUTION_ENV", "AWS_Lambda_python3.13")
    with pytest.raises(faults.FaultInjectionRefused):
        faults.install(lambda name: None)
    faults.fault_point(POINT)  # still nothing installed: returns


def test_the_worker_loads_no_injector_without_rules(faulty: Any) -> None:
    runtime = faulty()
    answer = runtime.invoke("EchoFunction", {})
    assert answer.ok
    assert "PSAP_LOCAL_FAULT_RULES" not in os.environ
