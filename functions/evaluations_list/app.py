"""GET /api/v1/external/qa/user/{userId}/evaluations: a user's QA evaluations, paged."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from psap import list_parameters
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.models import INT64_MAX, StrictDate
from psap.paging import PageQuery, sort_values
from psap.qa import listing
from psap.qa.listing import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, SORT_FIELDS
from psap.qa.models import EvaluationPage, EvaluationStatus
from psap.qa.store import DayRange, EvaluationFilters

app = create_resolver()


@app.get(
    "/api/v1/external/qa/user/<userId>/evaluations",
    summary="List a user's QA evaluations",
    description=(
        "The user's evaluations, deleted ones excluded, as a Spring-style page of full "
        "evaluations (results, protocol results, transcript segments). Newest first by "
        f"default. A size above {MAX_PAGE_SIZE} is silently reduced to {MAX_PAGE_SIZE}. "
        "`from` and `to` are inclusive UTC days of createdAt. An unknown user, or one of "
        "another tenant, is 404."
    ),
    operation_id="listEvaluations",
    tags=["Quality assurance"],
)
# The parameters are the spec's query string, one argument each so that the OpenAPI document
# lists them; the resolver passes them by name.
def list_evaluations(  # noqa: PLR0913
    *,
    user_id: Annotated[int, Path(alias="userId", ge=0, le=INT64_MAX, description="The user's id")],
    page: Annotated[int, list_parameters.page_number()] = 0,
    size: Annotated[int, list_parameters.page_size(MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
    sort: Annotated[
        str | None,
        Query(
            description="`createdAt,desc` (default) or `createdAt,asc`",
            json_schema_extra={"enum": sort_values(SORT_FIELDS)},
        ),
    ] = None,
    status: Annotated[EvaluationStatus | None, Query(description="Exact status")] = None,
    first_day: Annotated[
        StrictDate | None, Query(alias="from", description="Created on or after (YYYY-MM-DD)")
    ] = None,
    last_day: Annotated[
        StrictDate | None, Query(alias="to", description="Created on or before (YYYY-MM-DD)")
    ] = None,
    is_training: Annotated[
        bool | None, Query(alias="isTraining", description="Training evaluations or not")
    ] = None,
) -> EvaluationPage:
    principal = current_principal(app)
    filters = EvaluationFilters(
        status=status, is_training=is_training, created=DayRange(first_day, last_day)
    )
    return listing.list_evaluations(
        principal.tenant_id, user_id, paging=PageQuery(page, size, sort), filters=filters
    )


handler = lambda_handler(app)
