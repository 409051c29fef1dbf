"""Lambda execution environments for the template's functions, one worker process each.

A worker is started on a function's first invoke and kept warm, like a Lambda container; it
serves one invocation at a time, so concurrent invokes run in as many workers. How many may
run at once is Lambda's concurrency (local.concurrency): a function's reserved concurrency and
the account's limit; an invoke beyond them is throttled, not queued. A worker idle for longer
than the idle time is stopped, as Lambda reclaims idle environments; the next invoke is a cold
start. The function's Timeout is enforced by killing the worker; a crash or a timeout is
reported as an invoke error and the next invoke gets a fresh worker. Invokes never hang.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final, Literal

from local.aws import local_aws_environment
from local.concurrency import (
    ACCOUNT_LIMIT_EXCEEDED,
    DEFAULT_ACCOUNT_CONCURRENCY,
    AccountConcurrency,
    ThrottleReason,
)
from local.template import REPO_ROOT, Function, StackTemplate, function_arn

WORKER_SCRIPT: Final = Path(__file__).resolve().parent / "lambda_worker.py"
# Lambda keeps an idle environment for minutes (not documented, typically 5 to 15); locally
# five minutes keeps a working session warm while a stack left alone shrinks back to nothing.
DEFAULT_IDLE_SECONDS: Final = 300.0
# The longest the reclaimer sleeps between looks for idle workers.
RECLAIM_CHECK_SECONDS: Final = 5.0
# Lambda allows 10 s for init; a first import on a cold disk can be slower than on Lambda.
INIT_TIMEOUT_SECONDS: Final = 30.0
# How often a pool looks for edited code, so a running stack picks up changes.
CODE_CHECK_INTERVAL_SECONDS: Final = 1.0

LogSink = Callable[[str], None]
_print_lock = threading.Lock()


def print_line(line: str) -> None:
    """Default console: one line at a time, so concurrent workers do not interleave."""
    with _print_lock:
        print(line, flush=True)


@dataclass(frozen=True)
class InvokeResult:
    status: Literal["ok", "error", "timeout", "throttled"]
    payload: Any = None
    error_type: str | None = None
    error_message: str | None = None
    duration_ms: float = 0.0
    # Why Lambda refused to run the invoke (the Reason of its TooManyRequestsException).
    throttle_reason: ThrottleReason | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def throttled(self) -> bool:
        return self.status == "throttled"


def throttled_result(reason: ThrottleReason) -> InvokeResult:
    """What Lambda's Invoke answers (429) when no concurrency is left for the invocation."""
    return InvokeResult(
        status="throttled",
        error_type="TooManyRequestsException",
        error_message="Rate Exceeded.",
        throttle_reason=reason,
    )


def worker_environment(
    function: Function,
    endpoint_url: str,
    repo_root: Path = REPO_ROOT,
    *,
    credentials: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """What a function sees in os.environ: its template environment plus the local overrides.

    `credentials` are its role's session (local.iam); without them it acts as the operator.
    """
    return {
        # Only what a process needs to run; the developer's own environment stays out.
        "PATH": os.environ.get("PATH", os.defpath),
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        **function.environment,
        **local_aws_environment(endpoint_url),
        **(credentials or {}),
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_DEV": "false",
        "AWS_LAMBDA_FUNCTION_NAME": function.logical_id,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(function.memory_size),
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_LOG_GROUP_NAME": function.log_group or f"/aws/lambda/{function.logical_id}",
        "AWS_LAMBDA_LOG_STREAM_NAME": "local",
        "LAMBDA_TASK_ROOT": str(function.code_dir),
        "_HANDLER": function.handler,
        "PYTHONPATH": f"{function.code_dir}{os.pathsep}{repo_root / 'layers' / 'shared'}",
        "PYTHONUNBUFFERED": "1",
    }


class _LineReader:
    """Reads newline-terminated messages from a pipe with a deadline."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()

    def read(self, deadline: float) -> bytes | None:
        """The next line; None at end of file. TimeoutError when the deadline passes."""
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            # poll rather than select: select cannot watch descriptors above 1023.
            poller = select.poll()
            poller.register(self._fd, select.POLLIN)
            if not poller.poll(remaining * 1000):
                raise TimeoutError
            chunk = os.read(self._fd, 1 << 20)
            if not chunk:
                return None
            self._buffer.extend(chunk)
        line, _, rest = bytes(self._buffer).partition(b"\n")
        self._buffer = bytearray(rest)
        return line


class _Worker:
    """One worker process: an execution environment of one function."""

    def __init__(
        self, function: Function, environment: Mapping[str, str], log: LogSink, *, generation: int
    ) -> None:
        self.function = function
        self.generation = generation
        self._closed = False
        self._close_lock = threading.Lock()
        event_read, self._event_write = os.pipe()
        self._result_read, result_write = os.pipe()
        try:
            self._process = subprocess.Popen(
                [
                    sys.executable,
                    "-P",
                    str(WORKER_SCRIPT),
                    f"--event-fd={event_read}",
                    f"--result-fd={result_write}",
                ],
                env=dict(environment),
                cwd=function.code_dir,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pass_fds=(event_read, result_write),
                # Its own process group: Ctrl-C in the terminal is for the stack, which then
                # stops its workers itself (a worker also exits when its event pipe closes).
                start_new_session=True,
            )
        except OSError:
            for fd in (self._event_write, self._result_read):
                os.close(fd)
            raise
        finally:
            # The child holds its own copies; ours would keep the pipes open after it dies.
            os.close(event_read)
            os.close(result_write)
        self._events: IO[bytes] = os.fdopen(self._event_write, "wb")
        self._results = _LineReader(self._result_read)
        self._log_thread = threading.Thread(
            target=self._forward_log,
            args=(self._process.stdout, log),
            name=f"log-{function.logical_id}",
            daemon=True,
        )
        self._log_thread.start()
        self.init_error: InvokeResult | None = self._await_ready()

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def _forward_log(self, stream: IO[bytes] | None, log: LogSink) -> None:
        if stream is None:
            return
        prefix = f"[{self.function.logical_id}] "
        with stream:
            for raw in stream:
                log(prefix + raw.decode("utf-8", "replace").rstrip("\n"))

    def _await_ready(self) -> InvokeResult | None:
        try:
            line = self._results.read(time.monotonic() + INIT_TIMEOUT_SECONDS)
        except TimeoutError:
            self.kill()
            return InvokeResult(
                status="error",
                error_type="Runtime.InitTimeout",
                error_message=f"init did not finish in {INIT_TIMEOUT_SECONDS:.0f} seconds",
            )
        if line is None:
            return self._exited()
        return None

    def _exited(self) -> InvokeResult:
        code = self._process.wait()
        return InvokeResult(
            status="error",
            error_type="Runtime.ExitError",
            error_message=f"Runtime exited with error: exit status {code}",
        )

    def invoke(self, event: Any, request_id: str, timeout_seconds: float) -> InvokeResult:
        if self.init_error is not None:
            return self.init_error
        started = time.monotonic()
        deadline_ms = int(time.time() * 1000 + timeout_seconds * 1000)
        message = {"requestId": request_id, "deadlineMs": deadline_ms, "event": event}
        try:
            self._events.write(json.dumps(message).encode() + b"\n")
            self._events.flush()
            line = self._results.read(started + timeout_seconds)
        except TimeoutError:
            self.kill()
            return InvokeResult(
                status="timeout",
                error_type="Sandbox.Timedout",
                error_message=f"Task timed out after {timeout_seconds:.2f} seconds",
                duration_ms=(time.monotonic() - started) * 1000,
            )
        except BrokenPipeError:
            line = None
        if line is None:
            return self._exited()
        answer = json.loads(line)
        duration_ms = (time.monotonic() - started) * 1000
        if answer.get("ok"):
            return InvokeResult(status="ok", payload=answer.get("result"), duration_ms=duration_ms)
        return InvokeResult(
            status="error",
            error_type=str(answer.get("errorType")),
            error_message=str(answer.get("errorMessage")),
            duration_ms=duration_ms,
        )

    def kill(self) -> None:
        self._close(kill=True)

    def stop(self) -> None:
        """Ask the worker to finish by closing its event pipe; kill it if it does not."""
        self._close(kill=False)

    def _close(self, *, kill: bool) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        if kill and self.alive:
            self._process.kill()
        # A dead worker cannot take the buffered rest of an event; there is nothing to flush.
        with contextlib.suppress(BrokenPipeError):
            self._events.close()
        try:
            self._process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._result_read)
        self._log_thread.join(timeout=1)


def _code_fingerprint(folders: tuple[Path, ...]) -> float:
    """Newest modification time of the Python sources a function imports."""
    newest = 0.0
    for folder in folders:
        for directory, subdirectories, files in os.walk(folder):
            subdirectories[:] = [name for name in subdirectories if name != "__pycache__"]
            for name in files:
                if name.endswith(".py"):
                    newest = max(newest, os.stat(os.path.join(directory, name)).st_mtime)
    return newest


class FunctionPool:
    """The warm workers of one function: an idle one serves an invoke, or a new one starts.

    The pool never refuses or queues an invoke; how many run at once is the runtime's
    concurrency accounting, which throttles before an invoke reaches the pool.
    """

    def __init__(
        self,
        function: Function,
        environment: Mapping[str, str],
        *,
        log: LogSink = print_line,
        code_folders: tuple[Path, ...] = (),
    ) -> None:
        self.function = function
        self._environment = dict(environment)
        self._log = log
        # Idle workers with the time each became idle, the most recently used last.
        self._idle: list[tuple[_Worker, float]] = []
        self._busy = 0
        self._lock = threading.Lock()
        self._closed = False
        self._generation = 0
        self._code_folders = code_folders
        self._fingerprint = _code_fingerprint(code_folders) if code_folders else 0.0
        self._checked_at = time.monotonic()

    @property
    def worker_count(self) -> int:
        """Workers alive now, busy or idle."""
        with self._lock:
            return self._busy + len(self._idle)

    def _note_code_changes(self) -> None:
        # Called with the lock held; edited code retires every warm worker.
        now = time.monotonic()
        if not self._code_folders or now - self._checked_at < CODE_CHECK_INTERVAL_SECONDS:
            return
        self._checked_at = now
        fingerprint = _code_fingerprint(self._code_folders)
        if fingerprint != self._fingerprint:
            self._fingerprint = fingerprint
            self._generation += 1
            stale, self._idle = self._idle, []
            for worker, _ in stale:
                threading.Thread(target=worker.stop, daemon=True).start()

    def _acquire(self) -> _Worker | None:
        """An idle worker, or None when the caller must start a new one."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the local runtime is shutting down")
            self._note_code_changes()
            self._busy += 1
            # The most recently used first, so the longest idle are the ones reclaimed.
            while self._idle:
                worker, _ = self._idle.pop()
                if worker.alive:
                    return worker
            return None

    def _release(self, worker: _Worker | None) -> None:
        with self._lock:
            self._busy -= 1
            keep = (
                worker is not None
                and worker.alive
                and not self._closed
                and worker.generation == self._generation
            )
            if keep and worker is not None:
                self._idle.append((worker, time.monotonic()))
        if worker is not None and not keep:
            worker.kill()

    @property
    def idle_count(self) -> int:
        with self._lock:
            return len(self._idle)

    def oldest_idle_since(self) -> float | None:
        """When the longest-idle worker became idle; None without an idle worker."""
        with self._lock:
            return self._idle[0][1] if self._idle else None

    def stop_oldest_idle(self) -> bool:
        """Stop the worker idle longest (room for another function's); False if none."""
        with self._lock:
            if not self._idle:
                return False
            worker, _ = self._idle.pop(0)
        worker.stop()
        return True

    def reclaim_idle(self, idle_seconds: float) -> int:
        """Stop the workers idle for at least `idle_seconds`; how many were stopped."""
        cutoff = time.monotonic() - idle_seconds
        with self._lock:
            expired = [worker for worker, since in self._idle if since <= cutoff]
            self._idle = [(worker, since) for worker, since in self._idle if since > cutoff]
        for worker in expired:
            worker.stop()
        return len(expired)

    def invoke(self, event: Any, *, request_id: str | None = None) -> InvokeResult:
        request_id = request_id or str(uuid.uuid4())
        try:
            worker = self._acquire()
        except RuntimeError as error:
            return InvokeResult(
                status="error", error_type="Runtime.Stopped", error_message=str(error)
            )
        try:
            if worker is None:
                worker = _Worker(
                    self.function, self._environment, self._log, generation=self._generation
                )
            return worker.invoke(event, request_id, float(self.function.timeout))
        except OSError as error:
            return InvokeResult(
                status="error", error_type="Runtime.StartError", error_message=str(error)
            )
        finally:
            self._release(worker)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker, _ in idle:
            worker.stop()


class LambdaRuntime:
    """The template's functions, invoked by logical id, within Lambda's concurrency limits."""

    def __init__(
        self,
        template: StackTemplate,
        endpoint_url: str,
        *,
        account_concurrency: int = DEFAULT_ACCOUNT_CONCURRENCY,
        idle_seconds: float = DEFAULT_IDLE_SECONDS,
        log: LogSink = print_line,
        repo_root: Path = REPO_ROOT,
        reload_on_change: bool = True,
        log_for: Callable[[Function, LogSink], LogSink] | None = None,
        credentials: Mapping[str, Mapping[str, str]] | None = None,
        extra_environment: Mapping[str, Mapping[str, str]] | None = None,
        max_workers: int | None = None,
    ) -> None:
        """`log_for` gives a function its own log sink (local.log_subscriptions);
        `credentials` each function's role session by logical id (local.iam);
        `extra_environment` more variables by logical id (the fault plan's, local.faults);
        `max_workers` caps the worker processes alive at once across all functions.
        ConcurrencyConfigurationError when the reservations do not fit the account."""
        self.concurrency = AccountConcurrency.for_template(template, account_concurrency)
        shared_layer = repo_root / "layers" / "shared"
        self._pools = {
            function.logical_id: FunctionPool(
                function,
                {
                    **worker_environment(
                        function,
                        endpoint_url,
                        repo_root,
                        credentials=(credentials or {}).get(function.logical_id),
                    ),
                    **(extra_environment or {}).get(function.logical_id, {}),
                },
                log=log_for(function, log) if log_for is not None else log,
                code_folders=(function.code_dir, shared_layer) if reload_on_change else (),
            )
            for function in template.functions.values()
        }
        self._idle_seconds = idle_seconds
        self._max_workers = max_workers
        self._room = threading.Lock()
        self._stopping = threading.Event()
        self._reclaimer = threading.Thread(
            target=self._reclaim_idle_workers, name="lambda-idle-reclaimer", daemon=True
        )
        self._reclaimer.start()

    def function_arn(self, function_id: str) -> str:
        return function_arn(function_id)

    def worker_count(self, function_id: str) -> int:
        """The function's execution environments alive now."""
        return self._pools[function_id].worker_count

    def has_headroom(self, function_id: str) -> bool:
        """Whether an invoke of the function started now would run rather than be throttled."""
        return self.concurrency.has_headroom(function_id)

    def invoke(
        self, function_id: str, event: Any, *, request_id: str | None = None
    ) -> InvokeResult:
        pool = self._pools.get(function_id)
        if pool is None:
            return InvokeResult(
                status="error",
                error_type="ResourceNotFoundException",
                error_message=f"Function not found: {function_id}",
            )
        refusal = self.concurrency.try_acquire(function_id)
        if refusal is None and not self._make_room(pool):
            self.concurrency.release(function_id)
            refusal = ACCOUNT_LIMIT_EXCEEDED
        if refusal is not None:
            return throttled_result(refusal)
        try:
            return pool.invoke(event, request_id=request_id)
        finally:
            self.concurrency.release(function_id)

    def worker_total(self) -> int:
        """Worker processes alive now, across all functions."""
        return sum(pool.worker_count for pool in self._pools.values())

    def _make_room(self, pool: FunctionPool) -> bool:
        """Whether `pool` may run one more invocation under the worker cap: it has an idle
        worker, there is room for another, or the longest-idle worker of any function is
        stopped to make it. False when every live worker is busy (the invoke is throttled)."""
        if self._max_workers is None or pool.idle_count > 0:
            return True
        with self._room:
            if self.worker_total() < self._max_workers:
                return True
            idle = [
                (since, other)
                for other in self._pools.values()
                if (since := other.oldest_idle_since()) is not None
            ]
            if not idle:
                return False
            _, oldest = min(idle, key=lambda pair: pair[0])
            return oldest.stop_oldest_idle()

    def _reclaim_idle_workers(self) -> None:
        interval = max(0.05, min(self._idle_seconds / 4, RECLAIM_CHECK_SECONDS))
        while not self._stopping.wait(interval):
            for pool in self._pools.values():
                pool.reclaim_idle(self._idle_seconds)

    def shutdown(self) -> None:
        self._stopping.set()
        self._reclaimer.join(timeout=5)
        for pool in self._pools.values():
            pool.close()
