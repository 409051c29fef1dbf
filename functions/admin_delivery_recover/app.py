"""POST /api/v1/external/admin/connectors/{connectorId}/deliveries/recover: start the job
that re-sends the dead-letter (and held) deliveries since a time."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path

from psap.audit.changes import note_change
from psap.clock import utc_now
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.openapi_answers import answers
from psap.webhooks import openapi_text as text
from psap.webhooks.admin_models import DeliveryJobView, RecoverBody
from psap.webhooks.administration import recover_since

app = create_resolver()


@app.post(
    "/api/v1/external/admin/connectors/<connectorId>/deliveries/recover",
    summary="Recover dead-letter deliveries since a time",
    description=text.RECOVER,
    operation_id="recoverDeliveries",
    tags=[text.TAG_DELIVERIES],
    status_code=202,
    responses=answers(202, "The recovery job, started", DeliveryJobView, errors=text.CONFLICT),
)
def recover_deliveries(
    connector_id: Annotated[str, Path(alias="connectorId", max_length=64)],
    body: Annotated[RecoverBody, Body()],
) -> Response[str]:
    tenant_id = current_principal(app).tenant_id
    job = recover_since(tenant_id, connector_id, body.since, now=utc_now())
    note_change("connector", connector_id, "UPDATED")
    shown = DeliveryJobView.of(job)
    return Response(
        status_code=202, content_type="application/json", body=shown.model_dump_json(by_alias=True)
    )


handler = lambda_handler(app)
