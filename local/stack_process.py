"""`python -m local.stack` as a child process, started as a user starts it: for the e2e tests
and the benchmarks that need the whole stack (one way to start, wait for and stop it)."""

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


class StackDidNotStart(RuntimeError):
    """The stack exited or timed out before it was ready; the message holds its output."""


@dataclass(frozen=True)
class RunningStack:
    process: subprocess.Popen[bytes]
    state: dict[str, Any]  # the state file: baseUrl, awsEndpointUrl, resources, tenants
    state_file: Path
    log_file: Path  # start-up, request lines, function logs
    console_file: Path  # what the user would see: credentials, curl lines


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def port_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@contextlib.contextmanager
def running_stack(folder: Path, *options: str, timeout: float) -> Iterator[RunningStack]:
    """Starts the stack on free ports with its files in `folder` and `options` added (e.g.
    --no-demo); ready once its state file exists and its API port answers; stopped with
    SIGINT, as Ctrl-C would, when the block ends."""
    state_file = folder / "stack.json"
    log_file = folder / "stack.log"
    console_file = folder / "console.log"
    port = free_port()
    # A child does not inherit pytest's pythonpath setting; it does inherit the environment.
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "shared"), str(ROOT)]),
    }
    command = [
        *(sys.executable, "-m", "local.stack", "--port", str(port), "--aws-port", "0"),
        *("--state-file", str(state_file), "--log-file", str(log_file), *options),
    ]
    with console_file.open("wb") as console:
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=console, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + timeout
        while not (state_file.exists() and port_answers(port)):
            if process.poll() is not None or time.monotonic() > deadline:
                raise StackDidNotStart(
                    f"the local stack did not start (exit code {process.poll()}):\n"
                    + console_file.read_text(errors="replace")
                    + (log_file.read_text(errors="replace") if log_file.exists() else "")
                )
            time.sleep(0.1)
        state: dict[str, Any] = json.loads(state_file.read_text())
        yield RunningStack(process, state, state_file, log_file, console_file)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
