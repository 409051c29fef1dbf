"""POST /api/v1/external/incidents/upload: incidents as JSON Lines or CSV, by number."""

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse

from psap.http.body import request_bytes
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.incidents.upload import service
from psap.incidents.upload.models import UploadJob, UploadReport
from psap.incidents.upload.openapi_text import UPLOAD_DESCRIPTION
from psap.models import ErrorInfo

app = create_resolver()
UPLOAD_ERRORS = {
    400: "Empty file, no incidents, or an unreadable CSV header (nothing is written)",
    413: "The body is over the inline limit: use POST /incidents/uploads",
    415: "Content-Type is not text/csv, application/x-ndjson or application/jsonl (UTF-8)",
}


def _json(model: type[UploadReport] | type[UploadJob], text: str) -> OpenAPIResponse:
    return {"description": text, "content": {"application/json": {"model": model}}}


@app.post(
    "/api/v1/external/incidents/upload",
    summary="Upload incidents (JSON Lines or CSV)",
    description=UPLOAD_DESCRIPTION,
    operation_id="uploadIncidents",
    tags=["Incident upload"],
    responses={
        200: _json(UploadReport, "Applied: every row's outcome"),
        202: _json(UploadJob, "Queued: follow Location (GET /incidents/uploads/{uploadId})"),
        **{
            status: {"description": text, "content": {"application/json": {"model": ErrorInfo}}}
            for status, text in UPLOAD_ERRORS.items()
        },
    },
)
def upload_incidents() -> Response[str]:
    principal = current_principal(app)
    event = app.current_event
    raw = request_bytes(event.body, event.is_base64_encoded)
    answer = service.upload_incidents(principal.tenant_id, event.headers.get("content-type"), raw)
    if isinstance(answer, UploadReport):
        return Response(200, "application/json", answer.model_dump_json(by_alias=True))
    location = f"/api/v1/external/incidents/uploads/{answer.upload_id}"
    return Response(
        202, "application/json", answer.model_dump_json(by_alias=True), {"Location": location}
    )


handler = lambda_handler(app)
