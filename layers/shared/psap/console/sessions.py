"""Console sign-in links and sessions, kept in the auth table.

A link carries a single-use code (5 minutes): the first load of the console exchanges it for
a session, with one conditional DeleteItem, so a second exchange of the same code finds
nothing. A session is bound to the tenant and to the Admin credential that asked for the
link; every request re-reads that credential, so revoking it ends the session at once. Only
the SHA-256 of a code or a session token is stored, as for credentials.

A session ends after `idle` without a request and after `absolute` in all (the tenant's
setting, 30 minutes and 12 hours by default). The last-seen time is written at most once a
minute, so an idle session may live up to a minute longer than its setting.
"""

import hashlib
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from http.cookies import CookieError, SimpleCookie
from typing import Any

from psap.auth.credentials import Credential, CredentialKind
from psap.auth.permissions import Permission
from psap.auth.store import credential_in_force
from psap.auth.tokens import token_hash
from psap.clock import format_timestamp, parse_timestamp
from psap.config import auth_table
from psap.console.paths import CONSOLE_PREFIX, SESSION_COOKIE
from psap.errors import InvalidInput, NotAuthenticated, NotFound
from psap.storage.attributes import to_item
from psap.storage.aws_errors import ConditionFailed, translated
from psap.storage.dynamodb import dynamodb, read_item

LINK_LIFETIME = timedelta(minutes=5)
DEFAULT_IDLE = timedelta(minutes=30)
DEFAULT_ABSOLUTE = timedelta(hours=12)
MAX_IDLE_MINUTES = 240
MAX_ABSOLUTE_HOURS = 24
# The last-seen time is refreshed at most this often: one write a minute per open console.
TOUCH_INTERVAL = timedelta(seconds=60)
_CSRF_CONTEXT = b"psap console csrf\x00"


@dataclass(frozen=True)
class SessionLimits:
    idle: timedelta = DEFAULT_IDLE
    absolute: timedelta = DEFAULT_ABSOLUTE

    @classmethod
    def of(cls, idle_minutes: int, absolute_hours: int) -> "SessionLimits":
        if not 1 <= idle_minutes <= MAX_IDLE_MINUTES:
            raise InvalidInput(f"The idle limit must be 1 to {MAX_IDLE_MINUTES} minutes")
        if not 1 <= absolute_hours <= MAX_ABSOLUTE_HOURS:
            raise InvalidInput(f"The session limit must be 1 to {MAX_ABSOLUTE_HOURS} hours")
        return cls(timedelta(minutes=idle_minutes), timedelta(hours=absolute_hours))


@dataclass(frozen=True)
class ConsoleLink:
    code: str  # shown once, in the link; only its hash is stored
    expires_at: datetime


@dataclass(frozen=True)
class ConsoleSession:
    tenant_id: int
    credential_id: str
    created_at: datetime
    last_seen_at: datetime
    limits: SessionLimits

    @property
    def expires_at(self) -> datetime:
        """When it ends if it stays busy (the idle limit may end it sooner)."""
        return self.created_at + self.limits.absolute

    def open_at(self, now: datetime) -> bool:
        return now < self.expires_at and now < self.last_seen_at + self.limits.idle


@dataclass(frozen=True)
class OpenedSession:
    token: str  # the cookie's value; never in a URL, a body or storage
    session: ConsoleSession


def link_key(code: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"CONSOLE#LINK#{token_hash(code)}"}, "sk": {"S": "LINK"}}


def session_key(token: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"CONSOLE#SESSION#{token_hash(token)}"}, "sk": {"S": "SESSION"}}


def _limits_key(tenant_id: int) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": "CONSOLE"}}


def csrf_token(session_token: str) -> str:
    """The value the console sends in X-Console-Csrf: derived from the session token, so it
    is stored nowhere, and only a page that can read the session's answer (same origin)
    learns it."""
    return hashlib.sha256(_CSRF_CONTEXT + session_token.encode()).hexdigest()


def csrf_matches(session_token: str, presented: str | None) -> bool:
    return presented is not None and secrets.compare_digest(csrf_token(session_token), presented)


def console_admin(credential: Credential | None, now: datetime) -> bool:
    """Whether a credential may hold a console session: an unrevoked, unexpired partner
    credential with Admin."""
    return (
        credential is not None
        and credential.usable(CredentialKind.PARTNER, now)
        and Permission.ADMIN in credential.permissions
    )


def session_limits(tenant_id: int) -> SessionLimits:
    item = read_item(auth_table(), _limits_key(tenant_id), "console settings read failed")
    if item is None:
        return SessionLimits()
    return SessionLimits(
        timedelta(minutes=int(item["idleMinutes"])), timedelta(hours=int(item["absoluteHours"]))
    )


def set_session_limits(tenant_id: int, limits: SessionLimits) -> None:
    """The tenant's console session limits (the operator's CLI); new sessions take them."""
    attributes = {
        "pk": f"TENANT#{tenant_id}",
        "sk": "CONSOLE",
        "idleMinutes": int(limits.idle.total_seconds() // 60),
        "absoluteHours": int(limits.absolute.total_seconds() // 3600),
    }
    with translated("console settings write failed"):
        dynamodb().put_item(TableName=auth_table(), Item=to_item(attributes))


def create_link(tenant_id: int, credential_id: str, now: datetime) -> ConsoleLink:
    code = secrets.token_urlsafe(32)
    expires_at = now + LINK_LIFETIME
    attributes = {
        "tenantId": tenant_id,
        "credentialId": credential_id,
        "expiresAt": format_timestamp(expires_at),
        # DynamoDB's TTL removes an unused link; its expiry is checked on use regardless.
        "ttl": int(expires_at.timestamp()) + 3600,
    }
    item = {**link_key(code), **to_item(attributes)}
    with translated("console link write failed"):
        dynamodb().put_item(TableName=auth_table(), Item=item)
    return ConsoleLink(code, expires_at)


_LINK_REFUSED = "This sign-in link was used already or has expired: ask for a new one"


def exchange(code: str, now: datetime) -> OpenedSession:
    """Spends a link's code and opens a session (NotAuthenticated when the code was spent,
    expired or never issued, or the Admin credential is no longer in force)."""
    if not code or len(code) > 100:
        raise NotAuthenticated(_LINK_REFUSED)
    with translated("console link read failed"):
        answer = dynamodb().delete_item(
            TableName=auth_table(), Key=link_key(code), ReturnValues="ALL_OLD"
        )
    old = answer.get("Attributes")
    if not old:
        raise NotAuthenticated(_LINK_REFUSED)
    tenant_id = int(old["tenantId"]["N"])
    credential_id = old["credentialId"]["S"]
    if now >= parse_timestamp(old["expiresAt"]["S"]):
        raise NotAuthenticated(_LINK_REFUSED)
    if not console_admin(credential_in_force(tenant_id, credential_id), now):
        raise NotAuthenticated(_LINK_REFUSED)
    limits = session_limits(tenant_id)
    session = ConsoleSession(tenant_id, credential_id, now, now, limits)
    token = secrets.token_urlsafe(32)
    attributes = {
        "tenantId": tenant_id,
        "credentialId": credential_id,
        "createdAt": format_timestamp(now),
        "lastSeenAt": format_timestamp(now),
        "idleSeconds": int(limits.idle.total_seconds()),
        "absoluteSeconds": int(limits.absolute.total_seconds()),
        "ttl": int(session.expires_at.timestamp()) + 3600,
    }
    with translated("console session write failed"):
        dynamodb().put_item(
            TableName=auth_table(), Item={**session_key(token), **to_item(attributes)}
        )
    return OpenedSession(token, session)


def find_session(token: str) -> ConsoleSession | None:
    item = read_item(auth_table(), session_key(token), "console session read failed")
    if item is None:
        return None
    return ConsoleSession(
        tenant_id=int(item["tenantId"]),
        credential_id=str(item["credentialId"]),
        created_at=parse_timestamp(str(item["createdAt"])),
        last_seen_at=parse_timestamp(str(item["lastSeenAt"])),
        limits=SessionLimits(
            timedelta(seconds=int(item["idleSeconds"])),
            timedelta(seconds=int(item["absoluteSeconds"])),
        ),
    )


def authenticate(token: str, now: datetime) -> tuple[ConsoleSession, Credential]:
    """The open session of a cookie and its Admin credential as they stand now, the session's
    last-seen time refreshed; NotAuthenticated otherwise."""
    session = find_session(token)
    if session is None or not session.open_at(now):
        raise NotAuthenticated()
    credential = credential_in_force(session.tenant_id, session.credential_id)
    if credential is None or not console_admin(credential, now):
        raise NotAuthenticated()
    if now - session.last_seen_at >= TOUCH_INTERVAL:
        _touch(token, now)
    return session, credential


def _touch(token: str, now: datetime) -> None:
    try:
        with translated("console session refresh failed"):
            dynamodb().update_item(
                TableName=auth_table(),
                Key=session_key(token),
                UpdateExpression="SET lastSeenAt = :now",
                # Only a session that still exists (an ended one is never recreated).
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeValues={":now": {"S": format_timestamp(now)}},
            )
    except ConditionFailed as ended:
        raise NotAuthenticated() from ended


def end(token: str) -> None:
    with translated("console session delete failed"):
        dynamodb().delete_item(TableName=auth_table(), Key=session_key(token))


def session_cookie(headers: Mapping[str, Any] | None) -> str | None:
    """The session token from the request's Cookie header, if any."""
    for name, value in (headers or {}).items():
        if name.lower() != "cookie" or not isinstance(value, str):
            continue
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(value)
        except CookieError:
            return None
        morsel = jar.get(SESSION_COOKIE)
        return morsel.value if morsel is not None and morsel.value else None
    return None


def set_cookie_header(
    token: str, *, secure: bool, max_age: timedelta, path: str = CONSOLE_PREFIX
) -> str:
    """HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it), and
    Secure wherever the console is served over https. `path`: the console's path as the
    browser sees it (/Prod/console on API Gateway's own host)."""
    parts = [
        f"{SESSION_COOKIE}={token}",
        f"Path={path}",
        f"Max-Age={int(max_age.total_seconds())}",
        "HttpOnly",
        "SameSite=Strict",
    ]
    if secure:
        parts.append("Secure")
    return "; ".join(parts)


def clear_cookie_header(*, secure: bool, path: str = CONSOLE_PREFIX) -> str:
    parts = [f"{SESSION_COOKIE}=", f"Path={path}", "Max-Age=0", "HttpOnly"]
    parts.append("SameSite=Strict")
    if secure:
        parts.append("Secure")
    return "; ".join(parts)


def require_tenant_admin(tenant_id: int, credential_id: str, now: datetime) -> Credential:
    """The credential a link is made for (the operator's CLI names it): NotFound unless it
    may hold a console session."""
    credential = credential_in_force(tenant_id, credential_id)
    if credential is None or not console_admin(credential, now):
        raise NotFound(f"Tenant {tenant_id} has no Admin credential {credential_id} in force")
    return credential
