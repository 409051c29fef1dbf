"""POST /api/v1/external/incidents/uploads: a large upload through a presigned S3 POST."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Body

from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.incidents.upload.models import NewUploadRequest, UploadTicket
from psap.incidents.upload.openapi_text import CREATE_DESCRIPTION
from psap.incidents.upload.service import create_upload

app = create_resolver()


@app.post(
    "/api/v1/external/incidents/uploads",
    summary="Create an incident upload for a large file",
    description=CREATE_DESCRIPTION,
    operation_id="createIncidentUpload",
    tags=["Incident upload"],
    status_code=201,
)
def create_incident_upload(request: Annotated[NewUploadRequest, Body()]) -> UploadTicket:
    principal = current_principal(app)
    return create_upload(principal.tenant_id, request.format)


handler = lambda_handler(app)
