"""The retry schedule and what an attempt's outcome means for the delivery.

The schedule is stated for people once, in docs/webhooks.md ("Retries"), and a test keeps
that page equal to `RETRY_WAITS_SECONDS`. Each wait is jittered so that a CAD coming back
from an outage is not hit by every delivery at the same second.
"""

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from enum import StrEnum

# Waits before attempts 2..12 (attempt 1 is immediate).
RETRY_WAITS_SECONDS: tuple[int, ...] = (
    5,
    30,
    120,
    300,
    900,
    1800,
    3600,
    7200,
    14400,
    28800,
    28800,
)
MAX_ATTEMPTS = len(RETRY_WAITS_SECONDS) + 1
JITTER = 0.2
OVERLOAD_MINIMUM_SECONDS = 60
RETRY_AFTER_CAP_SECONDS = 3600
OVERLOAD_STATUSES = frozenset({429, 502, 503, 504})
GONE = 410


class ErrorClass(StrEnum):
    """Why an attempt failed, as recorded on the attempt."""

    DNS = "dns"
    CONNECT = "connect"
    TLS = "tls"
    TIMEOUT = "timeout"
    HTTP = "http"  # an answer that is not 2xx (a redirect included: never followed)
    PROTOCOL = "protocol"  # not a valid HTTP answer
    BLOCKED = "blocked"  # the address is not one we may send to


@dataclass(frozen=True)
class AttemptOutcome:
    """What one HTTP attempt gave: a status code, or an error class without one."""

    status_code: int | None
    error_class: ErrorClass | None
    latency_ms: int
    response_excerpt: str = ""
    retry_after_seconds: int | None = None
    error_detail: str = ""

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


class Verdict(StrEnum):
    DELIVERED = "DELIVERED"
    RETRY = "RETRY"
    GONE = "GONE"  # 410: stop, flag the connector
    EXHAUSTED = "EXHAUSTED"  # the last attempt failed: dead-letter state


@dataclass(frozen=True)
class NextStep:
    verdict: Verdict
    next_attempt_at: datetime | None = None


def scheduled_wait(attempts_made: int, rng: random.Random | None = None) -> float:
    """Seconds to wait after the `attempts_made`-th failed attempt of a run (1-based)."""
    base = RETRY_WAITS_SECONDS[attempts_made - 1]
    draw = (rng or _RANDOM).uniform(1 - JITTER, 1 + JITTER)
    return base * draw


def next_step(
    outcome: AttemptOutcome,
    attempts_made: int,
    now: datetime,
    *,
    rng: random.Random | None = None,
) -> NextStep:
    """Decides the delivery's fate after its `attempts_made`-th attempt of this run."""
    if outcome.succeeded:
        return NextStep(Verdict.DELIVERED)
    if outcome.status_code == GONE:
        return NextStep(Verdict.GONE)
    if attempts_made >= MAX_ATTEMPTS:
        return NextStep(Verdict.EXHAUSTED)
    wait = scheduled_wait(attempts_made, rng)
    overloaded = (
        outcome.status_code in OVERLOAD_STATUSES or outcome.error_class is ErrorClass.TIMEOUT
    )
    if overloaded:
        wait = max(wait, OVERLOAD_MINIMUM_SECONDS)
    if outcome.retry_after_seconds is not None:
        wait = max(wait, min(outcome.retry_after_seconds, RETRY_AFTER_CAP_SECONDS))
    return NextStep(Verdict.RETRY, now + timedelta(seconds=wait))


def parse_retry_after(value: str | None, now: datetime) -> int | None:
    """Retry-After as delay-seconds or an HTTP-date; None when absent or unreadable."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return int(text)
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        return None
    return max(0, int((moment - now).total_seconds()))


_RANDOM = random.Random()  # noqa: S311 - jitter, not cryptography
