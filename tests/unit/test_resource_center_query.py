"""Search query validation: q is required, 1-500 characters after trimming; page is
0-based; pageSize defaults to 10 and is capped at 50; itemType and category are optional
filters. Every error names its parameter."""

import pytest

from psap.errors import InvalidParameter
from psap.resource_center.models import ItemType
from psap.resource_center.query import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    MAX_QUERY_LENGTH,
    parse_search_query,
)


def test_defaults_are_page_0_and_page_size_10_without_filters() -> None:
    query = parse_search_query("cardiac arrest")
    assert (query.page, query.page_size, query.item_type, query.category) == (0, 10, None, None)
    assert DEFAULT_PAGE_SIZE == 10


def test_q_is_trimmed() -> None:
    assert parse_search_query("  ALI rebid \n").text == "ALI rebid"


@pytest.mark.parametrize("text", [None, "", "   ", "\t\n"])
def test_a_missing_or_blank_q_is_invalid_and_named(text: str | None) -> None:
    with pytest.raises(InvalidParameter) as raised:
        parse_search_query(text)
    assert raised.value.parameter == "q"
    assert "'q'" in raised.value.info


def test_q_may_be_500_characters_after_trimming_but_not_501() -> None:
    assert MAX_QUERY_LENGTH == 500
    assert len(parse_search_query("  " + "a" * 500 + "  ").text) == 500
    with pytest.raises(InvalidParameter) as raised:
        parse_search_query("a" * 501)
    assert raised.value.parameter == "q"


def test_page_size_above_50_is_silently_reduced_to_50() -> None:
    assert MAX_PAGE_SIZE == 50
    assert parse_search_query("x", page_size=51).page_size == 50
    assert parse_search_query("x", page_size=10_000).page_size == 50
    assert parse_search_query("x", page_size=50).page_size == 50


@pytest.mark.parametrize(
    ("arguments", "parameter"),
    [
        ({"page": -1}, "page"),
        ({"page_size": 0}, "pageSize"),
        ({"page_size": -3}, "pageSize"),
        ({"item_type": "VIDEO"}, "itemType"),
        ({"item_type": "help_article"}, "itemType"),
        ({"category": "  "}, "category"),
        ({"category": "c" * 201}, "category"),
    ],
)
def test_out_of_range_parameters_are_invalid_and_named(
    arguments: dict[str, object], parameter: str
) -> None:
    with pytest.raises(InvalidParameter) as raised:
        parse_search_query("x", **arguments)  # type: ignore[arg-type]
    assert raised.value.parameter == parameter


def test_filters_are_parsed_and_the_offset_follows_the_page() -> None:
    query = parse_search_query(
        "x", page=3, page_size=20, item_type="HELP_ARTICLE", category=" CAD "
    )
    assert query.item_type is ItemType.HELP_ARTICLE
    assert query.category == "CAD"
    assert query.offset == 60
