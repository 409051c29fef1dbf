"""PATCH /api/v1/external/admin/connectors/{connectorId}: change a CAD connector."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Body, Path

from psap.audit.changes import note_change
from psap.clock import utc_now
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.openapi_answers import answers
from psap.webhooks import openapi_text as text
from psap.webhooks.admin_models import ConnectorView, ConnectorWithSecretView, UpdateConnectorBody
from psap.webhooks.administration import connector_of, update
from psap.webhooks.connectors import ConnectorWithSecret

app = create_resolver()


@app.patch(
    "/api/v1/external/admin/connectors/<connectorId>",
    summary="Change a CAD connector",
    description=text.UPDATE_CONNECTOR,
    operation_id="updateConnector",
    tags=[text.TAG_CONNECTORS],
    responses=answers(
        200,
        "The connector; signingSecret only when a new profile made a new one",
        ConnectorWithSecretView,
        errors=text.CONFLICT,
    ),
)
def update_connector(
    connector_id: Annotated[str, Path(alias="connectorId", max_length=64)],
    body: Annotated[UpdateConnectorBody, Body()],
) -> ConnectorWithSecretView:
    tenant_id = current_principal(app).tenant_id
    result = update(tenant_id, connector_id, body, now=utc_now())
    note_change("connector", connector_id, "UPDATED")
    secret = result.signing_secret if isinstance(result, ConnectorWithSecret) else None
    return ConnectorWithSecretView(
        connector=ConnectorView.of(connector_of(result)), signing_secret=secret
    )


handler = lambda_handler(app)
