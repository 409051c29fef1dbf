"""Facts the documentation states for people and the code states for the machine agree."""

import re
from pathlib import Path

from psap.webhooks.schedule import JITTER, MAX_ATTEMPTS, RETRY_WAITS_SECONDS

ROOT = Path(__file__).resolve().parents[2]
_UNIT_SECONDS = {"s": 1, "min": 60, "h": 3600}


def _waits_in_seconds(listed: str) -> list[int]:
    waits = []
    for wait in listed.split(","):
        amount, _, unit = wait.strip().partition(" ")
        waits.append(int(amount) * _UNIT_SECONDS[unit] if unit else int(amount))
    return waits


def test_the_retry_schedule_page_states_the_schedule_the_dispatcher_runs() -> None:
    # Given the one page that states the schedule (design.md and the decisions link to it)
    page = (ROOT / "docs" / "webhooks.md").read_text(encoding="utf-8")
    retries = page[page.index("## Retries") :]
    # When its sentence is read
    stated = re.search(
        r"(\w+) attempts over about 24 hours \(([^)]*?), each wait \+-(\d+) ?%", retries
    )
    assert stated is not None, "docs/webhooks.md no longer states the schedule in its sentence"
    attempts, listed, jitter = stated.groups()
    # Then it is the schedule of psap.webhooks.schedule
    assert {"Twelve": 12}.get(attempts) == MAX_ATTEMPTS
    assert _waits_in_seconds(listed) == [0, *RETRY_WAITS_SECONDS]
    assert int(jitter) / 100 == JITTER
