"""GET /api/v1/external/admin/credentials: the tenant's credentials, never their tokens."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query

from psap import list_parameters
from psap.auth import openapi_text as text
from psap.auth.issuing import (
    CURSOR_PATTERN,
    LIST_PAGE_DEFAULT,
    LIST_PAGE_MAX,
    CredentialPage,
    list_page,
)
from psap.http.resolver import create_resolver, current_principal, lambda_handler

app = create_resolver()


@app.get(
    "/api/v1/external/admin/credentials",
    summary="List the tenant's credentials",
    description=text.LIST,
    operation_id="listCredentials",
    tags=[text.TAG_CREDENTIALS],
)
def list_credentials(
    limit: Annotated[int, Query(ge=1, le=LIST_PAGE_MAX)] = LIST_PAGE_DEFAULT,
    cursor: Annotated[str | None, list_parameters.cursor(CURSOR_PATTERN)] = None,
) -> CredentialPage:
    return list_page(current_principal(app).tenant_id, limit, cursor)


handler = lambda_handler(app)
