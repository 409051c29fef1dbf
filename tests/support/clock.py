"""A clock the tests move: retry waits are hours, and tests do not sleep them."""

from datetime import UTC, datetime, timedelta

T0 = datetime(2026, 11, 23, 2, 32, 15, tzinfo=UTC)


class Clock:
    """psap.clock.utc_now, moved by the test."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)
