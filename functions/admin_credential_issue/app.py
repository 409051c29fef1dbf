"""POST /api/v1/external/admin/credentials: issue a partner credential or a CAD key."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body

from psap.audit.changes import note_change
from psap.auth import openapi_text as text
from psap.auth.issuing import CredentialView, IssueCredentialBody, IssuedCredentialView, issue
from psap.clock import utc_now
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.openapi_answers import RATE_LIMITED, answers

app = create_resolver()


@app.post(
    "/api/v1/external/admin/credentials",
    summary="Issue a credential (its token is shown once)",
    description=text.ISSUE,
    operation_id="issueCredential",
    tags=[text.TAG_CREDENTIALS],
    status_code=201,
    responses=answers(
        201, "The credential and its token (shown once)", IssuedCredentialView, errors=RATE_LIMITED
    ),
)
def issue_credential(body: Annotated[IssueCredentialBody, Body()]) -> Response[str]:
    principal = current_principal(app)
    issued = issue(
        principal.tenant_id,
        body.to_request(),
        utc_now(),
        issued_by=principal.credential_id,
        granted_by=principal.permissions,
        rate_limited=True,
    )
    note_change("credential", issued.credential.credential_id, "CREATED")
    shown = IssuedCredentialView(
        credential=CredentialView.of(issued.credential), token=issued.token
    )
    return Response(
        status_code=201, content_type="application/json", body=shown.model_dump_json(by_alias=True)
    )


handler = lambda_handler(app)
