"""GET /api/v1/external/incidents/uploads/{uploadId}: an upload's status and progress."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.incidents.upload.models import UploadJob
from psap.incidents.upload.openapi_text import GET_DESCRIPTION, UPLOAD_ID_PATTERN
from psap.incidents.upload.service import get_upload

app = create_resolver()


@app.get(
    "/api/v1/external/incidents/uploads/<uploadId>",
    summary="Get an incident upload's status",
    description=GET_DESCRIPTION,
    operation_id="getIncidentUpload",
    tags=["Incident upload"],
)
def get_incident_upload(
    upload_id: Annotated[str, Path(alias="uploadId", pattern=UPLOAD_ID_PATTERN)],
) -> UploadJob:
    principal = current_principal(app)
    return get_upload(principal.tenant_id, upload_id)


handler = lambda_handler(app)
