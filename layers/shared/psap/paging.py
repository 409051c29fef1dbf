"""Page arithmetic shared by every paged list: 0-based pages, a default and a silent cap.

Neutral ground: the stores, the listing logic and the HTTP layer all import it, and it
imports neither of them, nor pydantic (the Spring page model is psap.spring_page).
"""

from collections.abc import Sequence
from dataclasses import dataclass

from psap.errors import InvalidParameter


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


@dataclass(frozen=True)
class PageQuery:
    """A list request's paging as the client sent it: page, size before the cap, sort."""

    page: int
    size: int
    sort: str | None = None

    def capped(self, cap: int) -> PageRequest:
        return PageRequest.capped(self.page, self.size, cap)


def total_pages(total_items: int, size: int) -> int:
    return (total_items + size - 1) // size if size > 0 else 0


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
