"""GET /api/v1/external/user: the tenant's users, a Spring-style page."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query

from psap import list_parameters
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.paging import PageQuery, sort_values
from psap.users import listing
from psap.users.listing import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, SORT_FIELDS
from psap.users.models import UserPage
from psap.users.store import UserFilters

app = create_resolver()


@app.get(
    "/api/v1/external/user",
    summary="List users",
    description=(
        "The tenant's users as a Spring-style page. Without `sort`, users come by id and the "
        f"page's sort says unsorted. A size above {MAX_PAGE_SIZE} is silently reduced to "
        f"{MAX_PAGE_SIZE}. Filters combine; a user whose value is null matches no filter on it."
    ),
    operation_id="listUsers",
    tags=["Users"],
)
# The parameters are the spec's query string, one argument each so that the OpenAPI document
# lists them; the resolver passes them by name.
def list_users(  # noqa: PLR0913
    *,
    page: Annotated[int, list_parameters.page_number()] = 0,
    size: Annotated[int, list_parameters.page_size(MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
    sort: Annotated[
        str | None,
        Query(
            description="`property` or `property,asc|desc`; property: " + ", ".join(SORT_FIELDS),
            json_schema_extra={"enum": sort_values(SORT_FIELDS)},
        ),
    ] = None,
    email: Annotated[str | None, Query(description="Exact email, case-insensitive")] = None,
    login_enabled: Annotated[bool | None, Query(alias="loginEnabled")] = None,
    is_supervisor: Annotated[bool | None, Query(alias="isSupervisor")] = None,
) -> UserPage:
    principal = current_principal(app)
    filters = UserFilters(email=email, login_enabled=login_enabled, is_supervisor=is_supervisor)
    return listing.list_users(
        principal.tenant_id, paging=PageQuery(page, size, sort), filters=filters
    )


handler = lambda_handler(app)
