"""GET /api/v1/external/admin/connectors/{connectorId}: one CAD connector."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.webhooks import openapi_text as text
from psap.webhooks.admin_models import ConnectorView
from psap.webhooks.administration import connector_with_job

app = create_resolver()


@app.get(
    "/api/v1/external/admin/connectors/<connectorId>",
    summary="Read a CAD connector",
    operation_id="getConnector",
    tags=[text.TAG_CONNECTORS],
)
def get_connector(
    connector_id: Annotated[str, Path(alias="connectorId", max_length=64)],
) -> ConnectorView:
    tenant_id = current_principal(app).tenant_id
    return ConnectorView.of(*connector_with_job(tenant_id, connector_id))


handler = lambda_handler(app)
