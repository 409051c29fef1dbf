"""POST /api/v1/external/admin/connectors/{connectorId}/rotate-secret: a new signing secret."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Body, Path

from psap.audit.changes import note_change
from psap.clock import utc_now
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.openapi_answers import RATE_LIMITED, answers
from psap.webhooks import connectors
from psap.webhooks import openapi_text as text
from psap.webhooks.admin_models import ConnectorView, RotatedSecretView, RotateSecretBody
from psap.webhooks.administration import ROTATION_RATE

app = create_resolver()


@app.post(
    "/api/v1/external/admin/connectors/<connectorId>/rotate-secret",
    summary="Rotate a connector's signing secret (the new one is shown once)",
    description=text.ROTATE_SECRET,
    operation_id="rotateConnectorSecret",
    tags=[text.TAG_CONNECTORS],
    responses=answers(
        200,
        "The new signing secret (shown once)",
        RotatedSecretView,
        errors={**text.CONFLICT, **RATE_LIMITED},
    ),
)
def rotate_connector_secret(
    connector_id: Annotated[str, Path(alias="connectorId", max_length=64)],
    body: Annotated[RotateSecretBody, Body()],
) -> RotatedSecretView:
    tenant_id, now = current_principal(app).tenant_id, utc_now()
    rotated = connectors.rotate_secret(
        tenant_id,
        connector_id,
        connectors.RotationSchedule(body.overlap),
        now=now,
        rate=ROTATION_RATE,
    )
    note_change("connectorSecret", connector_id, "UPDATED")
    return RotatedSecretView(
        connector=ConnectorView.of(rotated.connector),
        signing_secret=rotated.signing_secret,
        previous_secrets_retire_at=now + body.overlap,
    )


handler = lambda_handler(app)
