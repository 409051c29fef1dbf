"""Fixtures for the local stack's own tests: a miniature template, moto, probe functions."""

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from local.aws import EmbeddedAws, create_resources
from local.runtime import InvokeResult, LambdaRuntime
from local.template import StackTemplate, load_template

FIXTURE_TEMPLATE = Path(__file__).parent / "fixtures" / "template.yaml"


class ConsoleLines:
    """A log sink that keeps what the stack would have printed."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, line: str) -> None:
        with self._lock:
            self.lines.append(line)

    def text(self) -> str:
        with self._lock:
            return "\n".join(self.lines)

    def has(self, line: str, timeout: float = 5.0) -> bool:
        """Whether `line` was printed, waiting for it a little: a worker's output reaches the
        console on its own thread, possibly after the invoke's result."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                if line in self.lines:
                    return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)


class FakeFunctions:
    """Stands in for LambdaRuntime.invoke: answers per function, and counts the calls."""

    def __init__(self) -> None:
        self.behaviours: dict[str, Callable[[Any], InvokeResult]] = {}
        self.calls: list[tuple[str, Any]] = []

    def __call__(self, function_id: str, event: Any) -> InvokeResult:
        self.calls.append((function_id, event))
        return self.behaviours[function_id](event)

    def calls_to(self, function_id: str) -> list[Any]:
        return [event for called, event in self.calls if called == function_id]


@pytest.fixture
def fixture_template() -> StackTemplate:
    return load_template(FIXTURE_TEMPLATE)


@pytest.fixture
def console() -> ConsoleLines:
    return ConsoleLines()


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    # One server for the session; each test deploys under its own stack name to stay apart.
    aws = EmbeddedAws()
    yield aws.start()
    aws.stop()


@pytest.fixture
def deployed(moto_endpoint: str) -> StackTemplate:
    """The fixture template's resources, created in moto under a stack name of their own."""
    template = load_template(
        FIXTURE_TEMPLATE, stack_name=f"t{uuid.uuid4().hex[:8]}", sqs_endpoint=moto_endpoint
    )
    create_resources(template, moto_endpoint)
    return template


@pytest.fixture
def runtime(
    deployed: StackTemplate, moto_endpoint: str, console: ConsoleLines
) -> Iterator[LambdaRuntime]:
    lambda_runtime = LambdaRuntime(deployed, moto_endpoint, log=console, reload_on_change=False)
    yield lambda_runtime
    lambda_runtime.shutdown()


@pytest.fixture
def fake_functions() -> FakeFunctions:
    return FakeFunctions()
