"""Trust in the tenant admin API: a revoked or expired credential is refused by its very next
admin call (the authorizer's cached answer notwithstanding), every credential expires and
records its issuer, a revocation cascades to what the revoked credential issued, a CAD key
needs Manage Events, and a connector's bearer credential never follows its URL to another
origin or an unusual port. Functions run in-process on moto (tests/support/admin.py).
"""

from typing import Any

import pytest

from psap import clock
from psap.auth import store as auth_store
from psap.auth.credentials import OPERATOR, CredentialKind, listing_key
from psap.auth.permissions import Permission
from psap.config import auth_table, cad_table, knowledge_table
from psap.errors import NotAuthenticated
from psap.http.operations import OPERATIONS
from psap.storage.dynamodb import dynamodb
from psap.webhooks import dispatcher, store
from psap.webhooks import secrets as vault
from tests.support.admin import ADMIN_PREFIX, CALLER_LABEL, AdminApi
from tests.support.cad import CadFunctions
from tests.support.receiver import Receiver
from tools.admin import main as admin_cli

UNAUTHENTICATED = {"info": "Authentication required", "reason": "UNAUTHENTICATED"}
BEARER = "cad-issued-token-9f8e7d6c5b4a"
PUBLIC_URL = "https://cad.riverside.example/webhooks/psap"
EVERY_ADMIN_OPERATION = sorted(
    (method, resource[len(ADMIN_PREFIX) :])
    for method, resource in OPERATIONS
    if resource.startswith(ADMIN_PREFIX)
)


def tables() -> list[Any]:
    """Every item of the auth and CAD tables but the harness's callers."""
    items = [
        item
        for table in (auth_table(), cad_table())
        for item in dynamodb().scan(TableName=table)["Items"]
    ]
    return [item for item in items if item.get("label", {}).get("S") != CALLER_LABEL]


def issue(
    admin: AdminApi, permissions: list[str], *, by: str | None = None, caller: str = "ADMIN"
) -> dict[str, Any]:
    """A partner credential issued over the API (as `by`, a credential id, when given)."""
    reply = admin.call(
        "POST",
        "/credentials",
        body={"kind": "partner", "permissions": permissions, "label": "p", "expiresInDays": 30},
        permissions=caller,
        credential_id=by,
    )
    assert reply.status == 201, reply.body
    return dict(reply.body)


# ---------------------------------------------------------------- revocation at once


@pytest.mark.parametrize(("method", "resource"), EVERY_ADMIN_OPERATION)
def test_a_revoked_credential_is_refused_by_every_admin_operation_at_once(
    admin: AdminApi, method: str, resource: str
) -> None:
    # Given an Admin credential the authorizer admitted (its context is what API Gateway
    # caches), then revoked
    caller = admin.caller(admin.tenant, "ADMIN,MANAGE_EVENTS")
    auth_store.revoke_credential(admin.tenant, caller)
    before = tables()
    path = {"connectorId": "con-000000000000", "deliveryId": "dlv-" + "0" * 32}
    path["credentialId"] = caller
    # When it calls the operation within the authorizer's cache window
    reply = admin.call(
        method,
        resource,
        path={name: value for name, value in path.items() if "{" + name + "}" in resource},
        body={"kind": "partner", "label": "x", "expiresInDays": 1}
        if method in {"POST", "PATCH"}
        else None,
        permissions="ADMIN,MANAGE_EVENTS",
    )
    # Then the spec's 401, and nothing changed
    assert (reply.status, reply.body) == (401, UNAUTHENTICATED)
    assert reply.headers.get("WWW-Authenticate") == "Bearer"
    assert tables() == before


def test_an_expired_credential_is_refused_by_the_admin_api(admin: AdminApi) -> None:
    caller = admin.caller(admin.tenant, "ADMIN")
    assert admin.call("GET", "/credentials").status == 200
    # When its expiry passes (the authorizer's answer is still cached)
    dynamodb().update_item(
        TableName=auth_table(),
        Key=listing_key(admin.tenant, caller),
        UpdateExpression="SET expiresAt = :past",
        ExpressionAttributeValues={":past": {"S": "2020-01-01T00:00:00.000Z"}},
    )
    reply = admin.call("GET", "/credentials")
    assert (reply.status, reply.body) == (401, UNAUTHENTICATED)


def test_a_credential_of_another_tenant_or_unknown_is_refused(admin: AdminApi) -> None:
    # The context names a credential id that is not the tenant's: refused, never trusted
    reply = admin.call("GET", "/connectors", credential_id="cred-0123456789abcdef")
    assert (reply.status, reply.body) == (401, UNAUTHENTICATED)


# ---------------------------------------------------------------- the cascade


def test_revoking_a_credential_revokes_what_it_issued_transitively(admin: AdminApi) -> None:
    # Given A (issued by the harness's admin), B issued by A, C issued by B
    a = issue(admin, ["ADMIN"])
    a_id = a["credential"]["credentialId"]
    assert a["credential"]["issuedBy"] == admin.caller(admin.tenant, "ADMIN")
    b = issue(admin, ["ADMIN"], by=a_id)
    b_id = b["credential"]["credentialId"]
    assert b["credential"]["issuedBy"] == a_id
    c = issue(admin, [], by=b_id)
    c_id = c["credential"]["credentialId"]
    sibling = issue(admin, [])  # issued by the harness: not A's to revoke
    # When A is revoked
    reply = admin.call("POST", "/credentials/{credentialId}/revoke", path={"credentialId": a_id})
    # Then the answer lists B and C, and each one's next admin call is refused
    assert reply.status == 200, reply.body
    assert reply.body["credential"]["credentialId"] == a_id
    assert sorted(item["credentialId"] for item in reply.body["alsoRevoked"]) == sorted(
        [b_id, c_id]
    )
    assert all(item["revoked"] for item in reply.body["alsoRevoked"])
    refused = admin.call("GET", "/credentials", credential_id=b_id)
    assert (refused.status, refused.body) == (401, UNAUTHENTICATED)
    states = {
        credential.credential_id: credential.revoked
        for credential in auth_store.list_credentials(admin.tenant)
    }
    assert states[a_id] and states[b_id] and states[c_id]
    assert not states[sibling["credential"]["credentialId"]]
    # And a second revocation (idempotent) finds nothing more to revoke
    again = admin.call("POST", "/credentials/{credentialId}/revoke", path={"credentialId": a_id})
    assert again.status == 200 and again.body["alsoRevoked"] == []


def test_a_cascade_on_an_unknown_credential_is_404_and_changes_nothing(
    admin: AdminApi, admin_env: tuple[int, int]
) -> None:
    foreign = issue(admin, [])["credential"]["credentialId"]
    before = tables()
    for credential_id, tenant in (("cred-0123456789abcdef", None), (foreign, admin_env[1])):
        reply = admin.call(
            "POST",
            "/credentials/{credentialId}/revoke",
            path={"credentialId": credential_id},
            tenant=tenant,
        )
        assert reply.status == 404 and reply.body["reason"] == "NOT_FOUND"
    assert tables() == before


def test_a_revoked_issuer_cannot_issue_even_past_the_entrypoint(admin: AdminApi) -> None:
    # The write itself checks its issuer, so a cascade running meanwhile misses nothing
    issuer = issue(admin, ["ADMIN"])["credential"]["credentialId"]
    auth_store.revoke_credential(admin.tenant, issuer)
    before = tables()
    with pytest.raises(NotAuthenticated):
        auth_store.issue_credential(
            admin.tenant,
            CredentialKind.PARTNER,
            frozenset({Permission.ADMIN}),
            label="late",
            expires_at=clock.utc_now().replace(year=clock.utc_now().year + 1),
            issued_by=issuer,
        )
    assert tables() == before


# ---------------------------------------------------------------- expiry and grants


def test_an_admin_credential_lives_at_most_the_tenants_setting(
    admin: AdminApi, capsys: pytest.CaptureFixture[str]
) -> None:
    tables_ = ["--auth-table", auth_table(), "--knowledge-table", knowledge_table()]
    command = [*tables_, "credential", "admin-expiry", "--tenant", str(admin.tenant)]
    assert admin_cli(command) == 0
    assert "at most 90 days" in capsys.readouterr().out
    # When the operator shortens it to 30 days
    assert admin_cli([*command, "--max-days", "30"]) == 0
    assert admin_cli([*command, "--max-days", "400"]) == 2
    assert "'adminCredentialMaxDays'" in capsys.readouterr().err
    body = {"kind": "partner", "permissions": ["ADMIN"], "label": "x", "expiresInDays": 31}
    before = tables()
    # Then 31 days is refused naming the field, 30 is issued, and others keep their maximum
    refused = admin.call("POST", "/credentials", body=body)
    assert refused.status == 400 and "'expiresInDays'" in refused.body["info"]
    assert "from 1 to 30" in refused.body["info"]
    assert tables() == before
    assert admin.call("POST", "/credentials", body={**body, "expiresInDays": 30}).status == 201
    other = {**body, "permissions": ["VIEW_KNOWLEDGE"], "expiresInDays": 365}
    assert (
        admin.call("POST", "/credentials", body=other, permissions="ADMIN,VIEW_KNOWLEDGE").status
        == 201
    )


def test_minting_a_cad_key_needs_manage_events(admin: AdminApi) -> None:
    body = {"kind": "cad", "label": "Riverside CAD", "expiresInDays": 365}
    before = tables()
    refused = admin.call("POST", "/credentials", body=body, permissions="ADMIN")
    assert refused.status == 403
    assert refused.body == {
        "info": "Access denied — a cad credential writes incidents: Manage Events permission "
        "required",
        "reason": "FORBIDDEN",
    }
    assert tables() == before  # not even the rate counter
    allowed = admin.call("POST", "/credentials", body=body, permissions="ADMIN,MANAGE_EVENTS")
    assert allowed.status == 201


def test_the_cli_follows_the_same_rules(
    admin: AdminApi, capsys: pytest.CaptureFixture[str]
) -> None:
    command = ["--auth-table", auth_table(), "--knowledge-table", knowledge_table(), "credential"]
    tenant = str(admin.tenant)
    issue_ = [*command, "issue", "--tenant", tenant, "--kind", "partner", "--label", "x"]
    # No expiry, or an over-long one: refused with the API's words, nothing written
    before = tables()
    assert admin_cli([*issue_, "--permissions", "ADMIN"]) == 2
    assert "Invalid field 'expiresInDays': required" in capsys.readouterr().err
    assert admin_cli([*issue_, "--permissions", "ADMIN", "--expires-in-days", "91"]) == 2
    assert tables() == before
    # The operator is the issuer; a revocation lists the cascade
    assert admin_cli([*issue_, "--permissions", "ADMIN", "--expires-in-days", "90"]) == 0
    root = capsys.readouterr().out.split()[1]
    child = issue(admin, [], by=root)["credential"]["credentialId"]
    (issued,) = [c for c in auth_store.list_credentials(admin.tenant) if c.credential_id == root]
    assert issued.issued_by == OPERATOR
    assert admin_cli([*command, "revoke", "--tenant", tenant, "--credential", root]) == 0
    out = capsys.readouterr().out
    assert root in out and child in out and "1 issued by it" in out


# ---------------------------------------------------------------- connectors


def new_connector(admin: AdminApi, url: str = PUBLIC_URL, **fields: Any) -> str:
    body = {"name": "Riverside CAD", "url": url, "bearerCredential": BEARER, **fields}
    reply = admin.call("POST", "/connectors", body=body)
    assert reply.status == 201, reply.body
    return str(reply.body["connector"]["connectorId"])


def bearer_of(admin: AdminApi, connector_id: str) -> str | None:
    connector = store.get_connector(admin.tenant, connector_id)
    return vault.read_secret(connector.secret_name, fresh=True).bearer_credential


@pytest.mark.parametrize(
    "url",
    # The scheme cannot change outside local development: https only
    ["https://cad2.riverside.example/webhooks/psap", "https://cad.riverside.example:8443/w"],
)
def test_a_url_moved_to_another_origin_needs_the_bearer_credential_again(
    admin: AdminApi, url: str
) -> None:
    connector_id = new_connector(admin)
    path = {"connectorId": connector_id}
    before = tables()
    # When only the URL changes
    reply = admin.call("PATCH", "/connectors/{connectorId}", path=path, body={"url": url})
    # Then 400 names a field, and neither the connector nor its secret changed
    assert reply.status == 400, reply.body
    assert "'bearerCredential'" in reply.body["info"]
    assert tables() == before and bearer_of(admin, connector_id) == BEARER


def test_a_new_origin_with_the_bearer_given_again_is_accepted(admin: AdminApi) -> None:
    connector_id = new_connector(admin)
    path = {"connectorId": connector_id}
    moved = "https://cad2.riverside.example/webhooks/psap"
    reply = admin.call(
        "PATCH",
        "/connectors/{connectorId}",
        path=path,
        body={"url": moved, "bearerCredential": "the-new-host-s-credential"},
    )
    assert reply.status == 200 and reply.body["connector"]["url"] == moved
    assert bearer_of(admin, connector_id) == "the-new-host-s-credential"
    # A new path on the same origin keeps the credential without giving it again
    same = "https://CAD2.riverside.example:443/other/path"
    kept = admin.call("PATCH", "/connectors/{connectorId}", path=path, body={"url": same})
    assert kept.status == 200, kept.body
    assert bearer_of(admin, connector_id) == "the-new-host-s-credential"


@pytest.mark.parametrize(
    "url",
    ["https://1.1.1.1:22/hook", "https://cad.riverside.example:6379/", "https://8.8.8.8:80/"],
)
def test_a_connector_port_outside_the_allowlist_is_400_at_create_and_update(
    admin: AdminApi, url: str
) -> None:
    connector_id = new_connector(admin)
    before = tables()
    created = admin.call(
        "POST",
        "/connectors",
        body={"name": "x", "url": url, "bearerCredential": BEARER},
    )
    assert created.status == 400 and "'url'" in created.body["info"]
    assert "port" in created.body["info"]
    updated = admin.call(
        "PATCH",
        "/connectors/{connectorId}",
        path={"connectorId": connector_id},
        body={"url": url, "bearerCredential": BEARER},
    )
    assert updated.status == 400 and "'url'" in updated.body["info"]
    assert tables() == before


def test_allowed_ports_and_loopback_under_local_dev(admin: AdminApi) -> None:
    assert new_connector(admin, "https://cad.riverside.example:8443/hook")
    assert new_connector(admin, "http://127.0.0.1:49152/hook", localDev=True)
    refused = admin.call(
        "POST",
        "/connectors",
        body={
            "name": "x",
            "url": "http://cad.riverside.example:49152/hook",
            "bearerCredential": BEARER,
            "localDev": True,
        },
    )
    assert refused.status == 400 and "port 49152" in refused.body["info"]


def test_a_stale_connector_never_takes_the_new_bearer_credential_to_its_old_url(
    admin: AdminApi, cad: CadFunctions, receiver: Receiver
) -> None:
    # Given a connector to one CAD server, warm in the dispatcher's cache
    old_host, new_host = receiver, Receiver()
    try:
        body = {"name": "x", "url": old_host.url, "bearerCredential": BEARER, "localDev": True}
        created = admin.call("POST", "/connectors", body=body)
        path = {"connectorId": created.body["connector"]["connectorId"]}
        stale = store.get_connector(admin.tenant, path["connectorId"])
        # When it moves to another server with that server's credential, while the dispatcher
        # still holds the connector as it was (its cache, or a read just before the change)
        moved = admin.call(
            "PATCH",
            "/connectors/{connectorId}",
            path=path,
            body={"url": new_host.url, "bearerCredential": "for-the-new-host"},
        )
        assert moved.status == 200, moved.body
        dispatcher._remember(stale)  # what the dispatcher's 2 s connector cache holds
        admin.call("POST", "/connectors/{connectorId}/test", path=path)
        cad.run_dispatcher()
        # Then the old server never receives the new server's credential
        assert all(
            "for-the-new-host" not in request.headers.get("Authorization", "")
            for request in old_host.requests
        )
    finally:
        new_host.close()
