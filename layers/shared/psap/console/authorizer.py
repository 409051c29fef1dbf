"""The console's session authorizer: a cookie and its CSRF header, instead of a bearer token.

Its answer is the Admin credential's own (tenant, credential id, permissions), so the admin
functions behind it act, check permissions and audit exactly as for that credential. It
allows the console's API paths only: a session cookie never opens the bearer interface.
"""

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from psap.auth.authorizer import Unauthorized, header, policy_answer
from psap.auth.refusals import RefusalReason
from psap.console.paths import CSRF_HEADER
from psap.console.sessions import authenticate, csrf_matches, session_cookie
from psap.errors import NotAuthenticated

CONSOLE_PATHS = ("*/console/api/*",)


def authorize_console(event: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """The policy answer for an open session, or Unauthorized (API Gateway's 401)."""
    headers = event.get("headers")
    token = session_cookie(headers)
    if token is None:
        raise Unauthorized("no console session cookie", RefusalReason.MISSING)
    # Every console request carries the CSRF header, reads too: a request another site's page
    # makes (SameSite=Strict aside) cannot, because it cannot learn the value.
    if not csrf_matches(token, header(headers, CSRF_HEADER)):
        raise Unauthorized("console request without its CSRF header", RefusalReason.MALFORMED)
    try:
        _session, credential = authenticate(token, now)
    except NotAuthenticated as refused:
        raise Unauthorized("console session ended", RefusalReason.UNKNOWN) from refused
    answer = policy_answer(credential, str(event["methodArn"]), CONSOLE_PATHS)
    # The audit trail names the credential as always, and says the console made the call.
    answer["context"]["label"] = f"{credential.label} (console)"
    return answer
