"""List a user's QA evaluations: a Spring-style page (query parameters are ours)."""

from psap.errors import InvalidParameter, NotFound
from psap.paging import PageQuery, parse_sort
from psap.qa import store
from psap.qa.models import EvaluationPage
from psap.qa.store import EvaluationFilters

DEFAULT_PAGE_SIZE = 20
# Full evaluations carry transcripts: 50 of them stay well inside Lambda's 6 MB response.
MAX_PAGE_SIZE = 50
SORT_FIELDS = ("createdAt",)


def list_evaluations(
    tenant_id: int, user_id: int, *, paging: PageQuery, filters: EvaluationFilters
) -> EvaluationPage:
    """Newest first unless `sort=createdAt,asc`; deleted evaluations are never listed."""
    created = filters.created
    if created.first is not None and created.last is not None and created.first > created.last:
        raise InvalidParameter("from", "must not be after 'to'")
    request = paging.capped(MAX_PAGE_SIZE)
    order = parse_sort(paging.sort, SORT_FIELDS)
    newest_first = not order.ascending if order else True
    listed = store.list_evaluations(
        tenant_id, user_id, filters, newest_first=newest_first, page=request
    )
    if listed is None:
        raise NotFound(f"user {user_id} not found")
    evaluations, total = listed
    return EvaluationPage.of(evaluations, request, total, is_sorted=True)
