"""Pagination arithmetic, timestamps and DynamoDB attribute conversion."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from psap.clock import format_timestamp, parse_timestamp
from psap.paging import PageRequest, total_pages
from psap.storage.attributes import from_item, marshal, to_item, unmarshal
from psap.storage.ordering import SourceOrder


@pytest.mark.parametrize(
    ("total", "size", "pages"), [(0, 50, 0), (1, 50, 1), (50, 50, 1), (51, 50, 2), (200, 200, 1)]
)
def test_total_pages(total: int, size: int, pages: int) -> None:
    assert total_pages(total, size) == pages


@pytest.mark.spec("limits-page-size-cap")
def test_page_request_caps_size_silently_and_computes_offset() -> None:
    request = PageRequest.capped(page=3, size=5000, cap=200)
    assert (request.size, request.offset) == (200, 600)
    assert PageRequest.capped(page=0, size=7, cap=200).size == 7


@pytest.mark.spec("resources-timestamps-and-dates")
def test_timestamps_are_iso_8601_utc_with_milliseconds_and_z() -> None:
    moment = datetime(2026, 11, 23, 4, 32, 15, 123456, tzinfo=timezone(timedelta(hours=2)))
    assert format_timestamp(moment) == "2026-11-23T02:32:15.123Z"
    assert parse_timestamp("2026-11-23T02:32:15.123Z") == datetime(
        2026, 11, 23, 2, 32, 15, 123000, tzinfo=UTC
    )


def test_timestamps_keep_four_digit_years_so_every_one_has_the_same_width() -> None:
    # A caller may send any year; strftime on glibc writes year 917 as "917".
    moment = datetime(917, 9, 23, 12, 23, 6, 200000, tzinfo=UTC)
    assert format_timestamp(moment) == "0917-09-23T12:23:06.200Z"
    assert SourceOrder(moment, 7).key() == "0917-09-23T12:23:06.200000Z#00000000000000000007"
    assert format_timestamp(moment) < format_timestamp(datetime(2026, 1, 1, tzinfo=UTC))


def test_a_time_with_no_utc_instant_in_years_1_to_9999_is_a_value_error() -> None:
    # Callers turn ValueError into a 400 naming the field; an OverflowError would be a 500.
    with pytest.raises(ValueError, match="outside years 0001-9999"):
        parse_timestamp("0001-01-01T00:00:00+14:00")


def test_attribute_values_round_trip() -> None:
    value = {"s": "x", "n": 7, "f": 1.5, "b": True, "l": [1, "a", None], "m": {"k": False}}
    assert from_item(to_item(value)) == {**value, "l": [1, "a", None]}
    assert marshal(None) == {"NULL": True}
    assert unmarshal({"N": "12"}) == 12
    assert to_item({"gone": None, "kept": 0}) == {"kept": {"N": "0"}}
    with pytest.raises(TypeError):
        marshal(object())
