"""Calendar counters for date-range totals: which counter items an inclusive day range
[first, last] needs.

Each listed evaluation adds 1 to the counter of its year (`Y#2026`), to its month
(`M#2026-03`, attribute `count`) and to its day inside that month item (attribute `d15`),
beside `ALL`. A range is then whole years (their `count`), whole months (their `count`) and
at most two partial months at its ends (the sum of their day attributes): at most
11 + (whole years) + 11 small items, in at most three Queries of one partition, whatever the
number of evaluations.
"""

import calendar
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from psap.storage.listing import COUNT, KeyRange

ALL = "ALL"


def year_key(year: int) -> str:
    return f"Y#{year:04d}"


def month_key(year: int, month: int) -> str:
    return f"M#{year:04d}-{month:02d}"


def day_attribute(day: int) -> str:
    return f"d{day:02d}"


def counted(day: date) -> list[tuple[str, str]]:
    """(sort key, attribute) of every number one evaluation created on `day` adds 1 to."""
    month = month_key(day.year, day.month)
    return [
        (ALL, COUNT),
        (year_key(day.year), COUNT),
        (month, COUNT),
        (month, day_attribute(day.day)),
    ]


@dataclass(frozen=True)
class Cover:
    """The counter items of a day range: sort key ranges to Query, and for the partial
    months among them, the days (first, last) to add up instead of their `count`."""

    ranges: list[KeyRange] = field(default_factory=list)
    partial: dict[str, tuple[int, int]] = field(default_factory=dict)

    def total(self, items: list[dict[str, Any]]) -> int:
        total = 0
        for item in items:
            days = self.partial.get(str(item["sk"]))
            if days is None:
                total += int(item.get(COUNT, 0))
            else:
                first, last = days
                total += sum(int(item.get(day_attribute(d), 0)) for d in range(first, last + 1))
        return total


def _month_end(day: date) -> int:
    return calendar.monthrange(day.year, day.month)[1]


def covering(first: date, last: date) -> Cover:
    if first > last:
        return Cover()
    same_month = (first.year, first.month) == (last.year, last.month)
    partial: dict[str, tuple[int, int]] = {}
    first_month = month_key(first.year, first.month)
    last_month = month_key(last.year, last.month)
    if same_month:
        if first.day != 1 or last.day != _month_end(last):
            partial[first_month] = (first.day, last.day)
    else:
        if first.day != 1:
            partial[first_month] = (first.day, _month_end(first))
        if last.day != _month_end(last):
            partial[last_month] = (1, last.day)
    ranges: list[KeyRange] = []
    whole_first_year = first.month == 1 and first_month not in partial
    whole_last_year = last.month == 12 and last_month not in partial
    if first.year == last.year:
        if whole_first_year and whole_last_year:
            ranges.append(KeyRange(year_key(first.year), year_key(first.year)))
        else:
            ranges.append(KeyRange(first_month, last_month))
        return Cover(ranges, partial)
    if not whole_first_year:
        ranges.append(KeyRange(first_month, month_key(first.year, 12)))
    years = (
        first.year if whole_first_year else first.year + 1,
        last.year if whole_last_year else last.year - 1,
    )
    if years[0] <= years[1]:
        ranges.append(KeyRange(year_key(years[0]), year_key(years[1])))
    if not whole_last_year:
        ranges.append(KeyRange(month_key(last.year, 1), last_month))
    return Cover(ranges, partial)
