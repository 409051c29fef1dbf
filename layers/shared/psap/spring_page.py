"""Spring Data's page shape (users, evaluations): the wire model over psap.paging's arithmetic."""

from typing import Self

from psap.models import WireModel
from psap.paging import PageRequest, total_pages


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
    def of(cls, content: list[ItemT], request: PageRequest, total: int, *, is_sorted: bool) -> Self:
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
