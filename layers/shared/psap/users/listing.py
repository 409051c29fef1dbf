"""List users: a Spring-style page of the tenant's users (query parameters are ours)."""

from psap.paging import PageQuery, parse_sort
from psap.users import store
from psap.users.models import UserPage
from psap.users.store import UserFilters, UserSortField

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 200
SORT_FIELDS = tuple(field.value for field in UserSortField)


def list_users(tenant_id: int, *, paging: PageQuery, filters: UserFilters) -> UserPage:
    """Without `sort`, users come by id and the page says it is unsorted (as Spring does)."""
    request = paging.capped(MAX_PAGE_SIZE)
    order = parse_sort(paging.sort, SORT_FIELDS)
    field = UserSortField(order.property) if order else UserSortField.ID
    ascending = order.ascending if order else True
    users, total = store.list_users(
        tenant_id, filters, sort=field, ascending=ascending, page=request
    )
    return UserPage.of(users, request, total, is_sorted=order is not None)
