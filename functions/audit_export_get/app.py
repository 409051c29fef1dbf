"""GET /api/v1/external/audit-log/exports/{exportId}: an export's status and download link."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from psap.audit.exports import AuditExport, get_export
from psap.audit.openapi_text import GET_EXPORT_DESCRIPTION
from psap.http.resolver import create_resolver, current_principal, lambda_handler

app = create_resolver()


@app.get(
    "/api/v1/external/audit-log/exports/<exportId>",
    summary="Read an audit log export",
    description=GET_EXPORT_DESCRIPTION,
    operation_id="getAuditExport",
    tags=["Audit log"],
)
def get_audit_export(
    export_id: Annotated[str, Path(alias="exportId", description="The export's id")],
) -> AuditExport:
    return get_export(current_principal(app).tenant_id, export_id)


handler = lambda_handler(app)
