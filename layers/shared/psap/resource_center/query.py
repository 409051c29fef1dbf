"""The search query: `q`, paging and filters, validated once (400 ErrorInfo naming the
parameter) before any index or table is touched."""

from dataclasses import dataclass

from psap.errors import InvalidParameter
from psap.resource_center.models import ItemType

MAX_QUERY_LENGTH = 500
DEFAULT_PAGE_SIZE = 10
MAX_PAGE_SIZE = 50
MAX_CATEGORY_LENGTH = 200


@dataclass(frozen=True)
class SearchQuery:
    text: str  # trimmed, 1-500 characters
    page: int  # 0-based
    page_size: int  # effective, after the cap
    item_type: ItemType | None
    category: str | None

    @property
    def offset(self) -> int:
        return self.page * self.page_size


def parse_search_query(
    q: str | None,
    page: int = 0,
    page_size: int = DEFAULT_PAGE_SIZE,
    *,
    item_type: str | ItemType | None = None,
    category: str | None = None,
) -> SearchQuery:
    """Validates and normalizes the parameters. A pageSize above 50 is silently reduced to 50,
    as the knowledge list does with its size; everything else out of range is a 400."""
    text = (q or "").strip()
    if not text:
        raise InvalidParameter("q", "is required and must not be blank")
    if len(text) > MAX_QUERY_LENGTH:
        raise InvalidParameter("q", f"must be at most {MAX_QUERY_LENGTH} characters")
    if page < 0:
        raise InvalidParameter("page", "must be 0 or greater")
    if page_size < 1:
        raise InvalidParameter("pageSize", "must be 1 or greater")
    parsed_type: ItemType | None = None
    if item_type is not None:
        try:
            parsed_type = ItemType(item_type)
        except ValueError as error:
            allowed = ", ".join(kind.value for kind in ItemType)
            raise InvalidParameter("itemType", f"must be one of {allowed}") from error
    if category is not None:
        category = category.strip()
        if not category or len(category) > MAX_CATEGORY_LENGTH:
            raise InvalidParameter(
                "category", f"must be 1-{MAX_CATEGORY_LENGTH} characters when given"
            )
    return SearchQuery(
        text=text,
        page=page,
        page_size=min(page_size, MAX_PAGE_SIZE),
        item_type=parsed_type,
        category=category,
    )
