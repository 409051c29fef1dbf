"""GET /api/v1/external/admin/deliveries/{deliveryId}: a delivery with its attempts."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.webhooks import openapi_text as text
from psap.webhooks.admin_models import DeliveryDetail
from psap.webhooks.administration import delivery_detail

app = create_resolver()


@app.get(
    "/api/v1/external/admin/deliveries/<deliveryId>",
    summary="Read a delivery and its attempts",
    description=text.GET_DELIVERY,
    operation_id="getDelivery",
    tags=[text.TAG_DELIVERIES],
)
def get_delivery(
    delivery_id: Annotated[str, Path(alias="deliveryId", max_length=64)],
) -> DeliveryDetail:
    found, attempts = delivery_detail(current_principal(app).tenant_id, delivery_id)
    return DeliveryDetail.with_attempts(found, attempts)


handler = lambda_handler(app)
