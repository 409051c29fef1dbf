"""POST /api/v1/external/admin/tenant-exports: start an export of everything the tenant owns."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body

from psap.audit.changes import note_change
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.offboarding import openapi_text as text
from psap.offboarding.export_models import TenantExportRequest
from psap.offboarding.exports import create_export

app = create_resolver()


@app.post(
    "/api/v1/external/admin/tenant-exports",
    summary="Start an export of everything the tenant owns",
    description=text.CREATE,
    operation_id="createTenantExport",
    tags=[text.TAG_TENANT_EXPORTS],
    status_code=202,
    responses=text.CREATE_RESPONSES,
)
def create_tenant_export(
    request: Annotated[TenantExportRequest | None, Body()] = None,
) -> Response[str]:
    principal = current_principal(app)
    export = create_export(
        principal.tenant_id, request or TenantExportRequest(), principal.credential_id
    )
    note_change("tenantExport", export.export_id, "CREATED")
    return Response(
        status_code=202,
        content_type="application/json",
        body=export.model_dump_json(by_alias=True),
        headers={"Location": f"/api/v1/external/admin/tenant-exports/{export.export_id}"},
    )


handler = lambda_handler(app)
