"""POST /api/v1/external/admin/connectors: register the tenant's CAD endpoint."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body

from psap.audit.changes import note_change
from psap.clock import utc_now
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.openapi_answers import answers
from psap.webhooks import openapi_text as text
from psap.webhooks.admin_models import ConnectorView, ConnectorWithSecretView, CreateConnectorBody
from psap.webhooks.administration import create

app = create_resolver()


@app.post(
    "/api/v1/external/admin/connectors",
    summary="Create a CAD connector (its signing secret is shown once)",
    description=text.CREATE_CONNECTOR,
    operation_id="createConnector",
    tags=[text.TAG_CONNECTORS],
    status_code=201,
    responses=answers(
        201,
        "The connector, and its signing secret (shown once)",
        ConnectorWithSecretView,
        errors={},
    ),
)
def create_connector(body: Annotated[CreateConnectorBody, Body()]) -> Response[str]:
    created = create(current_principal(app).tenant_id, body, utc_now())
    connector_id = created.connector.connector_id
    note_change("connector", connector_id, "CREATED")
    shown = ConnectorWithSecretView(
        connector=ConnectorView.of(created.connector), signing_secret=created.signing_secret
    )
    return Response(
        status_code=201,
        content_type="application/json",
        body=shown.model_dump_json(by_alias=True),
        headers={"Location": f"/api/v1/external/admin/connectors/{connector_id}"},
    )


handler = lambda_handler(app)
