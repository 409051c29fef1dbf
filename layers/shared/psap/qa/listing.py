"""List a user's QA evaluations: a Spring-style page (query parameters are ours)."""

from datetime import date

from psap.errors import InvalidParameter, NotFound
from psap.paging import PageRequest, parse_sort
from psap.qa import store
from psap.qa.models import EvaluationPage, EvaluationStatus
from psap.qa.store import EvaluationFilters

DEFAULT_PAGE_SIZE = 20
# Full evaluations carry transcripts: 50 of them stay well inside Lambda's 6 MB response.
MAX_PAGE_SIZE = 50
SORT_FIELDS = ("createdAt",)


def list_evaluations(
    tenant_id: int,
    user_id: int,
    page: int,
    size: int,
    sort: str | None,
    status: EvaluationStatus | None,
    first_day: date | None,
    last_day: date | None,
    is_training: bool | None,
) -> EvaluationPage:
    """Newest first unless `sort=createdAt,asc`; deleted evaluations are never listed."""
    if first_day is not None and last_day is not None and first_day > last_day:
        raise InvalidParameter("from", "must not be after 'to'")
    request = PageRequest.capped(page, size, MAX_PAGE_SIZE)
    order = parse_sort(sort, SORT_FIELDS)
    newest_first = not order.ascending if order else True
    filters = EvaluationFilters(status, is_training, first_day, last_day)
    listed = store.list_evaluations(tenant_id, user_id, filters, newest_first, request)
    if listed is None:
        raise NotFound(f"user {user_id} not found")
    evaluations, total = listed
    return EvaluationPage.of(evaluations, request, total, is_sorted=True)
