"""The retry schedule (DESIGN section 6): about 12 attempts over ~24 h with +-20% jitter,
only 2xx is success, >= 60 s after overload answers or a timeout, Retry-After honoured up to a
cap, 410 stops."""

import random
from datetime import UTC, datetime, timedelta

import pytest

from psap.webhooks.retry_policy import (
    MAX_ATTEMPTS,
    RETRY_AFTER_CAP_SECONDS,
    RETRY_WAITS_SECONDS,
    AttemptOutcome,
    ErrorClass,
    NextStep,
    Verdict,
    next_step,
    parse_retry_after,
)

NOW = datetime(2026, 11, 23, 2, 32, 15, tzinfo=UTC)


def answer(status: int | None, error: ErrorClass | None = None, retry_after: int | None = None):
    return AttemptOutcome(
        status,
        error or (None if status and status < 300 else ErrorClass.HTTP),
        5,
        retry_after_seconds=retry_after,
    )


def wait(step: NextStep) -> float:
    assert step.next_attempt_at is not None
    return (step.next_attempt_at - NOW).total_seconds()


def test_twelve_attempts_over_about_a_day() -> None:
    assert MAX_ATTEMPTS == 12
    assert RETRY_WAITS_SECONDS == (5, 30, 120, 300, 900, 1800, 3600, 7200, 14400, 28800, 28800)
    assert 23 * 3600 <= sum(RETRY_WAITS_SECONDS) <= 25 * 3600


@pytest.mark.parametrize("status", [200, 201, 202, 204, 299])
def test_any_2xx_is_delivered(status: int) -> None:
    assert next_step(answer(status), 1, NOW).verdict is Verdict.DELIVERED


@pytest.mark.parametrize("status", [301, 302, 400, 401, 404, 418, 500])
def test_anything_else_is_retried(status: int) -> None:
    step = next_step(answer(status), 1, NOW)
    assert step.verdict is Verdict.RETRY


def test_jitter_stays_within_20_percent_and_varies() -> None:
    rng = random.Random(7)  # noqa: S311 - jitter, not cryptography
    for attempt, base in enumerate(RETRY_WAITS_SECONDS, start=1):
        waits = {wait(next_step(answer(500), attempt, NOW, rng=rng)) for _ in range(50)}
        assert all(0.8 * base <= w <= 1.2 * base for w in waits)
        assert len(waits) > 1


def test_the_twelfth_failure_exhausts_the_delivery() -> None:
    assert next_step(answer(500), MAX_ATTEMPTS, NOW).verdict is Verdict.EXHAUSTED
    assert next_step(answer(500), MAX_ATTEMPTS - 1, NOW).verdict is Verdict.RETRY


def test_410_stops_at_once() -> None:
    assert next_step(answer(410), 1, NOW).verdict is Verdict.GONE


@pytest.mark.parametrize("status", [429, 502, 503, 504])
def test_overload_answers_wait_at_least_60_s(status: int) -> None:
    assert wait(next_step(answer(status), 1, NOW)) >= 60


def test_a_timeout_waits_at_least_60_s() -> None:
    assert wait(next_step(answer(None, ErrorClass.TIMEOUT), 1, NOW)) >= 60


def test_retry_after_is_honoured_up_to_the_cap() -> None:
    assert wait(next_step(answer(503, retry_after=900), 1, NOW)) >= 900
    assert wait(next_step(answer(503, retry_after=10**7), 1, NOW)) <= RETRY_AFTER_CAP_SECONDS


def test_retry_after_never_shortens_the_schedule() -> None:
    assert wait(next_step(answer(503, retry_after=1), 9, NOW)) >= 0.8 * 14400


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert parse_retry_after("120", NOW) == 120
    later = NOW + timedelta(minutes=10)
    assert parse_retry_after(later.strftime("%a, %d %b %Y %H:%M:%S GMT"), NOW) == 600
    assert parse_retry_after("soon", NOW) is None
    assert parse_retry_after(None, NOW) is None
