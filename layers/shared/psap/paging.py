"""Page arithmetic shared by every paged list: 0-based pages, a default and a silent cap.

Neutral ground: the stores, the listing logic and the HTTP layer all import it, and it
imports neither of them.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Self

from psap.errors import InvalidParameter
from psap.models import WireModel


@dataclass(frozen=True)
class PageRequest:
    page: int
    size: int  # effective size, after the cap

    @classmethod
    def capped(cls, page: int, size: int, cap: int) -> "PageRequest":
        return cls(page=page, size=min(size, cap))

    @property
    def offset(self) -> int:
        return self.page * self.size


def total_pages(total_items: int, size: int) -> int:
    return (total_items + size - 1) // size if size > 0 else 0


class SpringSort(WireModel):
    """Spring Data's sort summary."""

    empty: bool
    sorted: bool
    unsorted: bool

    @classmethod
    def of(cls, is_sorted: bool) -> "SpringSort":
        return cls(empty=not is_sorted, sorted=is_sorted, unsorted=not is_sorted)


class SpringPageable(WireModel):
    offset: int
    sort: SpringSort
    page_number: int
    page_size: int
    paged: bool
    unpaged: bool


class SpringPage[ItemT](WireModel):
    """Spring-style page (users, evaluations), with Spring Data's arithmetic: `last` is true
    when no page follows (also past the end), `totalPages` is 0 for no elements."""

    total_elements: int
    total_pages: int
    first: bool
    last: bool
    size: int
    content: list[ItemT]
    number: int
    number_of_elements: int
    empty: bool
    sort: SpringSort
    pageable: SpringPageable

    @classmethod
    def of(cls, content: list[ItemT], request: PageRequest, total: int, is_sorted: bool) -> Self:
        pages = total_pages(total, request.size)
        sort = SpringSort.of(is_sorted)
        return cls(
            total_elements=total,
            total_pages=pages,
            first=request.page == 0,
            last=request.page + 1 >= pages,
            size=request.size,
            content=content,
            number=request.page,
            number_of_elements=len(content),
            empty=not content,
            sort=sort,
            pageable=SpringPageable(
                offset=request.offset,
                sort=sort,
                page_number=request.page,
                page_size=request.size,
                paged=True,
                unpaged=False,
            ),
        )


@dataclass(frozen=True)
class SortOrder:
    property: str
    ascending: bool


def sort_values(allowed: Sequence[str]) -> list[str]:
    """Every value a `sort` parameter may take: the enum the OpenAPI document lists."""
    return [value for name in allowed for value in (name, f"{name},asc", f"{name},desc")]


def parse_sort(text: str | None, allowed: Sequence[str]) -> SortOrder | None:
    """Reads a Spring-style `sort` parameter, `property` or `property,asc|desc` (ascending by
    default), strictly one of sort_values(allowed). None when the parameter is absent."""
    if text is None:
        return None
    if text not in sort_values(allowed):
        raise InvalidParameter("sort", f"must be one of {', '.join(sort_values(allowed))}")
    name, _, direction = text.partition(",")
    return SortOrder(name, direction != "desc")
