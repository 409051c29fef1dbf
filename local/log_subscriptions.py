"""CloudWatch Logs subscription filters, as the template declares them (`Type: CloudWatchLogs`).

Each function writes to its log group (LoggingConfig.LogGroup). A line whose group has a
subscription and that matches its filter pattern is batched, and every second the batch is
delivered to the subscribed function as CloudWatch Logs does: `{"awslogs": {"data":
base64(gzip(json))}}` with messageType DATA_MESSAGE and the log events. An invoke that fails
is retried twice, as Lambda retries an asynchronous invoke; then the batch is reported lost
on the console (in AWS it would reach the function's dead-letter queue).

Filter patterns: the JSON subset `{ $.field = value }`, with `&&` between terms; a pattern
outside it stops the stack at start, so a template change cannot silently stop delivery.
"""

from __future__ import annotations

import base64
import gzip
import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from local.runtime import InvokeResult, LogSink
from local.template import ACCOUNT_ID, Function, StackTemplate, TemplateError

FLUSH_SECONDS: Final = 1.0
MAX_EVENTS_PER_BATCH: Final = 1000
ATTEMPTS: Final = 3
_TERM = re.compile(r'^\$\.([A-Za-z0-9_.]+)\s*=\s*(-?\d+(?:\.\d+)?|"[^"]*"|[A-Za-z0-9_\-]+)$')

type Invoke = Callable[[str, Any], InvokeResult]


@dataclass(frozen=True)
class _Term:
    path: tuple[str, ...]
    value: float | str


class FilterPattern:
    """A parsed `{ $.a = 1 && $.b = "x" }` pattern."""

    def __init__(self, pattern: str) -> None:
        text = pattern.strip()
        if not (text.startswith("{") and text.endswith("}")):
            raise TemplateError(f"filter pattern {pattern!r}: only JSON patterns run locally")
        self.terms: list[_Term] = []
        for raw in text[1:-1].split("&&"):
            match = _TERM.match(raw.strip())
            if match is None:
                raise TemplateError(f"filter pattern {pattern!r}: term {raw.strip()!r} unsupported")
            path, value = match.groups()
            parsed: float | str = value[1:-1] if value.startswith('"') else _number_or_text(value)
            self.terms.append(_Term(tuple(path.split(".")), parsed))

    def matches(self, line: str) -> bool:
        if not line.startswith("{"):
            return False
        try:
            document = json.loads(line)
        except ValueError:
            return False
        return all(_value_at(document, term.path) == term.value for term in self.terms)


def _number_or_text(value: str) -> float | str:
    try:
        return float(value)
    except ValueError:
        return value


def _value_at(document: Any, path: tuple[str, ...]) -> Any:
    for name in path:
        if not isinstance(document, Mapping) or name not in document:
            return None
        document = document[name]
    # CloudWatch compares numbers as numbers: 1 matches 1.0.
    if isinstance(document, bool):
        return str(document).lower()
    return float(document) if isinstance(document, int | float) else document


@dataclass(frozen=True)
class _Route:
    destination: str  # the subscribed function's logical id
    filter_name: str
    log_group: str
    pattern: FilterPattern


class LogSubscriptions:
    """Routes matching log lines of the template's functions to their subscribers."""

    def __init__(self, template: StackTemplate, invoke: Invoke, console: LogSink) -> None:
        self._invoke = invoke
        self._console = console
        self._routes: dict[str, list[_Route]] = {}
        for function in template.functions.values():
            for subscription in function.log_subscriptions:
                self._routes.setdefault(subscription.log_group, []).append(
                    _Route(
                        destination=function.logical_id,
                        filter_name=f"{template.stack_name}-{function.logical_id}-"
                        f"{subscription.name}",
                        log_group=subscription.log_group,
                        pattern=FilterPattern(subscription.filter_pattern),
                    )
                )
        self._pending: dict[tuple[_Route, str], list[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="log-subscriptions", daemon=True)

    @property
    def count(self) -> int:
        return sum(len(routes) for routes in self._routes.values())

    def sink_for(self, function: Function, console: LogSink) -> LogSink:
        """The function's log: the console, plus the subscriptions of its log group."""
        routes = self._routes.get(function.log_group, [])
        if not routes:
            return console
        # The runtime prefixes each line with the function's name for the console.
        prefix = f"[{function.logical_id}] "

        def tee(line: str) -> None:
            console(line)
            message = line.removeprefix(prefix)
            for route in routes:
                if route.pattern.matches(message):
                    self._offer(route, f"local/{function.logical_id}", message)

        return tee

    def _offer(self, route: _Route, stream: str, message: str) -> None:
        event = {
            "id": str(next(self._ids)),
            "timestamp": int(time.time() * 1000),
            "message": message,
        }
        with self._lock:
            self._pending.setdefault((route, stream), []).append(event)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        self.flush()

    def _run(self) -> None:
        while not self._stop.wait(FLUSH_SECONDS):
            self.flush()

    def flush(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, {}
        for (route, stream), events in pending.items():
            for first in range(0, len(events), MAX_EVENTS_PER_BATCH):
                self._deliver(route, stream, events[first : first + MAX_EVENTS_PER_BATCH])

    def _deliver(self, route: _Route, stream: str, events: list[dict[str, Any]]) -> None:
        payload = {
            "messageType": "DATA_MESSAGE",
            "owner": ACCOUNT_ID,
            "logGroup": route.log_group,
            "logStream": stream,
            "subscriptionFilters": [route.filter_name],
            "logEvents": events,
        }
        data = base64.b64encode(gzip.compress(json.dumps(payload).encode("utf-8"))).decode()
        result: InvokeResult | None = None
        for _ in range(ATTEMPTS):
            result = self._invoke(route.destination, {"awslogs": {"data": data}})
            if result.ok:
                return
        detail = f"{result.error_type}: {result.error_message}" if result else "not invoked"
        self._console(
            f"[log-subscriptions] {len(events)} lines for {route.destination} lost after "
            f"{ATTEMPTS} attempts ({detail}); in AWS they would reach its dead-letter queue"
        )
