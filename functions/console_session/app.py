"""POST, GET and DELETE /console/session: sign in with a link's code, read the session,
sign out. The session token only ever travels in its HttpOnly cookie."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body

from psap.audit.lines import AuditCaller, AuditedCall, audit_record
from psap.audit.sending import emit
from psap.auth.credentials import Credential
from psap.clock import utc_now
from psap.console.links import console_path, header_value, request_is_https
from psap.console.models import ConsoleSessionView, OpenSessionBody
from psap.console.paths import CSRF_HEADER
from psap.console.sessions import (
    ConsoleSession,
    authenticate,
    clear_cookie_header,
    csrf_matches,
    csrf_token,
    end,
    exchange,
    session_cookie,
    set_cookie_header,
)
from psap.errors import NotAuthenticated
from psap.http.resolver import create_resolver, lambda_handler

app = create_resolver()
_NO_STORE = {"Cache-Control": "no-store"}


def _view(token: str, session: ConsoleSession, credential: Credential) -> str:
    return ConsoleSessionView(
        tenant_id=session.tenant_id,
        credential_id=session.credential_id,
        label=credential.label,
        permissions=sorted(permission.value for permission in credential.permissions),
        csrf_token=csrf_token(token),
        expires_at=session.expires_at,
        idle_minutes=int(session.limits.idle.total_seconds() // 60),
    ).model_dump_json(by_alias=True)


@app.post("/console/session", include_in_schema=False)
def open_console_session(body: Annotated[OpenSessionBody, Body()]) -> Response[str]:
    started = utc_now()
    opened = exchange(body.code, started)
    session, credential = authenticate(opened.token, started)
    # Signing in is the Admin's act: audited as its credential, like every console call.
    emit(
        audit_record(
            app.current_event.raw_event,
            AuditCaller(
                tenant_id=session.tenant_id,
                credential_id=session.credential_id,
                principal=f"{credential.label} (console)",
                credential_kind=credential.kind.value,
            ),
            AuditedCall(
                operation="openConsoleSession",
                status=201,
                started=started,
                finished=utc_now(),
            ),
        )
    )
    event = app.current_event.raw_event
    cookie = set_cookie_header(
        opened.token,
        secure=request_is_https(event),
        max_age=session.limits.absolute,
        path=console_path(event),
    )
    return Response(
        status_code=201,
        content_type="application/json",
        body=_view(opened.token, session, credential),
        headers={**_NO_STORE, "Set-Cookie": cookie},
    )


@app.get("/console/session", include_in_schema=False)
def get_console_session() -> Response[str]:
    token = session_cookie(app.current_event.headers)
    if token is None:
        raise NotAuthenticated()
    session, credential = authenticate(token, utc_now())
    return Response(
        status_code=200,
        content_type="application/json",
        body=_view(token, session, credential),
        headers=_NO_STORE,
    )


@app.delete("/console/session", include_in_schema=False)
def end_console_session() -> Response[str]:
    event = app.current_event
    token = session_cookie(event.headers)
    if token is not None and csrf_matches(token, header_value(event.headers, CSRF_HEADER)):
        end(token)
    cleared = clear_cookie_header(
        secure=request_is_https(event.raw_event), path=console_path(event.raw_event)
    )
    return Response(
        status_code=204,
        content_type="application/json",
        body="",
        headers={**_NO_STORE, "Set-Cookie": cleared},
    )


handler = lambda_handler(app)
