"""The local stack as a real process, for tests that speak HTTP to it.

`stack` starts `python -m local.stack` once per session on free ports, waits until its state
file exists and its port answers, yields the parsed state (baseUrl, awsEndpointUrl,
resources, demo tenants) and stops it with SIGINT, as Ctrl-C would.
`stack_log` reads the stack's log file so far (start-up, request lines, function logs);
the console (credentials, curl lines) is `console.log` beside it.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Start-up seeds two demo tenants and builds a search index: a busy 2-core machine needs minutes.
START_TIMEOUT_SECONDS = 420


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.fixture(scope="session")
def stack_process(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[dict[str, Any], Path]]:
    folder = tmp_path_factory.mktemp("stack")
    state_file = folder / "stack.json"
    log_file = folder / "stack.log"
    console_file = folder / "console.log"
    port = _free_port()
    # pytest's pythonpath setting is not inherited by a child process; its environment is.
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "shared"), str(ROOT)]),
    }
    with console_file.open("wb") as console:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "local.stack",
                "--port",
                str(port),
                "--aws-port",
                "0",
                "--state-file",
                str(state_file),
                "--log-file",
                str(log_file),
            ],
            cwd=ROOT,
            env=environment,
            stdout=console,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not (state_file.exists() and _answers(port)):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(
                    f"the local stack did not start (exit code {process.poll()}):\n"
                    + console_file.read_text(errors="replace")
                    + (log_file.read_text(errors="replace") if log_file.exists() else ""),
                    pytrace=False,
                )
            time.sleep(0.1)
        state: dict[str, Any] = json.loads(state_file.read_text())
        yield state, log_file
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture(scope="session")
def stack(stack_process: tuple[dict[str, Any], Path]) -> dict[str, Any]:
    return stack_process[0]


@pytest.fixture(scope="session")
def stack_state_file(stack_process: tuple[dict[str, Any], Path]) -> Path:
    """The running stack's state file (what .local/stack.json is for `make run`)."""
    return stack_process[1].parent / "stack.json"


@pytest.fixture
def stack_log(stack_process: tuple[dict[str, Any], Path]) -> Callable[[], str]:
    log_file = stack_process[1]
    return lambda: log_file.read_text(errors="replace")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The README's blocks run last: they change the shared demo data (a media upload, catalog
    items, a connector), which other e2e tests read as the demo seeded it."""
    readme = [item for item in items if item.path.name == "test_readme.py"]
    items[:] = [item for item in items if item.path.name != "test_readme.py"] + readme
