"""GET /api/v1/external/admin/connectors/{connectorId}/deliveries: the delivery log."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from psap import list_parameters
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.models import Timestamp
from psap.webhooks import openapi_text as text
from psap.webhooks.admin_models import DeliveryPage, DeliveryView
from psap.webhooks.administration import (
    CURSOR_PATTERN,
    LOG_PAGE_DEFAULT,
    LOG_PAGE_MAX,
    DeliveryFilters,
    delivery_log,
)
from psap.webhooks.catalogue import UpdateKind
from psap.webhooks.models import DeliveryStatus

app = create_resolver()


@app.get(
    "/api/v1/external/admin/connectors/<connectorId>/deliveries",
    summary="List a connector's deliveries",
    description=text.LIST_DELIVERIES,
    operation_id="listDeliveries",
    tags=[text.TAG_DELIVERIES],
)
# The parameters are the API's query string, one argument each so that the OpenAPI document
# lists them; the resolver passes them by name.
def list_deliveries(  # noqa: PLR0913
    *,
    connector_id: Annotated[str, Path(alias="connectorId", max_length=64)],
    status: Annotated[DeliveryStatus | None, Query()] = None,
    event_type: Annotated[UpdateKind | None, Query(alias="eventType")] = None,
    since: Annotated[Timestamp | None, Query(description="Created at or after (<ts>)")] = None,
    limit: Annotated[int, Query(ge=1, le=LOG_PAGE_MAX)] = LOG_PAGE_DEFAULT,
    cursor: Annotated[str | None, list_parameters.cursor(CURSOR_PATTERN)] = None,
) -> DeliveryPage:
    found, next_cursor = delivery_log(
        current_principal(app).tenant_id,
        connector_id,
        limit=limit,
        cursor=cursor,
        filters=DeliveryFilters(
            status=status, event_type=event_type.value if event_type else None, since=since
        ),
    )
    return DeliveryPage(items=[DeliveryView.of(d) for d in found], next_cursor=next_cursor)


handler = lambda_handler(app)
