"""Page arithmetic shared by every paged list: 0-based pages, a default and a silent cap."""

from dataclasses import dataclass


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
