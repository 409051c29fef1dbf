"""POST /api/v1/external/admin/console-links: a single-use sign-in link to the console."""

from aws_lambda_powertools.event_handler import Response

from psap.audit.changes import note_change
from psap.clock import utc_now
from psap.console.links import base_url, sign_in_url
from psap.console.models import ConsoleLinkView
from psap.console.openapi_text import CREATE_LINK, TAG_CONSOLE
from psap.console.sessions import create_link
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.openapi_answers import answers

app = create_resolver()


@app.post(
    "/api/v1/external/admin/console-links",
    summary="Create a sign-in link to the administrators' console",
    description=CREATE_LINK,
    operation_id="createConsoleLink",
    tags=[TAG_CONSOLE],
    status_code=201,
    responses=answers(201, "The link, usable once until expiresAt", ConsoleLinkView, errors={}),
)
def create_console_link() -> Response[str]:
    principal = current_principal(app)
    link = create_link(principal.tenant_id, principal.credential_id, utc_now())
    note_change("consoleLink", principal.credential_id, "CREATED")
    shown = ConsoleLinkView(
        url=sign_in_url(base_url(app.current_event.raw_event), link.code),
        expires_at=link.expires_at,
    )
    return Response(
        status_code=201,
        content_type="application/json",
        body=shown.model_dump_json(by_alias=True),
        headers={"Cache-Control": "no-store"},
    )


handler = lambda_handler(app)
