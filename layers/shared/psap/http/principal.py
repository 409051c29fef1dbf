"""Who is calling: the tenant and permissions the authorizer resolved from the credential."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from psap.auth.credentials import CredentialKind
from psap.auth.permissions import Permission, parse_permissions
from psap.errors import NotAuthenticated


@dataclass(frozen=True)
class Principal:
    tenant_id: int
    credential_id: str
    permissions: frozenset[Permission]
    # Which authorizer vouched for it; hand-written events without a kind are partner calls.
    kind: CredentialKind = CredentialKind.PARTNER
    label: str = ""  # the credential's name, as the tenant's admin gave it (audit records)

    def has_any(self, wanted: tuple[Permission, ...]) -> bool:
        return not wanted or any(permission in self.permissions for permission in wanted)


def principal_from_event(event: Mapping[str, Any]) -> Principal:
    """Reads the authorizer's context. Its absence on a protected route is a configuration
    error upstream; refusing (401) is the safe answer."""
    context = (event.get("requestContext") or {}).get("authorizer") or {}
    try:
        return Principal(
            tenant_id=int(context["tenantId"]),
            credential_id=str(context["credentialId"]),
            permissions=parse_permissions(str(context.get("permissions", ""))),
            kind=CredentialKind(str(context.get("kind", CredentialKind.PARTNER.value))),
            label=str(context.get("label", "")),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise NotAuthenticated() from error
