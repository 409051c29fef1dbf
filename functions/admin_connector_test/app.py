"""POST /api/v1/external/admin/connectors/{connectorId}/test: send a connector.test update."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path

from psap.audit.changes import note_change
from psap.clock import utc_now
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.openapi_answers import answers
from psap.webhooks import openapi_text as text
from psap.webhooks.admin_models import TestSentView
from psap.webhooks.administration import send_test

app = create_resolver()


@app.post(
    "/api/v1/external/admin/connectors/<connectorId>/test",
    summary="Send a test event to a CAD connector",
    description=text.TEST,
    operation_id="testConnector",
    tags=[text.TAG_CONNECTORS],
    status_code=202,
    responses=answers(202, "The test update, queued", TestSentView, errors=text.CONFLICT),
)
def test_connector(
    connector_id: Annotated[str, Path(alias="connectorId", max_length=64)],
) -> Response[str]:
    delivery_id = send_test(current_principal(app).tenant_id, connector_id, utc_now())
    note_change("delivery", delivery_id, "CREATED")
    return Response(
        status_code=202,
        content_type="application/json",
        body=TestSentView(delivery_id=delivery_id).model_dump_json(by_alias=True),
        headers={"Location": f"/api/v1/external/admin/deliveries/{delivery_id}"},
    )


handler = lambda_handler(app)
