"""Page arithmetic shared by every paged list: 0-based pages, a default and a silent cap."""

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


def parse_sort(text: str | None, allowed: Sequence[str]) -> SortOrder | None:
    """Reads a Spring-style `sort` parameter, `property` or `property,asc|desc` (direction
    case-insensitive, ascending by default). None when the parameter is absent."""
    if text is None or not text.strip():
        return None
    parts = [part.strip() for part in text.split(",")]
    if len(parts) > 2:
        raise InvalidParameter("sort", "one property and an optional direction, e.g. 'id,desc'")
    name = parts[0]
    if name not in allowed:
        raise InvalidParameter("sort", f"'{name}' is not one of {', '.join(allowed)}")
    direction = parts[1].lower() if len(parts) == 2 else "asc"
    if direction not in {"asc", "desc"}:
        raise InvalidParameter("sort", "the direction must be asc or desc")
    return SortOrder(name, direction == "asc")
