"""Issuing, listing and revoking a tenant's credentials: the rules the admin CLI and the
tenant admin API (/api/v1/external/admin/credentials) share.

- Permissions are named by their wire names; an unknown name is refused, never dropped.
- A `cad` key carries no data-interface permissions.
- Every credential expires: a whole number of days, at most the tenant's setting for one
  holding Admin (ADMIN_EXPIRY_DEFAULT_DAYS unless the operator changed it) and
  MAX_EXPIRY_DAYS for the others. A credential that never expires cannot be issued.
- Every credential records its issuer (the issuing credential, or OPERATOR for the CLI);
  revoking a credential revokes what it issued, transitively.
- Over the API, an Admin grants only permissions its own credential holds (`granted_by`),
  mints a `cad` key (which writes incidents) only if it holds MANAGE_EVENTS, and issues at
  most ISSUE_RATE credentials per tenant per hour. The CLI is the operator's tool (it holds
  AWS credentials to the tables anyway): it passes neither.
- A token is returned once, by the issue call; afterwards only its hash exists.
- The admin API re-reads its caller's credential on every call (psap.http.resolver), so a
  revocation stops it at once; the data interface may still accept a revoked token for
  AUTHORIZER_CACHE_SECONDS: API Gateway caches the authorizer's answer per token
  (template.yaml, ReauthorizeEvery).
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any

from pydantic import ConfigDict, Field, WithJsonSchema, field_validator

from psap.auth import store
from psap.auth.credentials import Credential, CredentialKind
from psap.auth.permissions import Permission
from psap.config import auth_table
from psap.errors import InvalidField, InvalidParameter, NotFound, PermissionDenied
from psap.models import Timestamp, WireModel
from psap.storage.rate_limits import RateLimit, consume

AUTHORIZER_CACHE_SECONDS = 60  # template.yaml: ReauthorizeEvery of both authorizers
# A credential holding Admin can mint others: it lives at most the tenant's setting, this
# long unless the operator set it (`psap-admin credential admin-expiry`), never over the
# ceiling. Any other credential lives at most MAX_EXPIRY_DAYS (a CAD key: a yearly rotation).
ADMIN_EXPIRY_DEFAULT_DAYS = 90
ADMIN_EXPIRY_CEILING_DAYS = 365
MAX_EXPIRY_DAYS = 365
_LONGEST_EXPIRY_DAYS = max(MAX_EXPIRY_DAYS, ADMIN_EXPIRY_CEILING_DAYS)
MAX_LABEL = 200
ISSUE_RATE = RateLimit("credential issue", limit=20, window_seconds=3600)
LIST_PAGE_DEFAULT = 50
LIST_PAGE_MAX = 100
_CREDENTIAL_ID = re.compile(r"^cred-[0-9a-f]{16}$")
# A listing cursor is the last credential id of the page before (ids are not secret).
CURSOR_PATTERN = _CREDENTIAL_ID.pattern
_PERMISSION_NAMES = frozenset(permission.value for permission in Permission)
_PERMISSION_SCHEMA = {"type": "string", "enum": sorted(_PERMISSION_NAMES)}
# Documented (issue() checks it): a cad key carries no data-interface permissions.
_CAD_HAS_NONE: dict[str, Any] = {
    "anyOf": [
        {"properties": {"kind": {"const": "partner"}}},
        {"properties": {"permissions": {"maxItems": 0}}},
    ]
}


def parse_permissions(names: Iterable[str]) -> frozenset[Permission]:
    """Wire names to permissions; unknown names are refused (a typo must not grant less)."""
    wanted = [name.strip().upper() for name in names if name.strip()]
    known = {permission.value for permission in Permission}
    unknown = sorted(set(wanted) - known)
    if unknown:
        raise InvalidField(
            "permissions",
            f"unknown permission(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}",
        )
    return frozenset(Permission(name) for name in wanted)


def expiry_after(days: int | None, now: datetime, longest: int) -> datetime:
    if days is None or days <= 0 or days > longest:
        given = "required" if days is None else f"{days} is refused"
        raise InvalidField(
            "expiresInDays",
            f"{given}: every credential expires, after a whole number of days from 1 to "
            f"{longest} for this one",
        )
    return now + timedelta(days=days)


def longest_life(tenant_id: int, request: "CredentialRequest") -> int:
    """The most days the requested credential may live (the tenant's setting for Admin)."""
    if Permission.ADMIN in request.permissions:
        return store.admin_expiry_days(tenant_id, ADMIN_EXPIRY_DEFAULT_DAYS)
    return MAX_EXPIRY_DAYS


def check_admin_expiry_setting(days: int) -> int:
    if not 1 <= days <= ADMIN_EXPIRY_CEILING_DAYS:
        raise InvalidField(
            "adminCredentialMaxDays",
            f"a whole number of days from 1 to {ADMIN_EXPIRY_CEILING_DAYS}",
        )
    return days


def check_label(label: str) -> str:
    label = label.strip()
    if not label or len(label) > MAX_LABEL:
        raise InvalidField("label", f"who or what uses it, 1 to {MAX_LABEL} characters")
    return label


def check_grant(request: "CredentialRequest", granted_by: frozenset[Permission]) -> None:
    """An Admin cannot hand out more than it holds: a narrow admin credential must not mint
    a broader one, nor a CAD key (which writes incidents) without Manage Events."""
    if request.kind is CredentialKind.CAD and Permission.MANAGE_EVENTS not in granted_by:
        raise PermissionDenied(
            "Access denied — a cad credential writes incidents: "
            f"{Permission.MANAGE_EVENTS.display_name} permission required"
        )
    beyond = sorted(permission.value for permission in request.permissions - granted_by)
    if beyond:
        raise PermissionDenied(
            f"Access denied — your credential does not hold {', '.join(beyond)}, "
            "so it cannot grant it"
        )


@dataclass(frozen=True)
class CredentialRequest:
    kind: CredentialKind
    permissions: frozenset[Permission]
    label: str
    expires_in_days: int | None


def issue(
    tenant_id: int,
    request: CredentialRequest,
    now: datetime,
    *,
    issued_by: str,
    granted_by: frozenset[Permission] | None = None,
    rate_limited: bool = False,
) -> store.IssuedCredential:
    """Checks everything, then counts against the rate limit, then writes (all or nothing).
    `issued_by`: the issuing credential's id, or OPERATOR (psap.auth.credentials)."""
    label = check_label(request.label)
    if request.kind is CredentialKind.CAD and request.permissions:
        raise InvalidField("permissions", "a cad credential carries no data-interface permissions")
    if granted_by is not None:
        check_grant(request, granted_by)
    expires_at = expiry_after(request.expires_in_days, now, longest_life(tenant_id, request))
    if rate_limited:
        consume(
            auth_table(), f"TENANT#{tenant_id}", "RATE#credential-issue", rate=ISSUE_RATE, now=now
        )
    return store.issue_credential(
        tenant_id,
        request.kind,
        request.permissions,
        label=label,
        expires_at=expires_at,
        issued_by=issued_by,
    )


def revoke(tenant_id: int, credential_id: str) -> store.Revocation:
    """Revokes the credential and everything it issued, transitively (the cascade)."""
    if not _CREDENTIAL_ID.match(credential_id):
        # Not an id we ever issue: answered like an unknown one, without a read.
        raise NotFound(f"Credential {credential_id[:40]} does not exist")
    return store.revoke_credential(tenant_id, credential_id)


def revocation_notice(revocation: store.Revocation) -> str:
    revoked = [revocation.credential, *revocation.cascaded]
    return (
        f"revoked {', '.join(credential.credential_id for credential in revoked)} "
        f"({len(revocation.cascaded)} issued by it, transitively); the admin API refuses them "
        f"at once, the data interface may keep accepting them for up to "
        f"{AUTHORIZER_CACHE_SECONDS} s (API Gateway's authorizer cache)"
    )


# ---------------------------------------------------------------- the API's shapes


class CredentialView(WireModel):
    """A credential as listed: never its token, never the token's hash."""

    credential_id: str
    kind: CredentialKind
    permissions: list[Permission]
    label: str
    created_at: Timestamp
    expires_at: Timestamp | None = Field(
        description="Every credential issued now has one; null only on older credentials"
    )
    revoked: bool
    issued_by: str | None = Field(
        description="The credential id that issued it, or `operator` (the admin CLI); "
        "null on credentials issued before the issuer was recorded"
    )

    @classmethod
    def of(cls, credential: Credential) -> "CredentialView":
        return cls(
            credential_id=credential.credential_id,
            kind=credential.kind,
            permissions=sorted(credential.permissions),
            label=credential.label,
            created_at=credential.created_at,
            expires_at=credential.expires_at,
            revoked=credential.revoked,
            issued_by=credential.issued_by,
        )


class IssueCredentialBody(WireModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, json_schema_extra=_CAD_HAS_NONE
    )

    kind: CredentialKind = Field(
        description="partner: the data interface; cad: a CAD's key for POST /cad/v1/incidents"
    )
    permissions: list[Annotated[str, WithJsonSchema(_PERMISSION_SCHEMA)]] = Field(
        default_factory=list,
        max_length=len(Permission),
        description="Wire names, e.g. VIEW_KNOWLEDGE; only ones your own credential holds",
    )
    label: str = Field(
        min_length=1, max_length=MAX_LABEL, pattern=r"\S", description="Who or what uses it"
    )
    expires_in_days: int = Field(
        description=(
            "Required: days until it expires. At most the tenant's setting for a credential "
            f"holding ADMIN ({ADMIN_EXPIRY_DEFAULT_DAYS} unless the operator changed it, never "
            f"over {ADMIN_EXPIRY_CEILING_DAYS}), at most {MAX_EXPIRY_DAYS} for the others"
        ),
        # Documented here, checked by expiry_after (its words name the field)
        json_schema_extra={"minimum": 1, "maximum": _LONGEST_EXPIRY_DAYS},
    )

    @field_validator("expires_in_days", mode="before")
    @classmethod
    def _a_whole_number(cls, value: object) -> object:
        if isinstance(value, bool):  # JSON true/false is not a number of days
            raise ValueError("a whole number of days is expected")
        return value

    def to_request(self) -> CredentialRequest:
        # Over the API the names are exactly the wire names (the CLI's comma list is lenient).
        unknown = sorted({name for name in self.permissions if name not in _PERMISSION_NAMES})
        if unknown:
            known = ", ".join(sorted(_PERMISSION_NAMES))
            raise InvalidField(
                "permissions", f"unknown permission(s) {', '.join(unknown)}; known: {known}"
            )
        return CredentialRequest(
            self.kind, parse_permissions(self.permissions), self.label, self.expires_in_days
        )


class IssuedCredentialView(WireModel):
    credential: CredentialView
    token: str = Field(description="Shown once, in this response; store it now")
    authorizer_cache_seconds: int = AUTHORIZER_CACHE_SECONDS


class CredentialPage(WireModel):
    items: list[CredentialView]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page")
    authorizer_cache_seconds: int = Field(
        default=AUTHORIZER_CACHE_SECONDS,
        description="How long the data interface may still accept a revoked credential "
        "(authorizer cache); the admin API refuses it at once",
    )


class RevokedCredentialView(WireModel):
    credential: CredentialView
    also_revoked: list[CredentialView] = Field(
        description="Every credential it issued, transitively, that this call revoked"
    )
    authorizer_cache_seconds: int = Field(
        default=AUTHORIZER_CACHE_SECONDS,
        description="How long the data interface may still accept a revoked token (its "
        "authorizer cache); the admin API refuses it at once",
    )

    @classmethod
    def of(cls, revocation: store.Revocation) -> "RevokedCredentialView":
        return cls(
            credential=CredentialView.of(revocation.credential),
            also_revoked=[CredentialView.of(credential) for credential in revocation.cascaded],
        )


def list_page(tenant_id: int, limit: int, cursor: str | None) -> CredentialPage:
    after = _decode_cursor(cursor) if cursor is not None else None
    credentials, last = store.credential_page(tenant_id, limit, after)
    return CredentialPage(
        items=[CredentialView.of(credential) for credential in credentials],
        next_cursor=_encode_cursor(last) if last else None,
    )


def _encode_cursor(credential_id: str) -> str:
    return credential_id


def _decode_cursor(cursor: str) -> str:
    if not _CREDENTIAL_ID.match(cursor):
        raise InvalidParameter("cursor", "not a cursor this API returned")
    return cursor
