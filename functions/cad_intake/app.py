"""POST /cad/v1/incidents: a CAD submits an incident; stored and acknowledged with 202."""

from aws_lambda_powertools.event_handler import Response

from psap.audit.changes import note_change
from psap.cad.intake import IntakeReceipt, accept_submission
from psap.http.body import request_bytes
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.limits import CAD_BODY_LIMIT
from psap.models import ErrorInfo

app = create_resolver()
INTAKE_ERRORS = {
    403: "The envelope's tenantId is not the credential's tenant",
    409: "The same (source, id) is still being stored by another request; retry",
    413: f"The body is larger than {CAD_BODY_LIMIT // 1024} KB",
    415: "Content-Type is not application/json or application/cloudevents+json",
    422: "The same (source, id) was already used with another body",
}


@app.post(
    "/cad/v1/incidents",
    summary="Submit a CAD incident",
    description=(
        "A CloudEvents 1.0 structured JSON event (`specversion`, `id`, `source`, `type` = "
        "incident.created | incident.updated | incident.closed, `time`, optional `subject`, "
        "`sequence`, `tenantId`/`tenantid`) whose `data` is a NENA EIDO incident or a flat "
        "incident with the Incident fields. The tenant is the CAD credential's; `tenantId` is "
        "a cross-check only (absent: accepted; different: 403). Idempotent per (source, id): "
        "a replay gets the first 202 again, the same id with another body 422, a duplicate "
        "still in flight 409. Content-Type application/json or application/cloudevents+json "
        f"(else 415); at most {CAD_BODY_LIMIT // 1024} KB (else 413). The outcome arrives as a "
        "signed webhook update (incident.accepted / incident.rejected) naming the receiptId."
    ),
    operation_id="submitCadIncident",
    tags=["CAD"],
    responses={
        202: {
            "description": "Stored and queued for processing",
            "content": {"application/json": {"model": IntakeReceipt}},
        },
        **{
            status: {"description": text, "content": {"application/json": {"model": ErrorInfo}}}
            for status, text in INTAKE_ERRORS.items()
        },
    },
)
def submit_cad_incident() -> Response[str]:
    principal = current_principal(app)
    event = app.current_event
    receipt = accept_submission(
        principal.tenant_id,
        event.headers.get("content-type"),
        request_bytes(event.body, event.is_base64_encoded),
    )
    note_change("cadSubmission", receipt.receipt_id, "ACCEPTED")
    return Response(202, "application/json", receipt.model_dump_json(by_alias=True))


handler = lambda_handler(app)
