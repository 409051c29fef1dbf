"""POST /api/v1/external/audit-log/exports: start an export of the tenant's audit log."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body

from psap.audit.changes import note_change
from psap.audit.exports import AuditExportRequest, create_export
from psap.audit.openapi_text import CREATE_EXPORT_DESCRIPTION, EXPORT_ERRORS
from psap.http.resolver import create_resolver, current_principal, lambda_handler

app = create_resolver()


@app.post(
    "/api/v1/external/audit-log/exports",
    summary="Start an audit log export",
    description=CREATE_EXPORT_DESCRIPTION,
    operation_id="createAuditExport",
    tags=["Audit log"],
    status_code=202,
    responses=EXPORT_ERRORS,
)
def create_audit_export(request: Annotated[AuditExportRequest, Body()]) -> Response[str]:
    principal = current_principal(app)
    export = create_export(principal.tenant_id, request, principal.credential_id)
    note_change("auditExport", export.export_id, "CREATED")
    return Response(
        status_code=202,
        content_type="application/json",
        body=export.model_dump_json(by_alias=True),
        headers={"Location": f"/api/v1/external/audit-log/exports/{export.export_id}"},
    )


handler = lambda_handler(app)
