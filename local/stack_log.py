"""What the local stack's log shows, and where the rest goes.

The log (`.local/stack.log`) is for reading: start-up steps, one line per request, the
functions' own log lines at the chosen `--log-level`, and what went wrong. What every request
or batch adds besides goes to files of its own beside it, where a tool or a curious developer
can still read it:

- the functions' CloudWatch metric lines (EMF JSON, printed on every request) go to
  `stack.metrics.log`;
- the queue batches that succeeded whole (the audit writer's after every request, and every
  other SQS consumer's) go to `stack.batches.log`; a batch with failures or a throttle stays in
  the log.

At `--log-level DEBUG` both are in the log as well. A client that drops its connection, and a
kept-alive connection to the embedded AWS that times out idle, are ordinary events: they are
counted (CONNECTIONS), never traced; the counts are served at GET /_psap/connections on the
embedded AWS's port and printed when the stack stops.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Final

# As local.runtime's: this module is imported by the embedded AWS, which the runtime is not.
type LogSink = Callable[[str], None]

METRICS_SUFFIX: Final = ".metrics.log"
BATCHES_SUFFIX: Final = ".batches.log"
CONNECTIONS_PATH: Final = "/_psap/connections"


def is_metric_line(line: str) -> bool:
    """A CloudWatch embedded metric format document: one JSON object with `_aws` metrics."""
    text = line.strip()
    if not (text.startswith("{") and '"_aws"' in text):
        return False
    try:
        document = json.loads(text)
    except ValueError:
        return False
    return isinstance(document, dict) and "CloudWatchMetrics" in (document.get("_aws") or {})


class ConnectionEvents:
    """Dropped and timed-out connections, by server and kind, counted across threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[tuple[str, str]] = Counter()

    def count(self, server: str, event: str) -> None:
        with self._lock:
            self._counts[server, event] += 1

    def report(self) -> dict[str, dict[str, int]]:
        with self._lock:
            report: dict[str, dict[str, int]] = {}
            for (server, event), number in sorted(self._counts.items()):
                report.setdefault(server, {})[event] = number
            return report

    def summary(self) -> str:
        report = self.report()
        if not report:
            return "connections: none dropped or timed out"
        parts = [
            f"{server} {event} {number}"
            for server, events in report.items()
            for event, number in events.items()
        ]
        return "connections: " + ", ".join(parts)


CONNECTIONS: Final = ConnectionEvents()

# The kinds of connection event, as counted and reported.
CLIENT_DISCONNECTED: Final = "client disconnected"
IDLE_TIMEOUT: Final = "idle connection timed out"


def serve_connections(app: Callable[..., Any]) -> Callable[..., Any]:
    """WSGI middleware: GET /_psap/connections answers the connection counts as JSON."""

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if environ.get("PATH_INFO") == CONNECTIONS_PATH and environ.get("REQUEST_METHOD") == "GET":
            body = json.dumps(CONNECTIONS.report(), indent=2).encode()
            start_response(
                "200 OK",
                [("Content-Type", "application/json"), ("Content-Length", str(len(body)))],
            )
            return [body]
        return app(environ, start_response)

    return application


def is_dropped_connection(error: BaseException | None) -> bool:
    """A peer that hung up or went quiet: nothing the server did wrong."""
    return isinstance(error, ConnectionError | TimeoutError)


class _SideFile:
    """A file beside the log that lines are appended to, one at a time across threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._file: IO[str] | None = None

    def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("w", encoding="utf-8", errors="replace", buffering=1)

    def write(self, line: str) -> None:
        with self._lock:
            if self._file is not None:
                self._file.write(line + "\n")

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


class StackLog:
    """Routes the lines the stack and its functions print: the log, or a file of their own."""

    def __init__(self, log_file: Path, *, level: str, console: LogSink) -> None:
        self._console = console
        self._debug = level == "DEBUG"
        self.metrics = _SideFile(log_file.with_name(log_file.stem + METRICS_SUFFIX))
        self.batches = _SideFile(log_file.with_name(log_file.stem + BATCHES_SUFFIX))

    def open(self) -> None:
        self.metrics.open()
        self.batches.open()

    def close(self) -> None:
        self.metrics.close()
        self.batches.close()

    def function_output(self, line: str) -> None:
        """A line a function printed (prefixed with its name): metric documents to the
        metrics file, everything else to the log."""
        _, _, message = line.partition("] ")
        if line.startswith("[") and is_metric_line(message):
            self.metrics.write(line)
            if self._debug:
                self._console(line)
            return
        self._console(line)

    def batch(self, line: str) -> None:
        """A queue batch that succeeded whole."""
        self.batches.write(line)
        if self._debug:
            self._console(line)
