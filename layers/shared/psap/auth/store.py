"""Tenants and credentials in the auth table: the admin side (create, issue, list, revoke).

The authorizer never comes here (it reads one lookup item by token hash); the admin API
re-reads its caller's listing item on every call (credential_in_force).
"""

import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psap.auth.credentials import (
    EXPIRED_RETENTION_SECONDS,
    OPERATOR,
    Credential,
    CredentialKind,
    credential_attributes,
    credential_from_attributes,
    issue_key,
    issued_prefix,
    listing_key,
    lookup_key,
)
from psap.auth.permissions import Permission
from psap.auth.tokens import new_token, token_hash
from psap.clock import format_timestamp, utc_now
from psap.config import auth_table
from psap.errors import Conflict, InvalidInput, NotAuthenticated, NotFound
from psap.storage.attributes import from_item, to_item
from psap.storage.dynamodb import read_item, transact_write
from psap.storage.queries import query_all, query_page
from psap.storage.sequences import reserve_run

_TENANT_DIRECTORY = "TENANTS"


def _table() -> str:
    """This store's table, from the settings read at cold start (psap.config)."""
    return auth_table()


@dataclass(frozen=True)
class Tenant:
    tenant_id: int
    name: str
    created_at: str


@dataclass(frozen=True)
class IssuedCredential:
    token: str  # shown once; only its hash is stored
    credential: Credential


def create_tenant(name: str) -> Tenant:
    name = name.strip()
    if not name:
        raise InvalidInput("A tenant needs a non-empty name")
    # Tenants are few and made by operators: dense ids, one sequence write each.
    tenant_id = reserve_run(_table(), "TENANT", 1)
    created = format_timestamp(utc_now())
    profile = {"tenantId": tenant_id, "name": name, "createdAt": created}
    transact_write(
        [
            {
                "Put": {
                    "TableName": _table(),
                    "Item": to_item({"pk": f"TENANT#{tenant_id}", "sk": "PROFILE", **profile}),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            {
                "Put": {
                    "TableName": _table(),
                    "Item": to_item(
                        {"pk": _TENANT_DIRECTORY, "sk": f"{tenant_id:012d}", **profile}
                    ),
                }
            },
        ],
        on_cancel=lambda codes: Conflict(f"Tenant {tenant_id} already exists"),
    )
    return Tenant(tenant_id, name, created)


def list_tenants() -> list[Tenant]:
    request = {
        "TableName": _table(),
        "KeyConditionExpression": "pk = :d",
        "ExpressionAttributeValues": {":d": {"S": _TENANT_DIRECTORY}},
    }
    return [_tenant(item) for item in query_all(request, "tenant listing failed")]


def _tenant(item: dict[str, Any]) -> Tenant:
    return Tenant(int(item["tenantId"]), str(item["name"]), str(item["createdAt"]))


def get_tenant(tenant_id: int) -> Tenant:
    profile = {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": "PROFILE"}}
    item = read_item(_table(), profile, "tenant read failed", consistent=False)
    if item is None:
        raise NotFound(f"Tenant {tenant_id} does not exist")
    return _tenant(item)


def issue_credential(
    tenant_id: int,
    kind: CredentialKind,
    permissions: frozenset[Permission],
    *,
    label: str,
    expires_at: datetime,
    issued_by: str,
) -> IssuedCredential:
    """Writes the three items of a new credential. An issuer other than the operator must be
    a credential of the tenant that is not revoked when the transaction commits: a cascade
    revokes the issuer before it reads what the issuer issued, so nothing escapes it."""
    now = utc_now()
    if expires_at <= now:
        raise InvalidInput("The expiry must be in the future")
    if kind is CredentialKind.CAD and permissions:
        raise InvalidInput("A cad credential carries no data-interface permissions")
    token = new_token(kind.value)
    hashed = token_hash(token)
    credential = Credential(
        credential_id=f"cred-{secrets.token_hex(8)}",
        tenant_id=tenant_id,
        kind=kind,
        permissions=permissions,
        label=label,
        created_at=now,
        expires_at=expires_at,
        revoked=False,
        issued_by=issued_by,
    )
    attributes = credential_attributes(credential)
    # DynamoDB's TTL deletes the lookup item a while after expiry (EXPIRED_RETENTION_SECONDS).
    lookup = {
        **attributes,
        "expiresAtEpoch": int(expires_at.timestamp()) + EXPIRED_RETENTION_SECONDS,
    }
    checks: list[dict[str, Any]] = [
        {
            "ConditionCheck": {
                "TableName": _table(),
                "Key": {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": "PROFILE"}},
                "ConditionExpression": "attribute_exists(pk)",
            }
        }
    ]
    if issued_by != OPERATOR:
        checks.append(
            {
                "ConditionCheck": {
                    "TableName": _table(),
                    "Key": listing_key(tenant_id, issued_by),
                    "ConditionExpression": "attribute_exists(pk) AND revoked = :no",
                    "ExpressionAttributeValues": {":no": {"BOOL": False}},
                }
            }
        )
    listed = to_item({**attributes, "tokenHash": hashed})
    transact_write(
        [
            *checks,
            {
                "Put": {
                    "TableName": _table(),
                    "Item": {**lookup_key(hashed), **to_item(lookup)},
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            {
                "Put": {
                    "TableName": _table(),
                    "Item": {**listing_key(tenant_id, credential.credential_id), **listed},
                }
            },
            {
                "Put": {
                    "TableName": _table(),
                    "Item": {**issue_key(tenant_id, issued_by, credential.credential_id), **listed},
                }
            },
        ],
        on_cancel=lambda codes: _issue_refusal(tenant_id, codes),
    )
    return IssuedCredential(token=token, credential=credential)


def _issue_refusal(tenant_id: int, codes: list[str]) -> Exception:
    if codes and codes[0] == "ConditionalCheckFailed":
        return NotFound(f"Tenant {tenant_id} does not exist")
    # The issuing credential was revoked (a cascade) while this request ran.
    return NotAuthenticated()


def credential_in_force(tenant_id: int, credential_id: str) -> Credential | None:
    """The credential as it stands now (a strongly consistent read of its listing item), or
    None when the tenant has no such credential."""
    listing = read_item(_table(), listing_key(tenant_id, credential_id), "credential read failed")
    return credential_from_attributes(listing) if listing is not None else None


def admin_expiry_days(tenant_id: int, default: int) -> int:
    """The tenant's longest lifetime for a credential holding Admin (its setting, else
    `default`); NotFound for a tenant that does not exist."""
    profile = {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": "PROFILE"}}
    item = read_item(_table(), profile, "tenant read failed")
    if item is None:
        raise NotFound(f"Tenant {tenant_id} does not exist")
    return int(item.get("adminCredentialMaxDays", default))


def set_admin_expiry_days(tenant_id: int, days: int) -> None:
    def missing(codes: list[str]) -> Exception:
        return NotFound(f"Tenant {tenant_id} does not exist")

    transact_write(
        [
            {
                "Update": {
                    "TableName": _table(),
                    "Key": {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": "PROFILE"}},
                    "UpdateExpression": "SET adminCredentialMaxDays = :days",
                    "ConditionExpression": "attribute_exists(pk)",
                    "ExpressionAttributeValues": {":days": {"N": str(days)}},
                }
            }
        ],
        on_cancel=missing,
    )


def list_credentials(tenant_id: int) -> list[Credential]:
    return [
        credential_from_attributes(item)
        for item in query_all(_credentials_request(tenant_id), "credential listing failed")
    ]


def _credentials_request(tenant_id: int) -> dict[str, Any]:
    return {
        "TableName": _table(),
        "KeyConditionExpression": "pk = :t AND begins_with(sk, :c)",
        "ExpressionAttributeValues": {":t": {"S": f"TENANT#{tenant_id}"}, ":c": {"S": "CRED#"}},
    }


def credential_page(
    tenant_id: int, limit: int, after: str | None
) -> tuple[list[Credential], str | None]:
    """One page of a tenant's credentials by id: one Query of at most `limit` items. The
    second value is the last id of the page when more may follow."""
    request = {**_credentials_request(tenant_id), "Limit": limit}
    start = listing_key(tenant_id, after) if after is not None else None
    answer = query_page(request, "credential listing failed", start)
    credentials = [credential_from_attributes(from_item(raw)) for raw in answer.get("Items", [])]
    more = "LastEvaluatedKey" in answer and credentials
    return credentials, credentials[-1].credential_id if more else None


@dataclass(frozen=True)
class Revocation:
    credential: Credential  # the one asked for, now revoked
    cascaded: list[Credential]  # what it issued, transitively, revoked by this call


# Each credential is three Updates; a transaction holds at most 100 actions.
_REVOKED_PER_TRANSACTION = 33


def revoke_credential(tenant_id: int, credential_id: str) -> Revocation:
    """Revokes the credential and, transitively, every credential it issued.

    Each credential is revoked before its issue items are read (strongly consistent), and an
    issue commits only while its issuer is not revoked (issue_credential), so a credential
    issued during the cascade is either found by it or never written."""
    listing = read_item(_table(), listing_key(tenant_id, credential_id), "credential read failed")
    if listing is None:
        raise NotFound(f"Credential {credential_id} does not exist in tenant {tenant_id}")
    _revoke([listing])
    cascaded: list[Credential] = []
    seen = {credential_id}
    issuers = [credential_id]
    while issuers:
        issued = [
            item
            for issuer in issuers
            for item in query_all(_issued_request(tenant_id, issuer), "credential read failed")
            if str(item["credentialId"]) not in seen
        ]
        _revoke([item for item in issued if not item.get("revoked")])
        for item in issued:
            seen.add(str(item["credentialId"]))
            if not item.get("revoked"):
                cascaded.append(credential_from_attributes({**item, "revoked": True}))
        issuers = [str(item["credentialId"]) for item in issued]
    return Revocation(credential_from_attributes({**listing, "revoked": True}), cascaded)


def _issued_request(tenant_id: int, issuer: str) -> dict[str, Any]:
    return {
        "TableName": _table(),
        "KeyConditionExpression": "pk = :t AND begins_with(sk, :i)",
        "ExpressionAttributeValues": {
            ":t": {"S": f"TENANT#{tenant_id}"},
            ":i": {"S": issued_prefix(issuer)},
        },
        "ConsistentRead": True,
    }


def _revoke(listings: list[dict[str, Any]]) -> None:
    """Marks each credential's items revoked, all of a chunk in one transaction."""
    revoke = {
        "UpdateExpression": "SET revoked = :yes",
        "ConditionExpression": "attribute_exists(pk)",
        "ExpressionAttributeValues": {":yes": {"BOOL": True}},
    }
    updates: list[dict[str, Any]] = []
    for listing in listings:
        tenant_id, credential_id = int(listing["tenantId"]), str(listing["credentialId"])
        keys = [listing_key(tenant_id, credential_id), lookup_key(str(listing["tokenHash"]))]
        if listing.get("issuedBy"):  # credentials issued before issuers were kept have none
            keys.append(issue_key(tenant_id, str(listing["issuedBy"]), credential_id))
        updates += [{"Update": {"TableName": _table(), "Key": key, **revoke}} for key in keys]
    chunk = _REVOKED_PER_TRANSACTION * 3
    for start in range(0, len(updates), chunk):
        transact_write(
            updates[start : start + chunk],
            on_cancel=lambda codes: NotFound("A credential of the cascade no longer exists"),
        )
