"""The admin API's rate limits live in DynamoDB (psap.storage.rate_limits): concurrent callers
in any number of containers share one count, and a full window refuses until it ends."""

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

from psap.config import cad_table
from psap.errors import RateLimited
from psap.storage.rate_limits import RateLimit, consume

RATE = RateLimit("signing secret rotation", limit=5, window_seconds=3600)
NOW = datetime(2026, 11, 23, 2, 30, tzinfo=UTC)


def test_concurrent_callers_pass_exactly_the_limit(aws_server: str) -> None:
    # Given 20 callers at once against a real (serializing) DynamoDB endpoint
    def attempt(_: int) -> bool:
        try:
            consume(cad_table(), "T#7#RATE", "rotate-secret", rate=RATE, now=NOW)
        except RateLimited:
            return False
        return True

    with ThreadPoolExecutor(max_workers=8) as pool:
        passed = list(pool.map(attempt, range(20)))
    # Then exactly `limit` of them pass
    assert passed.count(True) == RATE.limit


def test_a_full_window_refuses_until_the_next_one_and_says_when(aws_server: str) -> None:
    for _ in range(RATE.limit):
        consume(cad_table(), "T#7#RATE", "rotate-secret", rate=RATE, now=NOW)
    with pytest.raises(RateLimited) as refused:
        consume(cad_table(), "T#7#RATE", "rotate-secret", rate=RATE, now=NOW)
    assert refused.value.retry_after_seconds == 30 * 60  # 02:30 -> the window ends at 03:00
    assert "5 per 1 h" in refused.value.info
    # Another subject has its own count; the next window starts afresh
    consume(cad_table(), "T#8#RATE", "rotate-secret", rate=RATE, now=NOW)
    consume(cad_table(), "T#7#RATE", "rotate-secret", rate=RATE, now=NOW + timedelta(minutes=30))
