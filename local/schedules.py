"""Schedule events: one timer thread per `Type: Schedule` event of the template with a
`rate(...)` expression, invoking the function with an EventBridge scheduled event, as
EventBridge would (cron expressions are not driven locally)."""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from local.runtime import InvokeResult, print_line
from local.template import REGION, StackTemplate, load_yaml

Invoke = Callable[[str, Any], InvokeResult]
_RATE: Final = re.compile(r"^rate\((\d+)\s+(minute|minutes|hour|hours|day|days)\)$")
_SECONDS: Final = {"minute": 60, "hour": 3600, "day": 86400}


@dataclass(frozen=True)
class ScheduleEvent:
    function_id: str
    name: str
    period_seconds: int


def schedule_events(template_path: Path, template: StackTemplate) -> list[ScheduleEvent]:
    """The rate-based Schedule events of the template's functions."""
    document = load_yaml(template_path)
    events: list[ScheduleEvent] = []
    for function_id in template.functions:
        properties = document["Resources"][function_id].get("Properties") or {}
        for name, event in (properties.get("Events") or {}).items():
            if event.get("Type") != "Schedule":
                continue
            expression = str((event.get("Properties") or {}).get("Schedule", "")).strip()
            match = _RATE.match(expression)
            if match is None:
                continue
            unit = match.group(2).rstrip("s")
            events.append(ScheduleEvent(function_id, name, int(match.group(1)) * _SECONDS[unit]))
    return events


def scheduled_event(rule: str) -> dict[str, Any]:
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": "123456789012",
        "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": REGION,
        "resources": [f"arn:aws:events:{REGION}:123456789012:rule/{rule}"],
        "detail": {},
    }


class ScheduleDriver:
    """Invokes each scheduled function every period until stopped."""

    def __init__(self, events: list[ScheduleEvent], invoke: Invoke) -> None:
        self.events = events
        self._invoke = invoke
        self._stopped = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for event in self.events:
            thread = threading.Thread(
                target=self._run, args=(event,), name=f"schedule-{event.name}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def _run(self, event: ScheduleEvent) -> None:
        while not self._stopped.wait(event.period_seconds):
            result = self._invoke(event.function_id, scheduled_event(event.name))
            if not result.ok:
                print_line(f"schedule {event.name}: {result.error_type}: {result.error_message}")

    def stop(self) -> None:
        self._stopped.set()
        for thread in self._threads:
            thread.join(timeout=5)
