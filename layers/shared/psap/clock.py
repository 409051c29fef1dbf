"""Time in the spec's formats: `<ts>` is ISO 8601 UTC with milliseconds and a `Z`."""

from datetime import UTC, datetime


def utc_now() -> datetime:
    return datetime.now(UTC)


def format_timestamp(moment: datetime) -> str:
    """`2026-11-23T02:32:15.123Z`: one fixed width, so stored strings also sort by time."""
    moment = moment.astimezone(UTC)
    return f"{_seconds(moment)}.{moment.microsecond // 1000:03d}Z"


def format_timestamp_micro(moment: datetime) -> str:
    """`2026-11-23T02:32:15.123456Z`: for keys that order updates closer than a millisecond."""
    moment = moment.astimezone(UTC)
    return f"{_seconds(moment)}.{moment.microsecond:06d}Z"


def _seconds(moment: datetime) -> str:
    # Not strftime: its `%Y` does not pad years before 1000 on glibc ("917-09-23"), which
    # breaks both the spec's format and the fixed width that sorting relies on.
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T"
        f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
    )


def parse_timestamp(text: str) -> datetime:
    """The UTC instant of an ISO 8601 time; ValueError when it is not one, or when it falls
    outside years 1-9999 once in UTC (`0001-01-01T00:00:00+14:00`)."""
    parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError as error:
        raise ValueError(f"{text!r} is outside years 0001-9999 in UTC") from error
