"""Tenant-data logic without AWS: calendar counter ranges, task list levels, the Spring page,
sort parsing, the ordering guard's key, and compressed documents."""

import random
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest

from psap.errors import InvalidParameter
from psap.paging import PageRequest, SortOrder, parse_sort
from psap.qa.periods import Cover, counted, covering
from psap.spring_page import SpringPage
from psap.storage.documents import decode_document, encode_document, join, split, with_tenant
from psap.storage.listing import KeyRange
from psap.storage.ordering import SourceOrder
from psap.training.models import TaskList, TaskListItem, TaskListTemplateVersion
from psap.training.progress import Level, level, with_counters


def test_calendar_counters_cover_any_day_range_exactly() -> None:
    # Given year, month and day counters for 3 000 random days
    rng = random.Random(1)  # noqa: S311 - test data
    days = [date(2023, 1, 1) + timedelta(days=rng.randrange(1500)) for _ in range(3000)]
    items: dict[str, dict[str, Any]] = {}
    for day in days:
        for sk, attribute in counted(day):
            item = items.setdefault(sk, {"sk": sk})
            item[attribute] = item.get(attribute, 0) + 1
    for _ in range(2000):
        first = date(2022, 6, 1) + timedelta(days=rng.randrange(1900))
        last = first + timedelta(days=rng.randrange(-5, 900))
        cover = covering(first, last)
        read = [
            item for sk, item in items.items() if any(r.low <= sk <= r.high for r in cover.ranges)
        ]
        # Then the items of at most three ranges add up to a plain count
        assert cover.total(read) == sum(1 for day in days if first <= day <= last), (first, last)
        assert len(cover.ranges) <= 3
        assert len(read) <= 12 + 12 + (last.year - first.year + 1)


def test_whole_years_and_whole_months_need_no_day_counts() -> None:
    assert covering(date(2024, 1, 1), date(2025, 12, 31)) == Cover(
        [KeyRange("Y#2024", "Y#2025")], {}
    )
    assert covering(date(2024, 3, 1), date(2024, 4, 30)) == Cover(
        [KeyRange("M#2024-03", "M#2024-04")], {}
    )
    assert covering(date(2024, 3, 5), date(2024, 3, 9)) == Cover(
        [KeyRange("M#2024-03", "M#2024-03")], {"M#2024-03": (5, 9)}
    )
    assert covering(date.min, date.max) == Cover([KeyRange("Y#0001", "Y#9999")], {})
    assert covering(date(2024, 3, 2), date(2024, 3, 1)) == Cover()


@pytest.mark.parametrize(
    ("position", "columns", "expected"),
    [
        (None, 3, Level.NOT_STARTED),
        (0, 3, Level.NOT_STARTED),
        (1, 3, Level.EXPLAINED),
        (2, 3, Level.DEMONSTRATED),
        (3, 3, Level.PROFICIENT),
        (2, 2, Level.PROFICIENT),
        (3, None, Level.PROFICIENT),
        (4, 5, Level.DEMONSTRATED),
    ],
)
def test_an_items_level_is_the_trainers_column(
    position: int | None, columns: int | None, expected: Level
) -> None:
    assert level(position, columns) is expected


def test_task_list_counters_replace_what_a_source_said() -> None:
    items = [TaskListItem(id=n, trainer_column_position=p) for n, p in enumerate([0, 1, 2, 3, 3])]
    task_list = TaskList(
        id=1,
        items=items,
        total_items=50,
        proficient_item_count=9,
        task_list_template_version=TaskListTemplateVersion(column_count=3),
    )
    counted = with_counters(task_list)
    assert (
        counted.total_items,
        counted.not_started_item_count,
        counted.explained_item_count,
        counted.demonstrated_item_count,
        counted.proficient_item_count,
    ) == (5, 1, 1, 1, 2)


class IntPage(SpringPage[int]):
    pass


@pytest.mark.parametrize(
    ("page", "size", "total", "first", "last", "pages"),
    [
        (0, 20, 0, True, True, 0),
        (0, 20, 20, True, True, 1),
        (0, 20, 21, True, False, 2),
        (1, 20, 21, False, True, 2),
        (5, 20, 21, False, True, 2),  # past the end: Spring says last
    ],
)
def test_spring_page_arithmetic(
    page: int, size: int, total: int, first: bool, last: bool, pages: int
) -> None:
    content = list(range(max(0, min(size, total - page * size))))
    body = IntPage.of(content, PageRequest(page, size), total, is_sorted=False)
    assert (body.first, body.last, body.total_pages) == (first, last, pages)
    assert body.number_of_elements == len(content) and body.empty is (not content)
    assert body.pageable.offset == page * size


def test_sort_parameter_parsing() -> None:
    allowed = ("id", "lastName")
    assert parse_sort(None, allowed) is None
    assert parse_sort("lastName", allowed) == SortOrder("lastName", True)
    assert parse_sort("lastName,desc", allowed) == SortOrder("lastName", False)
    # Strictly the documented enum: no padding, no other case, no empty value.
    for bad in ("email", "id,up", "id,asc,x", " lastName , DESC ", "lastName,DESC", ""):
        with pytest.raises(InvalidParameter) as raised:
            parse_sort(bad, allowed)
        assert raised.value.parameter == "sort"


def test_source_order_keys_sort_as_time_then_sequence() -> None:
    base = datetime(2026, 1, 1, 12, tzinfo=UTC)
    orders = [
        SourceOrder(base, 2),
        SourceOrder(base + timedelta(microseconds=1)),
        SourceOrder(base),
        SourceOrder(base.astimezone(timezone(timedelta(hours=-5))) - timedelta(seconds=1), 9),
    ]
    assert sorted(orders, key=SourceOrder.key) == sorted(orders)
    with pytest.raises(ValueError, match="sequence"):
        SourceOrder(base, -1).key()


def test_documents_compress_split_and_rejoin() -> None:
    document = {"words": [{"word": f"w{n}", "start": n / 10} for n in range(5000)]}
    blob = encode_document(document)
    pieces = split(blob, 10_000)
    assert all(len(piece) <= 10_000 for piece in pieces) and len(pieces) > 1
    assert decode_document(join(pieces)) == document
    assert split(b"") == [b""]


def test_with_tenant_rewrites_every_nested_tenant_id() -> None:
    document = {"tenantId": 1, "user": {"tenantId": 1, "id": 5}, "list": [{"tenantId": 2}]}
    assert with_tenant(document, 9) == {
        "tenantId": 9,
        "user": {"tenantId": 9, "id": 5},
        "list": [{"tenantId": 9}],
    }
