"""Credential records and their keys in the auth table.

Three items per credential: a lookup item keyed by the token's hash (what the authorizer
reads, one GetItem), a listing item under the tenant (what the admin CLI lists and revokes,
and what the admin API re-reads on every call), and an issue item under its issuer (so a
revocation finds, with one Query, every credential the revoked one issued). They are written
and revoked in one transaction so they never disagree.
"""

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from psap.auth.permissions import Permission
from psap.clock import format_timestamp, parse_timestamp

# Expired lookup items are deleted by DynamoDB's TTL this long after expiry; until then they
# still answer "expired" (401) like any invalid token.
EXPIRED_RETENTION_SECONDS = 30 * 24 * 3600
# The issuer of a credential the operator made with the admin CLI (or the local demo):
# not a credential, so nothing above it can be revoked.
OPERATOR = "operator"


class CredentialKind(StrEnum):
    PARTNER = "partner"  # the data interface
    CAD = "cad"  # CAD intake


@dataclass(frozen=True)
class Credential:
    credential_id: str
    tenant_id: int
    kind: CredentialKind
    permissions: frozenset[Permission]
    label: str
    created_at: datetime
    expires_at: datetime | None  # None only on credentials issued before expiry was required
    revoked: bool
    # The credential id that issued it, OPERATOR, or None for one issued before this was kept.
    issued_by: str | None = None

    def usable(self, kind: CredentialKind, now: datetime) -> bool:
        if self.revoked or self.kind != kind:
            return False
        return self.expires_at is None or now < self.expires_at


def lookup_key(hashed_token: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"TOKEN#{hashed_token}"}, "sk": {"S": "TOKEN"}}


def tenant_limits_key(tenant_id: int) -> dict[str, dict[str, str]]:
    """The tenant's own request limits (psap.budgets), beside its profile."""
    return {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": "LIMITS"}}


def listing_key(tenant_id: int, credential_id: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": f"CRED#{credential_id}"}}


def issue_key(tenant_id: int, issued_by: str, credential_id: str) -> dict[str, dict[str, str]]:
    """The issuer's record of a credential it issued; a revocation queries its prefix."""
    return {
        "pk": {"S": f"TENANT#{tenant_id}"},
        "sk": {"S": f"{issued_prefix(issued_by)}{credential_id}"},
    }


def issued_prefix(issued_by: str) -> str:
    return f"ISSUED#{issued_by}#"


def credential_attributes(credential: Credential) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "credentialId": credential.credential_id,
        "tenantId": credential.tenant_id,
        "kind": credential.kind.value,
        "permissions": sorted(permission.value for permission in credential.permissions),
        "label": credential.label,
        "createdAt": format_timestamp(credential.created_at),
        "revoked": credential.revoked,
    }
    if credential.expires_at is not None:
        attributes["expiresAt"] = format_timestamp(credential.expires_at)
    if credential.issued_by is not None:
        attributes["issuedBy"] = credential.issued_by
    return attributes


def credential_from_attributes(values: dict[str, Any]) -> Credential:
    known = {permission.value for permission in Permission}
    expires = values.get("expiresAt")
    return Credential(
        credential_id=str(values["credentialId"]),
        tenant_id=int(values["tenantId"]),
        kind=CredentialKind(values["kind"]),
        permissions=frozenset(Permission(name) for name in values["permissions"] if name in known),
        label=str(values.get("label", "")),
        created_at=parse_timestamp(str(values["createdAt"])),
        expires_at=parse_timestamp(str(expires)) if expires else None,
        revoked=bool(values.get("revoked", False)),
        issued_by=str(values["issuedBy"]) if values.get("issuedBy") else None,
    )
