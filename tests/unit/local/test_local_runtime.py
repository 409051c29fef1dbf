"""Worker processes as Lambda execution environments: isolation, warmth, limits, failures."""

import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

import local.runtime as runtime_module
from local.aws import OPERATOR_CREDENTIALS
from local.runtime import FunctionPool, InvokeResult, LambdaRuntime, worker_environment
from local.template import REPO_ROOT

ENDPOINT = "http://127.0.0.1:9"
PROBE_CODE_DIR = (Path(__file__).parent / "fixtures" / "functions" / "probe").resolve()


@pytest.fixture
def lambdas(fixture_template, console):
    lambda_runtime = LambdaRuntime(fixture_template, ENDPOINT, log=console, reload_on_change=False)
    yield lambda_runtime
    lambda_runtime.shutdown()


def test_handler_output_does_not_corrupt_the_result(lambdas, console):
    # Given a handler that prints (even JSON) on stdout and stderr before returning
    result = lambdas.invoke("EchoFunction", {"return": {"answer": 42}})
    # Then the result is exactly what it returned
    assert result.ok
    assert result.payload == {"answer": 42}
    # And what it printed went to the console, prefixed with the function's name
    assert console.has("[EchoFunction] echo says hello on stdout")
    assert console.has('[EchoFunction] {"looks": "like a result"}')
    assert console.has("[EchoFunction] echo says hello on stderr")


def test_worker_environment_is_the_template_environment_plus_local_overrides(lambdas):
    result = lambdas.invoke("EchoFunction", {})
    environ = result.payload["environ"]
    code_dir = PROBE_CODE_DIR
    assert environ["AWS_ENDPOINT_URL"] == ENDPOINT
    assert environ["AWS_ACCESS_KEY_ID"] == OPERATOR_CREDENTIALS["AWS_ACCESS_KEY_ID"]
    assert environ["AWS_SECRET_ACCESS_KEY"] == OPERATOR_CREDENTIALS["AWS_SECRET_ACCESS_KEY"]
    assert environ["AWS_DEFAULT_REGION"] == environ["AWS_REGION"] == "us-east-1"
    assert environ["AWS_LAMBDA_FUNCTION_NAME"] == "EchoFunction"
    assert environ["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] == "384"
    assert environ["POWERTOOLS_TRACE_DISABLED"] == "true"
    assert environ["POWERTOOLS_DEV"] == "false"
    assert environ["PYTHONPATH"] == f"{code_dir}{os.pathsep}{REPO_ROOT / 'layers' / 'shared'}"
    assert (environ["SHARED"], environ["OVERRIDDEN"]) == ("from-globals", "from-function")
    # And the developer's own environment does not leak in
    assert environ["HOME"] is None


def test_context_object_has_what_powertools_reads(lambdas):
    request_id = str(uuid.uuid4())
    result = lambdas.invoke("EchoFunction", {}, request_id=request_id)
    context = result.payload["context"]
    assert context["function_name"] == "EchoFunction"
    assert context["memory_limit_in_mb"] == 384
    assert (
        context["invoked_function_arn"]
        == "arn:aws:lambda:us-east-1:123456789012:function:EchoFunction"
    )
    assert context["aws_request_id"] == request_id
    # The function's Timeout is 5 s: the remaining time counts down from there
    assert 0 < context["remaining_ms"] <= 5000


def test_worker_is_started_once_and_kept_warm(lambdas):
    first = lambdas.invoke("EchoFunction", {})
    second = lambdas.invoke("EchoFunction", {})
    assert first.payload["pid"] == second.payload["pid"]


def test_handler_exception_is_an_error_result_and_the_worker_survives(lambdas):
    before = lambdas.invoke("EchoFunction", {}).payload["pid"]
    result = lambdas.invoke("EchoFunction", {"raise": "bad input"})
    assert result.status == "error"
    assert (result.error_type, result.error_message) == ("ValueError", "bad input")
    assert lambdas.invoke("EchoFunction", {}).payload["pid"] == before


def test_a_result_json_cannot_carry_is_a_marshal_error(lambdas):
    result = lambdas.invoke("EchoFunction", {"unserializable": True})
    assert result.status == "error"
    assert result.error_type == "Runtime.MarshalError"


def test_timeout_kills_the_worker_and_reports_a_timeout(lambdas):
    # Given SlowFunction with Timeout 1 asked to sleep 5 s
    started = time.monotonic()
    result = lambdas.invoke("SlowFunction", {"seconds": 5})
    elapsed = time.monotonic() - started
    # Then the invoke ends at the timeout, reported as such
    assert result.status == "timeout"
    assert result.error_message == "Task timed out after 1.00 seconds"
    assert elapsed < 3
    # And the next invoke gets a fresh environment that works
    assert lambdas.invoke("SlowFunction", {"seconds": 0}).ok


def test_crashing_worker_is_an_error_and_is_replaced(lambdas):
    before = lambdas.invoke("EchoFunction", {}).payload["pid"]
    result = lambdas.invoke("EchoFunction", {"crash": True})
    assert result.status == "error"
    assert result.error_type == "Runtime.ExitError"
    assert "exit status 3" in (result.error_message or "")
    after = lambdas.invoke("EchoFunction", {})
    assert after.ok
    assert after.payload["pid"] != before


def test_import_failure_is_reported_on_invoke(lambdas):
    result = lambdas.invoke("BrokenFunction", {})
    assert result.status == "error"
    assert result.error_type == "Runtime.ImportModuleError"
    assert "psap_module_that_does_not_exist" in (result.error_message or "")


def test_unknown_function_is_an_error_not_a_hang(lambdas):
    result = lambdas.invoke("NoSuchFunction", {})
    assert result.status == "error"
    assert result.error_type == "ResourceNotFoundException"


def _invoke_concurrently(
    invoke: Callable[[], InvokeResult], count: int
) -> tuple[list[InvokeResult], float]:
    results: list[InvokeResult] = []
    threads = [threading.Thread(target=lambda: results.append(invoke())) for _ in range(count)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results, time.monotonic() - started


def test_concurrent_invokes_run_in_parallel_workers(lambdas):
    # Given three requests that each take 0.6 s
    results, elapsed = _invoke_concurrently(
        lambda: lambdas.invoke("SlowFunction", {"seconds": 0.6}), 3
    )
    # Then they ran side by side in three environments, not one after the other
    assert all(result.ok for result in results)
    assert len({result.payload["pid"] for result in results}) == 3
    assert elapsed < 1.6


def test_edited_code_is_picked_up_by_a_fresh_worker(
    tmp_path, fixture_template, console, monkeypatch
):
    # Given a running function whose code is then edited
    monkeypatch.setattr(runtime_module, "CODE_CHECK_INTERVAL_SECONDS", 0.0)
    (tmp_path / "app.py").write_text("def handler(event, context):\n    return 'v1'\n")
    function = replace(
        fixture_template.functions["SlowFunction"], code_dir=tmp_path, handler="app.handler"
    )
    pool = FunctionPool(
        function, worker_environment(function, ENDPOINT), log=console, code_folders=(tmp_path,)
    )
    try:
        assert pool.invoke({}).payload == "v1"
        (tmp_path / "app.py").write_text("def handler(event, context):\n    return 'v2'\n")
        later = time.time() + 5
        os.utime(tmp_path / "app.py", (later, later))
        # Then the next invoke runs the new code
        assert pool.invoke({}).payload == "v2"
    finally:
        pool.close()


def test_the_worker_cap_stops_the_longest_idle_worker_and_throttles_when_all_are_busy(
    fixture_template, console
):
    capped = LambdaRuntime(
        fixture_template, ENDPOINT, log=console, reload_on_change=False, max_workers=1
    )
    try:
        # Given one live worker, idle, of another function
        assert capped.invoke("EchoFunction", {}).ok
        assert capped.worker_total() == 1
        # When a second function is invoked, the idle worker makes room for it
        assert capped.invoke("SlowFunction", {"seconds": 0}).ok
        assert (capped.worker_count("EchoFunction"), capped.worker_count("SlowFunction")) == (0, 1)
        # And while the only worker is busy, another function's invoke is throttled
        busy = threading.Thread(target=capped.invoke, args=("SlowFunction", {"seconds": 0.8}))
        busy.start()
        time.sleep(0.3)
        refused = capped.invoke("EchoFunction", {})
        busy.join()
        assert refused.throttled
        assert refused.throttle_reason == "ConcurrentInvocationLimitExceeded"
    finally:
        capped.shutdown()
