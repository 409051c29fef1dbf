"""GET /api/v1/external/admin/tenant-exports/{exportId}: an export's state and its archive."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.offboarding import openapi_text as text
from psap.offboarding.export_models import TenantExport
from psap.offboarding.exports import get_export

app = create_resolver()


@app.get(
    "/api/v1/external/admin/tenant-exports/<exportId>",
    summary="Read a tenant export",
    description=text.GET,
    operation_id="getTenantExport",
    tags=[text.TAG_TENANT_EXPORTS],
)
def get_tenant_export(
    export_id: Annotated[str, Path(alias="exportId", max_length=64, description="The export's id")],
) -> TenantExport:
    return get_export(current_principal(app).tenant_id, export_id)


handler = lambda_handler(app)
