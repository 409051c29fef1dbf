"""Tenants and credentials in the auth table: the admin side (create, issue, list, revoke).

The request path never comes here: the authorizer reads one lookup item by token hash.
"""

import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psap.auth.credentials import (
    EXPIRED_RETENTION_SECONDS,
    Credential,
    CredentialKind,
    credential_attributes,
    credential_from_attributes,
    listing_key,
    lookup_key,
)
from psap.auth.permissions import Permission
from psap.auth.tokens import new_token, token_hash
from psap.clock import format_timestamp, utc_now
from psap.config import auth_table
from psap.errors import Conflict, InvalidInput, NotFound
from psap.storage.attributes import from_item, to_item
from psap.storage.dynamodb import read_item, transact_write
from psap.storage.queries import query_all, query_page
from psap.storage.sequences import next_id

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
    tenant_id = next_id(_table(), "TENANT")
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
    label: str,
    expires_at: datetime | None = None,
) -> IssuedCredential:
    now = utc_now()
    if expires_at is not None and expires_at <= now:
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
    )
    attributes = credential_attributes(credential)
    lookup = {**attributes}
    if expires_at is not None:
        lookup["expiresAtEpoch"] = int(expires_at.timestamp()) + EXPIRED_RETENTION_SECONDS
    transact_write(
        [
            {
                "ConditionCheck": {
                    "TableName": _table(),
                    "Key": {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": "PROFILE"}},
                    "ConditionExpression": "attribute_exists(pk)",
                }
            },
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
                    "Item": {
                        **listing_key(tenant_id, credential.credential_id),
                        **to_item({**attributes, "tokenHash": hashed}),
                    },
                }
            },
        ],
        on_cancel=lambda codes: NotFound(f"Tenant {tenant_id} does not exist"),
    )
    return IssuedCredential(token=token, credential=credential)


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


def revoke_credential(tenant_id: int, credential_id: str) -> Credential:
    listing = read_item(_table(), listing_key(tenant_id, credential_id), "credential read failed")
    if listing is None:
        raise NotFound(f"Credential {credential_id} does not exist in tenant {tenant_id}")
    revoke = {
        "UpdateExpression": "SET revoked = :yes",
        "ConditionExpression": "attribute_exists(pk)",
        "ExpressionAttributeValues": {":yes": {"BOOL": True}},
    }
    transact_write(
        [
            {
                "Update": {
                    "TableName": _table(),
                    "Key": listing_key(tenant_id, credential_id),
                    **revoke,
                }
            },
            {"Update": {"TableName": _table(), "Key": lookup_key(listing["tokenHash"]), **revoke}},
        ],
        on_cancel=lambda codes: NotFound(f"Credential {credential_id} does not exist"),
    )
    return credential_from_attributes({**listing, "revoked": True})
