"""Console sign-in and sessions on moto (docs/console.md): a link's code is spent once, a
session ends when idle, at its absolute limit and with its credential, and the session
authorizer wants the cookie and its CSRF header and opens the console's paths only."""

from datetime import datetime, timedelta
from typing import Any

import pytest

from psap.auth import store as auth_store
from psap.auth.authorizer import Unauthorized
from psap.auth.credentials import OPERATOR, CredentialKind
from psap.auth.permissions import Permission
from psap.clock import utc_now
from psap.console.authorizer import authorize_console
from psap.console.sessions import (
    SessionLimits,
    authenticate,
    create_link,
    csrf_token,
    exchange,
    session_cookie,
    set_session_limits,
)
from psap.errors import InvalidInput, NotAuthenticated

ARN = "arn:aws:execute-api:us-east-1:123456789012:api/Prod/GET/console/api/v1/external/x"


def credential(tenant: int, *permissions: Permission) -> str:
    issued = auth_store.issue_credential(
        tenant,
        CredentialKind.PARTNER,
        frozenset(permissions),
        label="riverside admin",
        expires_at=utc_now() + timedelta(days=30),
        issued_by=OPERATOR,
    )
    return issued.credential.credential_id


def tenant() -> int:
    return auth_store.create_tenant("Riverside County 911").tenant_id


def request(token: str | None, csrf: str | None) -> dict[str, Any]:
    headers: dict[str, str] = {}
    if token is not None:
        headers["Cookie"] = f"theme=dark; psap_console={token}"
    if csrf is not None:
        headers["X-Console-Csrf"] = csrf
    return {"headers": headers, "methodArn": ARN}


@pytest.mark.usefixtures("aws")
def test_a_links_code_opens_one_session_once() -> None:
    # Given a link made for an Admin credential
    center = tenant()
    admin = credential(center, Permission.ADMIN)
    now = utc_now()
    link = create_link(center, admin, now)
    # When its code is exchanged twice
    opened = exchange(link.code, now)
    with pytest.raises(NotAuthenticated, match="used already"):
        exchange(link.code, now)
    # Then the first opened a session of that tenant and credential, the second nothing
    assert (opened.session.tenant_id, opened.session.credential_id) == (center, admin)
    assert opened.token != link.code


@pytest.mark.usefixtures("aws")
def test_an_expired_or_made_up_code_opens_nothing() -> None:
    center = tenant()
    admin = credential(center, Permission.ADMIN)
    made = utc_now()
    link = create_link(center, admin, made)
    with pytest.raises(NotAuthenticated):
        exchange(link.code, made + timedelta(minutes=6))
    with pytest.raises(NotAuthenticated):
        exchange("made-up-code", made)


@pytest.mark.usefixtures("aws")
def test_a_credential_without_admin_or_revoked_gets_no_session() -> None:
    center = tenant()
    reader = credential(center, Permission.VIEW_KNOWLEDGE)
    with pytest.raises(NotAuthenticated):
        exchange(create_link(center, reader, utc_now()).code, utc_now())
    admin = credential(center, Permission.ADMIN)
    link = create_link(center, admin, utc_now())
    auth_store.revoke_credential(center, admin)
    with pytest.raises(NotAuthenticated):
        exchange(link.code, utc_now())


@pytest.mark.usefixtures("aws")
def test_a_session_ends_when_idle_at_its_limit_and_with_its_credential() -> None:
    center = tenant()
    set_session_limits(center, SessionLimits.of(idle_minutes=30, absolute_hours=12))
    admin = credential(center, Permission.ADMIN)
    start = utc_now()
    token = exchange(create_link(center, admin, start).code, start).token
    # Busy every 20 minutes: open for 11 h 40 min, ended at 12 h.
    moment: datetime = start
    for _ in range(35):
        moment += timedelta(minutes=20)
        authenticate(token, moment)
    with pytest.raises(NotAuthenticated):
        authenticate(token, start + timedelta(hours=12, minutes=1))
    # Idle 31 minutes: ended.
    idle = exchange(create_link(center, admin, start).code, start).token
    with pytest.raises(NotAuthenticated):
        authenticate(idle, start + timedelta(minutes=31))
    # Revoking the credential ends its sessions at once.
    fresh = exchange(create_link(center, admin, start).code, start).token
    authenticate(fresh, start + timedelta(minutes=1))
    auth_store.revoke_credential(center, admin)
    with pytest.raises(NotAuthenticated):
        authenticate(fresh, start + timedelta(minutes=2))


@pytest.mark.usefixtures("aws")
def test_a_tenants_own_session_limits_apply_to_its_new_sessions() -> None:
    center = tenant()
    set_session_limits(center, SessionLimits.of(idle_minutes=5, absolute_hours=1))
    admin = credential(center, Permission.ADMIN)
    start = utc_now()
    opened = exchange(create_link(center, admin, start).code, start)
    assert opened.session.expires_at == start + timedelta(hours=1)
    with pytest.raises(NotAuthenticated):
        authenticate(opened.token, start + timedelta(minutes=6))
    with pytest.raises(InvalidInput):
        SessionLimits.of(idle_minutes=0, absolute_hours=1)


@pytest.mark.usefixtures("aws")
def test_the_session_authorizer_wants_the_cookie_and_its_csrf_header() -> None:
    center = tenant()
    admin = credential(center, Permission.ADMIN, Permission.MANAGE_EVENTS)
    token = exchange(create_link(center, admin, utc_now()).code, utc_now()).token
    for refused in (request(None, None), request(token, None), request(token, "0" * 64)):
        with pytest.raises(Unauthorized):
            authorize_console(refused, utc_now())
    answer = authorize_console(request(token, csrf_token(token)), utc_now())
    # The Admin credential's own answer, for the console's paths only, marked in the audit.
    assert answer["principalId"] == admin
    assert answer["context"]["tenantId"] == str(center)
    assert answer["context"]["permissions"] == "ADMIN,MANAGE_EVENTS"
    assert answer["context"]["label"] == "riverside admin (console)"
    resources = answer["policyDocument"]["Statement"][0]["Resource"]
    assert resources == ["arn:aws:execute-api:us-east-1:123456789012:api/Prod/*/console/api/*"]


def test_the_session_cookie_is_read_among_others_and_garbage_is_no_session() -> None:
    assert session_cookie({"cookie": "a=1; psap_console=abc; b=2"}) == "abc"
    assert session_cookie({"Cookie": "a=1"}) is None
    assert session_cookie({"Cookie": 'psap_console="unterminated'}) is None
    assert session_cookie(None) is None
