"""GET /api/v1/external/admin/connectors: the tenant's CAD connectors."""

from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.webhooks import connectors
from psap.webhooks import openapi_text as text
from psap.webhooks.admin_models import ConnectorList, ConnectorView

app = create_resolver()


@app.get(
    "/api/v1/external/admin/connectors",
    summary="List the tenant's CAD connectors",
    operation_id="listConnectors",
    tags=[text.TAG_CONNECTORS],
)
def list_connectors() -> ConnectorList:
    found = connectors.list_connectors(current_principal(app).tenant_id)
    return ConnectorList(items=[ConnectorView.of(connector) for connector in found])


handler = lambda_handler(app)
