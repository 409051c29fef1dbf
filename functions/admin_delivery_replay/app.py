"""POST /api/v1/external/admin/deliveries/{deliveryId}/replay: send one delivery again."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path

from psap.audit.changes import note_change
from psap.clock import utc_now
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.openapi_answers import answers
from psap.webhooks import openapi_text as text
from psap.webhooks.admin_models import DeliveryView
from psap.webhooks.administration import replay_one

app = create_resolver()


@app.post(
    "/api/v1/external/admin/deliveries/<deliveryId>/replay",
    summary="Replay a delivery (same id, same body)",
    description=text.REPLAY,
    operation_id="replayDelivery",
    tags=[text.TAG_DELIVERIES],
    status_code=202,
    responses=answers(202, "The delivery, queued again", DeliveryView, errors=text.CONFLICT),
)
def replay_delivery(
    delivery_id: Annotated[str, Path(alias="deliveryId", max_length=64)],
) -> Response[str]:
    delivery = replay_one(current_principal(app).tenant_id, delivery_id, utc_now())
    note_change("delivery", delivery_id, "UPDATED")
    return Response(
        status_code=202,
        content_type="application/json",
        body=DeliveryView.of(delivery).model_dump_json(by_alias=True),
    )


handler = lambda_handler(app)
