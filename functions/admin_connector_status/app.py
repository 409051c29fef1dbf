"""POST /api/v1/external/admin/connectors/{connectorId}/disable and .../enable."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from psap.audit.changes import note_change
from psap.clock import utc_now
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.openapi_answers import answers
from psap.webhooks import openapi_text as text
from psap.webhooks.admin_models import ConnectorView
from psap.webhooks.administration import set_status
from psap.webhooks.models import ConnectorStatus

app = create_resolver()
ConnectorId = Annotated[str, Path(alias="connectorId", max_length=64)]


def _set(connector_id: str, status: ConnectorStatus) -> ConnectorView:
    tenant_id = current_principal(app).tenant_id
    changed, job = set_status(tenant_id, connector_id, status, now=utc_now())
    note_change("connector", connector_id, "UPDATED")
    return ConnectorView.of(changed, job)


@app.post(
    "/api/v1/external/admin/connectors/<connectorId>/disable",
    summary="Disable a CAD connector",
    description=text.DISABLE,
    operation_id="disableConnector",
    tags=[text.TAG_CONNECTORS],
    responses=answers(200, "The connector, disabled", ConnectorView, errors=text.CONFLICT),
)
def disable_connector(connector_id: ConnectorId) -> ConnectorView:
    return _set(connector_id, ConnectorStatus.DISABLED)


@app.post(
    "/api/v1/external/admin/connectors/<connectorId>/enable",
    summary="Enable a CAD connector",
    description=text.ENABLE,
    operation_id="enableConnector",
    tags=[text.TAG_CONNECTORS],
    responses=answers(200, "The connector, active", ConnectorView, errors=text.CONFLICT),
)
def enable_connector(connector_id: ConnectorId) -> ConnectorView:
    return _set(connector_id, ConnectorStatus.ACTIVE)


handler = lambda_handler(app)
