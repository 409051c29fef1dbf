"""POST /api/v1/external/incidents/uploads/{uploadId}/start: queue an uploaded file's upload."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path

from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.incidents.upload.models import UploadJob
from psap.incidents.upload.openapi_text import START_DESCRIPTION, UPLOAD_ID_PATTERN
from psap.incidents.upload.service import start_upload
from psap.models import ErrorInfo

app = create_resolver()


@app.post(
    "/api/v1/external/incidents/uploads/<uploadId>/start",
    summary="Start an incident upload once its file is uploaded",
    description=START_DESCRIPTION,
    operation_id="startIncidentUpload",
    tags=["Incident upload"],
    responses={
        202: {
            "description": "Queued (or already started: its current state)",
            "content": {"application/json": {"model": UploadJob}},
        },
        409: {
            "description": "No file was uploaded yet",
            "content": {"application/json": {"model": ErrorInfo}},
        },
    },
)
def start_incident_upload(
    upload_id: Annotated[str, Path(alias="uploadId", pattern=UPLOAD_ID_PATTERN)],
) -> Response[str]:
    principal = current_principal(app)
    job = start_upload(principal.tenant_id, upload_id)
    location = f"/api/v1/external/incidents/uploads/{job.upload_id}"
    return Response(
        202, "application/json", job.model_dump_json(by_alias=True), {"Location": location}
    )


handler = lambda_handler(app)
