"""The tenant admin API: connectors, the delivery log and credentials over HTTP,
with the CLI's rules (one implementation in psap.webhooks.administration and
psap.auth.issuing). Every operation is tested for behaviour, permission, isolation and bad
input; functions run in-process on moto, webhooks go to a real HTTP receiver on loopback.
"""

import io
import json
import logging
from datetime import timedelta
from typing import Any

import pytest
from standardwebhooks import Webhook, WebhookVerificationError

from psap import clock
from psap.auth import store as auth_store
from psap.auth.issuing import AUTHORIZER_CACHE_SECONDS, ISSUE_RATE
from psap.auth.tokens import token_hash
from psap.config import auth_table, cad_table, knowledge_table
from psap.http.operations import OPERATIONS
from psap.observability import logger
from psap.storage.dynamodb import dynamodb
from psap.webhooks import administration, store
from psap.webhooks import secrets as vault
from psap.webhooks.administration import ROTATION_RATE
from psap.webhooks.catalogue import IncidentUpdated, UpdateKind, WebhookUpdate
from psap.webhooks.deliveries import emit_update
from psap.webhooks.signing import SignedMessage, SigningProfile, signature_headers
from receiver_kit.psap_webhooks import VerificationError, verify_delivery
from tests.support.admin import ADMIN_PREFIX, CALLER_LABEL, AdminApi, Reply
from tests.support.audit import queued_messages
from tests.support.cad import CadFunctions, drain
from tests.support.receiver import Answer, Receiver
from tools.admin import main as admin_cli

BEARER = "cad-issued-token-9f8e7d6c5b4a"
DAYS = {"expiresInDays": 30}  # every credential expires
CAD_KEY = {"kind": "cad", "label": "Riverside CAD", **DAYS}
# A CAD key writes incidents: only a credential holding Manage Events may mint one.
CAD_MINTER = "ADMIN,MANAGE_EVENTS"
PUBLIC_URL = "https://cad.riverside.example/webhooks/psap"
ADMIN_OPERATIONS = sorted(
    (method, resource[len(ADMIN_PREFIX) :])
    for (method, resource) in OPERATIONS
    if resource.startswith(ADMIN_PREFIX)
)


def new_connector(admin: AdminApi, url: str | None = None, **fields: Any) -> Reply:
    body: dict[str, Any] = {
        "name": "Riverside CAD",
        "url": url or PUBLIC_URL,
        "bearerCredential": BEARER,
        **fields,
    }
    if url and url.startswith("http://127.0.0.1"):
        body.setdefault("localDev", True)
    reply = admin.call("POST", "/connectors", body=body)
    assert reply.status == 201, reply.body
    return reply


def connector_path(reply: Reply) -> dict[str, str]:
    return {"connectorId": reply.body["connector"]["connectorId"]}


def cad_items() -> list[dict[str, Any]]:
    return list(dynamodb().scan(TableName=cad_table())["Items"])


def auth_items() -> list[dict[str, Any]]:
    """The auth table, without the harness's callers (each issued at its first call)."""
    items = dynamodb().scan(TableName=auth_table())["Items"]
    return [item for item in items if item.get("label", {}).get("S") != CALLER_LABEL]


def secret_names() -> list[str]:
    return [entry["Name"] for entry in vault.secrets_manager().list_secrets()["SecretList"]]


def verifies(connector_id: str, tenant: int, secret: str) -> bool:
    """Whether a delivery signed now with the connector's active secrets verifies with it."""
    connector = store.get_connector(tenant, connector_id)
    now = clock.utc_now()
    active = vault.read_secret(connector.secret_name, fresh=True).active_signing(now)
    stamp = int(now.timestamp())
    headers = signature_headers(
        connector.profile,
        active,
        SignedMessage("dlv-1", timestamp=stamp, body=b"{}", event_type="x"),
    )
    try:
        if connector.profile is SigningProfile.STANDARD_WEBHOOKS:
            if not secret.startswith("whsec_"):
                return False  # another profile's secret: the library may not even decode it
            Webhook(secret).verify(b"{}", headers)  # the public library
        else:
            verify_delivery(secret, headers, b"{}", now=stamp)
    except (VerificationError, WebhookVerificationError):
        return False
    return True


# ---------------------------------------------------------------- permission


def test_every_admin_operation_is_in_the_template_and_needs_admin(admin: AdminApi) -> None:
    # Given the permission table, when compared with the template's routes
    routes = {(method, resource[len(ADMIN_PREFIX) :]) for method, resource in admin.routes}
    # Then every admin operation is routed, and Admin is the one permission that passes
    assert set(ADMIN_OPERATIONS) == routes
    assert len(routes) == 19  # with the console sign-in link, connector charts, tenant exports
    for method, resource in ADMIN_OPERATIONS:
        assert OPERATIONS[(method, ADMIN_PREFIX + resource)].any_of == (
            OPERATIONS[("POST", ADMIN_PREFIX + "/connectors")].any_of
        )


@pytest.mark.parametrize(("method", "resource"), ADMIN_OPERATIONS)
def test_a_credential_without_admin_gets_403_and_nothing_is_written(
    admin: AdminApi, method: str, resource: str
) -> None:
    # Given a connector and a credential holding every permission but Admin
    created = new_connector(admin)
    before_cad, before_auth, before_secrets = cad_items(), auth_items(), secret_names()
    path = {
        "connectorId": created.body["connector"]["connectorId"],
        "deliveryId": "dlv-" + "0" * 32,
        "credentialId": "cred-0123456789abcdef",
    }
    names = {name for name in path if "{" + name + "}" in resource}
    # When it calls the operation
    reply = admin.call(
        method,
        resource,
        path={name: path[name] for name in names},
        body={"name": "x"} if method in {"POST", "PATCH"} else None,
        permissions="VIEW_KNOWLEDGE,MANAGE_KNOWLEDGE,MANAGE_USERS,MANAGE_EVENTS,"
        "BROWSE_EVENTS,MANAGE_PHASES,VIEW_QA,RESOURCE_CENTER_PUBLISH",
    )
    # Then 403 names Admin, and no table or secret changed
    assert reply.status == 403
    assert reply.body == {
        "info": "Access denied — Admin permission required",
        "reason": "FORBIDDEN",
    }
    assert (cad_items(), auth_items(), secret_names()) == (
        before_cad,
        before_auth,
        before_secrets,
    )


# ---------------------------------------------------------------- connectors


def test_create_shows_the_signing_secret_once_and_never_the_bearer_credential(
    admin: AdminApi,
) -> None:
    # When a 911 center registers its CAD endpoint
    reply = new_connector(admin, eventTypes=["incident.accepted", "incident.rejected"])
    # Then the answer holds the connector and its signing secret, never the CAD's credential
    connector = reply.body["connector"]
    assert reply.body["signingSecret"].startswith("psapsec_")
    assert BEARER not in reply.raw
    assert "secretName" not in connector and "bearerCredential" not in connector
    assert connector["url"] == PUBLIC_URL
    assert connector["eventTypes"] == ["incident.accepted", "incident.rejected"]
    assert connector["status"] == "ACTIVE"
    assert reply.headers["Location"].endswith(connector["connectorId"])
    # And a delivery signed with the stored secret verifies with the one shown
    assert verifies(connector["connectorId"], admin.tenant, reply.body["signingSecret"])
    # And later reads never show it again
    again = admin.call("GET", "/connectors/{connectorId}", path=connector_path(reply))
    assert again.status == 200
    assert reply.body["signingSecret"] not in again.raw and BEARER not in again.raw


def test_list_and_get_show_only_the_callers_tenant(
    admin: AdminApi, admin_env: tuple[int, int]
) -> None:
    # Given a connector in each tenant
    mine = new_connector(admin)
    other_tenant = admin_env[1]
    theirs = admin.call(
        "POST",
        "/connectors",
        body={"name": "Lakeshore CAD", "url": PUBLIC_URL, "bearerCredential": BEARER},
        tenant=other_tenant,
    )
    # When tenant 1 lists, and reads tenant 2's connector by id
    listed = admin.call("GET", "/connectors")
    foreign = admin.call("GET", "/connectors/{connectorId}", path=connector_path(theirs))
    # Then it sees its own only, and the other's id is 404 like an unknown one
    assert [item["connectorId"] for item in listed.body["items"]] == [
        mine.body["connector"]["connectorId"]
    ]
    assert foreign.status == 404
    unknown = admin.call("GET", "/connectors/{connectorId}", path={"connectorId": "con-nope"})
    assert unknown.status == 404
    assert foreign.body["reason"] == unknown.body["reason"] == "NOT_FOUND"


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"url": "http://cad.example.com/hook"}, "url"),
        ({"url": "https://10.1.2.3/hook"}, "url"),
        ({"url": "https://169.254.169.254/latest/meta-data"}, "url"),
        ({"url": "https://[::ffff:127.0.0.1]/hook"}, "url"),
        ({"url": "https://cad.example.com/" + "a" * 2100}, "url"),
        ({"url": "not a url"}, "url"),
        ({"profile": "hmac-md5"}, "profile"),
        ({"eventTypes": ["incident.accepted", "incident.exploded"]}, "eventTypes"),
        ({"name": "n" * 201}, "name"),
        ({"name": "   "}, "name"),
        ({"bearerCredential": None}, "bearerCredential"),
        ({"bearerCredential": "two\nlines"}, "bearerCredential"),
        ({"bearerCredential": "t" * 5000}, "bearerCredential"),
        ({"localDev": True, "url": "http://127.0.0.1:9/hook", "_noLocalDev": True}, "localDev"),
        ({"signingSecret": "mine"}, "signingSecret"),
    ],
)
def test_bad_connector_input_is_400_naming_the_field_and_writes_nothing(
    admin: AdminApi, monkeypatch: pytest.MonkeyPatch, fields: dict[str, Any], named: str
) -> None:
    # Given a deployment that does not allow local-dev connectors (a deployed one)
    if fields.pop("_noLocalDev", False):
        monkeypatch.setenv("WEBHOOK_LOCAL_DEV", "false")
    body = {"name": "Riverside CAD", "url": PUBLIC_URL, "bearerCredential": BEARER, **fields}
    # When the connector is created with one bad field
    reply = admin.call("POST", "/connectors", body=body)
    # Then 400 ErrorInfo names it, and neither a connector nor a secret exists
    assert reply.status == 400, reply.body
    assert f"'{named}" in reply.body["info"]
    assert reply.body["reason"] in {"INVALID_INPUT", "INVALID_PARAMETER"}
    assert cad_items() == [] and secret_names() == []


def test_update_changes_what_is_given_and_a_new_profile_shows_a_new_secret(
    admin: AdminApi,
) -> None:
    # Given a connector for two event types
    created = new_connector(admin, eventTypes=["incident.accepted"])
    path = connector_path(created)
    # When its URL moves to another host (with the CAD's credential for it) and eventTypes
    # is set to null (every kind)
    changed = admin.call(
        "PATCH",
        "/connectors/{connectorId}",
        path=path,
        body={
            "url": "https://cad2.riverside.example/hook",
            "eventTypes": None,
            "bearerCredential": BEARER,
        },
    )
    # Then those change, the rest stays, and no secret is shown
    assert changed.status == 200, changed.body
    assert changed.body["connector"]["url"] == "https://cad2.riverside.example/hook"
    assert changed.body["connector"]["eventTypes"] is None
    assert changed.body["connector"]["name"] == "Riverside CAD"
    assert changed.body["signingSecret"] is None
    # When the profile changes, a new secret in the profile's own form is shown once
    profiled = admin.call(
        "PATCH", "/connectors/{connectorId}", path=path, body={"profile": "standard-webhooks"}
    )
    assert profiled.body["signingSecret"].startswith("whsec_")
    assert verifies(path["connectorId"], admin.tenant, profiled.body["signingSecret"])
    assert not verifies(path["connectorId"], admin.tenant, created.body["signingSecret"])


def test_update_refuses_bad_fields_and_other_tenants(
    admin: AdminApi, admin_env: tuple[int, int]
) -> None:
    created = new_connector(admin)
    path = connector_path(created)
    before = cad_items()
    for body, named in (
        ({"url": "https://192.168.1.1/x"}, "url"),
        ({"eventTypes": ["nope"]}, "eventTypes"),
        ({"status": "DISABLED"}, "status"),
        ({"name": ""}, "name"),
    ):
        reply = admin.call("PATCH", "/connectors/{connectorId}", path=path, body=body)
        assert reply.status == 400 and f"'{named}" in reply.body["info"], reply.body
    foreign = admin.call(
        "PATCH", "/connectors/{connectorId}", path=path, body={"name": "x"}, tenant=admin_env[1]
    )
    assert foreign.status == 404
    assert cad_items() == before


def test_disable_and_enable_change_the_status_within_the_tenant_only(
    admin: AdminApi, admin_env: tuple[int, int]
) -> None:
    created = new_connector(admin)
    path = connector_path(created)
    # A tenant cannot disable another tenant's connector
    foreign = admin.call(
        "POST", "/connectors/{connectorId}/disable", path=path, tenant=admin_env[1]
    )
    assert foreign.status == 404
    disabled = admin.call("POST", "/connectors/{connectorId}/disable", path=path)
    assert disabled.status == 200 and disabled.body["status"] == "DISABLED"
    # A disabled connector gets no test event (409), until it is enabled again
    refused = admin.call("POST", "/connectors/{connectorId}/test", path=path)
    assert refused.status == 409 and refused.body["reason"] == "CONFLICT"
    enabled = admin.call("POST", "/connectors/{connectorId}/enable", path=path)
    assert enabled.status == 200 and enabled.body["status"] == "ACTIVE"


def test_rotation_shows_the_new_secret_once_and_keeps_the_old_one_for_the_overlap(
    admin: AdminApi,
) -> None:
    created = new_connector(admin)
    path = connector_path(created)
    before = clock.utc_now()
    rotated = admin.call(
        "POST", "/connectors/{connectorId}/rotate-secret", path=path, body={"overlapHours": 2}
    )
    assert rotated.status == 200, rotated.body
    secret = rotated.body["signingSecret"]
    assert secret != created.body["signingSecret"]
    retire = rotated.body["previousSecretsRetireAt"]
    assert clock.parse_timestamp(retire) - before >= timedelta(hours=2)
    # During the overlap a delivery carries one digest, made with the new secret (a CAD
    # holding both, as the rotation procedure says, accepts it); the old secret alone no
    # longer verifies; the new one is never shown again
    assert verifies(path["connectorId"], admin.tenant, secret)
    assert not verifies(path["connectorId"], admin.tenant, created.body["signingSecret"])
    assert secret not in admin.call("GET", "/connectors/{connectorId}", path=path).raw


@pytest.mark.parametrize("overlap", [-1, 721, "soon"])
def test_rotation_refuses_a_bad_overlap(admin: AdminApi, overlap: Any) -> None:
    path = connector_path(new_connector(admin))
    before = (
        cad_items(),
        [
            vault.secrets_manager().get_secret_value(SecretId=n)["SecretString"]
            for n in secret_names()
        ],
    )
    reply = admin.call(
        "POST", "/connectors/{connectorId}/rotate-secret", path=path, body={"overlapHours": overlap}
    )
    assert reply.status == 400 and "'overlapHours'" in reply.body["info"]
    after = (
        cad_items(),
        [
            vault.secrets_manager().get_secret_value(SecretId=n)["SecretString"]
            for n in secret_names()
        ],
    )
    assert after == before


def test_rotation_is_rate_limited_per_tenant_with_retry_after(
    admin: AdminApi, admin_env: tuple[int, int]
) -> None:
    # Given a connector in each tenant
    path = connector_path(new_connector(admin))
    theirs = admin.call(
        "POST",
        "/connectors",
        body={"name": "Lakeshore", "url": PUBLIC_URL, "bearerCredential": BEARER},
        tenant=admin_env[1],
    )
    rotate = "/connectors/{connectorId}/rotate-secret"
    # A rotation of an unknown connector does not count
    assert admin.call("POST", rotate, path={"connectorId": "con-x"}, body={}).status == 404
    # When tenant 1 rotates up to the limit, and once more
    for _ in range(ROTATION_RATE.limit):
        assert admin.call("POST", rotate, path=path, body={}).status == 200
    secret_before = vault.read_secret(
        store.get_connector(admin.tenant, path["connectorId"]).secret_name, fresh=True
    )
    refused = admin.call("POST", rotate, path=path, body={})
    # Then the extra one is 429 with Retry-After, and the secret did not change
    assert refused.status == 429 and refused.body["reason"] == "RATE_LIMITED"
    assert 0 < int(refused.headers["Retry-After"]) <= ROTATION_RATE.window_seconds
    assert (
        vault.read_secret(
            store.get_connector(admin.tenant, path["connectorId"]).secret_name,
            fresh=True,
        )
        == secret_before
    )
    # And the other tenant's budget is its own
    assert (
        admin.call("POST", rotate, path=connector_path(theirs), body={}, tenant=admin_env[1]).status
        == 200
    )


def test_a_test_event_reaches_the_cad_signed_and_is_in_the_delivery_log(
    admin: AdminApi, cad: CadFunctions, receiver: Receiver, admin_env: tuple[int, int]
) -> None:
    # Given a connector to a real receiver
    created = new_connector(admin, url=receiver.url)
    path = connector_path(created)
    # When a test event is sent
    sent = admin.call("POST", "/connectors/{connectorId}/test", path=path)
    assert sent.status == 202, sent.body
    delivery_id = sent.body["deliveryId"]
    cad.run_dispatcher()
    # Then the CAD received it with our bearer and a valid signature
    (received,) = receiver.requests
    assert received.headers["Authorization"] == f"Bearer {BEARER}"
    assert received.headers["X-SVC-Delivery-Id"] == delivery_id
    verify_delivery(
        created.body["signingSecret"],
        received.headers,
        received.body,
        now=int(received.headers["X-SVC-Timestamp"]),
    )
    assert json.loads(received.body)["type"] == "connector.test"
    # And the log shows it delivered, with its attempt
    detail = admin.call("GET", "/deliveries/{deliveryId}", path={"deliveryId": delivery_id})
    assert detail.status == 200
    assert detail.body["status"] == "DELIVERED"
    (attempt,) = detail.body["attempts"]
    assert attempt["statusCode"] == 200 and attempt["responseExcerpt"] == "ok"
    # And another tenant can neither send a test through it nor read the delivery
    assert (
        admin.call("POST", "/connectors/{connectorId}/test", path=path, tenant=admin_env[1]).status
        == 404
    )
    assert (
        admin.call(
            "GET", "/deliveries/{deliveryId}", path={"deliveryId": delivery_id}, tenant=admin_env[1]
        ).status
        == 404
    )


# ---------------------------------------------------------------- the delivery log


def _emit(tenant: int, connector_id: str, kind: UpdateKind, seed: str) -> str:
    connector = store.get_connector(tenant, connector_id)
    data: Any
    if kind is UpdateKind.INCIDENT_UPDATED:
        data = IncidentUpdated(incident_id=1, number="2026-1", upload_id="u-1", line=1)
    else:
        from psap.webhooks.catalogue import ConnectorTest

        data = ConnectorTest(connector_id=connector_id, message="x")
    (delivery_id,) = emit_update(
        tenant, WebhookUpdate(kind, data), seed=seed, now=clock.utc_now(), only_connector=connector
    )
    return delivery_id


def test_the_delivery_log_pages_newest_first_with_a_cursor_and_filters(
    admin: AdminApi,
    cad: CadFunctions,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given 12 deliveries a second apart: every third an incident.updated; the first 6 fail
    created = new_connector(admin, url=receiver.url)
    connector_id = created.body["connector"]["connectorId"]
    start = clock.utc_now().replace(microsecond=0)
    ids = []
    for index in range(12):
        monkeypatch.setattr(clock, "utc_now", lambda i=index: start + timedelta(seconds=i))
        kind = UpdateKind.INCIDENT_UPDATED if index % 3 == 0 else UpdateKind.CONNECTOR_TEST
        ids.append(_emit(admin.tenant, connector_id, kind, f"seed-{index}"))
    monkeypatch.setattr(clock, "utc_now", lambda: start + timedelta(seconds=20))
    receiver.script = [Answer(500, body=b"busy")] * 6
    for delivery_id in ids:  # in creation order, one at a time
        cad.dispatch([{"tenantId": admin.tenant, "deliveryId": delivery_id, "attemptCount": 0}])
    drain("WebhookQueue")
    path = {"connectorId": connector_id}
    log = "/connectors/{connectorId}/deliveries"

    # When the log is read 5 at a time
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        query = {"limit": "5", **({"cursor": cursor} if cursor else {})}
        page = admin.call("GET", log, path=path, query=query)
        assert page.status == 200, page.body
        seen += [item["deliveryId"] for item in page.body["items"]]
        cursor = page.body["nextCursor"]
        pages += 1
        if cursor is None:
            break
    # Then every delivery comes once, newest first, in 3 pages
    assert seen == list(reversed(ids)) and pages == 3

    def listed(**query: str) -> list[str]:
        answer = admin.call("GET", log, path=path, query=query)
        assert answer.status == 200, answer.body
        return [item["deliveryId"] for item in answer.body["items"]]

    # And the filters select by status, event type and creation time
    assert listed(status="PENDING") == list(reversed(ids[:6]))
    assert listed(status="DELIVERED") == list(reversed(ids[6:]))
    assert listed(eventType="incident.updated") == [ids[9], ids[6], ids[3], ids[0]]
    since = clock.format_timestamp(start + timedelta(seconds=8))
    assert listed(since=since) == list(reversed(ids[8:]))
    assert listed(since=since.removesuffix("Z")) == list(reversed(ids[8:]))  # no offset: UTC
    # And filters combine with the cursor
    first = admin.call(
        "GET",
        log,
        path=path,
        query={"status": "PENDING", "limit": "2", "since": clock.format_timestamp(start)},
    )
    assert [item["deliveryId"] for item in first.body["items"]] == [ids[5], ids[4]]
    rest = admin.call(
        "GET",
        log,
        path=path,
        query={"status": "PENDING", "limit": "10", "cursor": first.body["nextCursor"]},
    )
    assert [item["deliveryId"] for item in rest.body["items"]] == list(reversed(ids[:4]))
    # And a failed delivery shows its attempt with the receiver's answer
    detail = admin.call("GET", "/deliveries/{deliveryId}", path={"deliveryId": ids[0]})
    (attempt,) = detail.body["attempts"]
    assert attempt["statusCode"] == 500 and attempt["responseExcerpt"] == "busy"
    assert attempt["errorClass"] is not None and attempt["latencyMs"] >= 0


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"status": "LOST"}, "status"),
        ({"eventType": "incident.exploded"}, "eventType"),
        ({"since": "yesterday"}, "since"),
        ({"limit": "0"}, "limit"),
        ({"limit": "101"}, "limit"),
        ({"cursor": "bm90LWEtY3Vyc29y"}, "cursor"),
        ({"cursor": "%%%"}, "cursor"),
    ],
)
def test_the_delivery_log_refuses_bad_filters_naming_them(
    admin: AdminApi, query: dict[str, str], named: str
) -> None:
    path = connector_path(new_connector(admin))
    reply = admin.call("GET", "/connectors/{connectorId}/deliveries", path=path, query=query)
    assert reply.status == 400, reply.body
    assert f"'{named}'" in reply.body["info"]


def test_the_delivery_log_of_another_tenant_is_404(
    admin: AdminApi, admin_env: tuple[int, int]
) -> None:
    path = connector_path(new_connector(admin))
    _emit(admin.tenant, path["connectorId"], UpdateKind.CONNECTOR_TEST, "s")
    reply = admin.call(
        "GET", "/connectors/{connectorId}/deliveries", path=path, tenant=admin_env[1]
    )
    assert reply.status == 404


def test_an_attempt_shows_at_most_1024_characters_of_the_answer(
    admin: AdminApi, cad: CadFunctions, receiver: Receiver
) -> None:
    created = new_connector(admin, url=receiver.url)
    receiver.default = Answer(200, body=b"x" * 3000)
    sent = admin.call("POST", "/connectors/{connectorId}/test", path=connector_path(created))
    cad.run_dispatcher()
    detail = admin.call(
        "GET", "/deliveries/{deliveryId}", path={"deliveryId": sent.body["deliveryId"]}
    )
    (attempt,) = detail.body["attempts"]
    assert attempt["responseExcerpt"] == "x" * 1024


def test_replay_sends_the_same_id_and_body_and_stays_in_the_tenant(
    admin: AdminApi, cad: CadFunctions, receiver: Receiver, admin_env: tuple[int, int]
) -> None:
    created = new_connector(admin, url=receiver.url)
    sent = admin.call("POST", "/connectors/{connectorId}/test", path=connector_path(created))
    cad.run_dispatcher()
    path = {"deliveryId": sent.body["deliveryId"]}
    # Another tenant cannot replay it
    foreign = admin.call("POST", "/deliveries/{deliveryId}/replay", path=path, tenant=admin_env[1])
    assert foreign.status == 404 and drain("WebhookQueue") == []
    unknown = admin.call(
        "POST", "/deliveries/{deliveryId}/replay", path={"deliveryId": "dlv-" + "a" * 32}
    )
    assert unknown.status == 404
    replayed = admin.call("POST", "/deliveries/{deliveryId}/replay", path=path)
    assert replayed.status == 202 and replayed.body["status"] == "PENDING"
    cad.run_dispatcher()
    first, again = receiver.requests
    assert again.headers["X-SVC-Delivery-Id"] == first.headers["X-SVC-Delivery-Id"]
    assert again.body == first.body


def test_recover_resends_dead_deliveries_since_a_time(
    admin: AdminApi, cad: CadFunctions, receiver: Receiver, admin_env: tuple[int, int]
) -> None:
    # Given a delivery stopped by 410 Gone (the connector is flagged)
    receiver.default = Answer(410)
    created = new_connector(admin, url=receiver.url)
    path = connector_path(created)
    sent = admin.call("POST", "/connectors/{connectorId}/test", path=path)
    cad.run_dispatcher()
    recover = "/connectors/{connectorId}/deliveries/recover"
    since = {"since": clock.format_timestamp(clock.utc_now() - timedelta(hours=1))}
    # Bad input and other tenants are refused without a write
    assert admin.call("POST", recover, path=path, body={"since": "soon"}).status == 400
    future = {"since": clock.format_timestamp(clock.utc_now() + timedelta(hours=1))}
    refused = admin.call("POST", recover, path=path, body=future)
    assert refused.status == 400 and "'since'" in refused.body["info"]
    assert admin.call("POST", recover, path=path, body=since, tenant=admin_env[1]).status == 404
    assert admin.call("POST", recover, path=path, body={**since, "all": True}).status == 400
    assert drain("WebhookQueue") == []
    # When the CAD is fixed, the connector enabled again, and the tenant recovers
    receiver.default = Answer(200)
    assert admin.call("POST", "/connectors/{connectorId}/enable", path=path).status == 200
    from psap.webhooks import dispatcher

    dispatcher.forget_connectors()
    recovered = admin.call("POST", recover, path=path, body=since)
    # Then the answer is the recovery job, started; its steps run after the request
    assert recovered.status == 202
    assert recovered.body["kind"] == "RECOVER"
    assert (recovered.body["state"], recovered.body["released"]) == ("RUNNING", 0)
    cad.run_job_steps()
    # And the delivery goes again with the same id, and the connector shows the job done
    cad.run_dispatcher()
    assert receiver.requests[-1].headers["X-SVC-Delivery-Id"] == sent.body["deliveryId"]
    shown = admin.call("GET", "/connectors/{connectorId}", path=path).body["deliveryJob"]
    assert shown["jobId"] == recovered.body["jobId"]
    assert (shown["state"], shown["released"]) == ("DONE", 1)


def test_recover_takes_any_year_in_utc_and_the_connector_still_shows(admin: AdminApi) -> None:
    # Given an active connector
    path = connector_path(new_connector(admin))
    recover = "/connectors/{connectorId}/deliveries/recover"
    # When a recovery starts from a time before year 1000, written with an odd offset
    recovered = admin.call(
        "POST", recover, path=path, body={"since": "0917-09-24T02:32:06.2+14:09"}
    )
    # Then the job shows it in the spec's format, four-digit year, and so does the connector
    assert recovered.status == 202
    assert recovered.body["since"] == "0917-09-23T12:23:06.200Z"
    shown = admin.call("GET", "/connectors/{connectorId}", path=path)
    assert shown.status == 200 and shown.body["deliveryJob"]["since"] == recovered.body["since"]
    # And a time that has no UTC instant within years 1-9999 is a 400 naming the field
    before_time = admin.call(
        "POST", recover, path=path, body={"since": "0001-01-01T00:00:00+14:00"}
    )
    assert before_time.status == 400 and "since" in before_time.body["info"]


# ---------------------------------------------------------------- credentials


def test_issue_shows_the_token_once_and_it_authorizes_with_the_granted_permissions(
    admin: AdminApi,
) -> None:
    reply = admin.call(
        "POST",
        "/credentials",
        body={
            "kind": "partner",
            "permissions": ["ADMIN"],
            "label": "CAD vendor sync",
            "expiresInDays": 30,
        },
    )
    assert reply.status == 201, reply.body
    token = reply.body["token"]
    assert token.startswith("psap_partner_")
    assert reply.body["authorizerCacheSeconds"] == AUTHORIZER_CACHE_SECONDS
    credential = reply.body["credential"]
    assert credential["permissions"] == ["ADMIN"] and credential["revoked"] is False
    # The stored lookup item is the token's hash: the authorizer finds it
    stored = dynamodb().get_item(
        TableName=auth_table(),
        Key={"pk": {"S": f"TOKEN#{token_hash(token)}"}, "sk": {"S": "TOKEN"}},
    )
    assert stored["Item"]["tenantId"]["N"] == str(admin.tenant)
    # The list never shows a token or its hash
    listed = admin.call("GET", "/credentials")
    assert listed.status == 200
    assert token not in listed.raw and token_hash(token) not in listed.raw
    assert credential["credentialId"] in [item["credentialId"] for item in listed.body["items"]]
    assert listed.body["authorizerCacheSeconds"] == AUTHORIZER_CACHE_SECONDS


def test_an_admin_cannot_grant_a_permission_it_does_not_hold(admin: AdminApi) -> None:
    before = auth_items()
    reply = admin.call(
        "POST",
        "/credentials",
        body={"kind": "partner", "permissions": ["ADMIN", "MANAGE_USERS"], "label": "x", **DAYS},
        permissions="ADMIN",
    )
    assert reply.status == 403 and "MANAGE_USERS" in reply.body["info"]
    assert auth_items() == before
    # Holding it, the same admin can grant it
    granted = admin.call(
        "POST",
        "/credentials",
        body={"kind": "partner", "permissions": ["MANAGE_USERS"], "label": "x", **DAYS},
        permissions="ADMIN,MANAGE_USERS",
    )
    assert granted.status == 201


def test_a_cad_key_is_issued_the_same_way_and_carries_no_permissions(admin: AdminApi) -> None:
    reply = admin.call("POST", "/credentials", body=CAD_KEY, permissions=CAD_MINTER)
    assert reply.status == 201
    assert reply.body["token"].startswith("psap_cad_")
    assert reply.body["credential"]["kind"] == "cad"
    refused = admin.call(
        "POST",
        "/credentials",
        body={**CAD_KEY, "permissions": ["ADMIN"]},
        permissions=CAD_MINTER,
    )
    assert refused.status == 400 and "'permissions'" in refused.body["info"]


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"kind": "root", "label": "x", **DAYS}, "kind"),
        (
            {"kind": "partner", "permissions": ["VIEW_EVERYTHING"], "label": "x", **DAYS},
            "permissions",
        ),
        ({"kind": "partner", "label": "", **DAYS}, "label"),
        ({"kind": "partner", "label": "l" * 201, **DAYS}, "label"),
        ({"kind": "partner", "label": "x", "token": "mine", **DAYS}, "token"),
        ({"kind": "partner", **DAYS}, "label"),
        # Every credential expires, within its kind's maximum
        ({"kind": "partner", "label": "x"}, "expiresInDays"),
        ({"kind": "partner", "label": "x", "expiresInDays": None}, "expiresInDays"),
        ({"kind": "partner", "label": "x", "expiresInDays": 0}, "expiresInDays"),
        ({"kind": "partner", "label": "x", "expiresInDays": 366}, "expiresInDays"),
        ({"kind": "partner", "label": "x", "expiresInDays": 100000}, "expiresInDays"),
        (
            {"kind": "partner", "permissions": ["ADMIN"], "label": "x", "expiresInDays": 91},
            "expiresInDays",
        ),
    ],
)
def test_bad_credential_input_is_400_naming_the_field_and_writes_nothing(
    admin: AdminApi, body: dict[str, Any], named: str
) -> None:
    before = auth_items()
    reply = admin.call("POST", "/credentials", body=body)
    assert reply.status == 400, reply.body
    assert f"'{named}" in reply.body["info"]
    assert auth_items() == before


def test_credential_issue_is_rate_limited_per_tenant(
    admin: AdminApi, admin_env: tuple[int, int]
) -> None:
    body = {"kind": "partner", "permissions": [], "label": "bulk", **DAYS}
    for _ in range(ISSUE_RATE.limit):
        assert admin.call("POST", "/credentials", body=body).status == 201
    count = len(auth_store.list_credentials(admin.tenant))
    refused = admin.call("POST", "/credentials", body=body)
    assert refused.status == 429 and int(refused.headers["Retry-After"]) > 0
    assert len(auth_store.list_credentials(admin.tenant)) == count
    assert admin.call("POST", "/credentials", body=body, tenant=admin_env[1]).status == 201


def test_the_credential_list_pages_with_a_cursor_within_the_tenant(
    admin: AdminApi, admin_env: tuple[int, int]
) -> None:
    issued = {
        admin.call(
            "POST", "/credentials", body={**CAD_KEY, "label": f"k{i}"}, permissions=CAD_MINTER
        ).body["credential"]["credentialId"]
        for i in range(5)
    }
    admin.call("POST", "/credentials", body=CAD_KEY, tenant=admin_env[1], permissions=CAD_MINTER)
    seen: list[str] = []
    cursor = None
    while True:
        query = {"limit": "2", **({"cursor": cursor} if cursor else {})}
        page = admin.call("GET", "/credentials", query=query)
        assert page.status == 200 and len(page.body["items"]) <= 2
        seen += [item["credentialId"] for item in page.body["items"]]
        cursor = page.body["nextCursor"]
        if cursor is None:
            break
    assert sorted(set(seen) - set(admin.callers.values())) == sorted(issued)
    for query, named in (({"limit": "0"}, "limit"), ({"cursor": "Zm9v"}, "cursor")):
        bad = admin.call("GET", "/credentials", query=query)
        assert bad.status == 400 and f"'{named}'" in bad.body["info"]


def test_revoke_states_the_cache_window_and_stays_in_the_tenant(
    admin: AdminApi, admin_env: tuple[int, int]
) -> None:
    issued = admin.call("POST", "/credentials", body=CAD_KEY, permissions=CAD_MINTER)
    path = {"credentialId": issued.body["credential"]["credentialId"]}
    foreign = admin.call(
        "POST", "/credentials/{credentialId}/revoke", path=path, tenant=admin_env[1]
    )
    assert foreign.status == 404
    assert admin.call(
        "POST", "/credentials/{credentialId}/revoke", path={"credentialId": "../x"}
    ).status in {400, 404}
    revoked = admin.call("POST", "/credentials/{credentialId}/revoke", path=path)
    assert revoked.status == 200
    assert revoked.body["credential"]["revoked"] is True
    assert revoked.body["authorizerCacheSeconds"] == AUTHORIZER_CACHE_SECONDS
    token = issued.body["token"]
    lookup = dynamodb().get_item(
        TableName=auth_table(),
        Key={"pk": {"S": f"TOKEN#{token_hash(token)}"}, "sk": {"S": "TOKEN"}},
    )
    assert lookup["Item"]["revoked"] == {"BOOL": True}
    assert token not in revoked.raw


# ---------------------------------------------------------------- secrets never leak


def test_no_secret_appears_after_the_response_that_creates_it(
    admin: AdminApi,
    cad: CadFunctions,
    receiver: Receiver,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Given our logger at DEBUG (its lines kept) and every other logger at INFO: botocore's
    # DEBUG wire dumps, never enabled in Lambda, would show what is sent to Secrets Manager
    caplog.set_level(logging.INFO)
    logger.setLevel("DEBUG")
    lines = io.StringIO()
    kept = logging.StreamHandler(lines)
    kept.setFormatter(logger.registered_formatter)
    logger.addHandler(kept)
    try:
        # When a center creates a connector, rotates, changes the bearer, issues credentials,
        # sends a test, and reads everything back
        created = new_connector(admin, url=receiver.url)
        path = connector_path(created)
        rotated = admin.call("POST", "/connectors/{connectorId}/rotate-secret", path=path, body={})
        new_bearer = "cad-issued-token-rotated-1a2b3c"
        admin.call(
            "PATCH", "/connectors/{connectorId}", path=path, body={"bearerCredential": new_bearer}
        )
        partner = admin.call(
            "POST",
            "/credentials",
            body={"kind": "partner", "permissions": ["ADMIN"], "label": "p", **DAYS},
        )
        cad_key = admin.call("POST", "/credentials", body=CAD_KEY, permissions=CAD_MINTER)
        created_answers = {created.raw, rotated.raw, partner.raw, cad_key.raw}
        sent = admin.call("POST", "/connectors/{connectorId}/test", path=path)
        cad.run_dispatcher()
        admin.call("GET", "/connectors")
        admin.call("GET", "/connectors/{connectorId}", path=path)
        admin.call("GET", "/connectors/{connectorId}/deliveries", path=path)
        admin.call("GET", "/deliveries/{deliveryId}", path={"deliveryId": sent.body["deliveryId"]})
        admin.call("GET", "/credentials")
        admin.call(
            "POST",
            "/credentials/{credentialId}/revoke",
            path={"credentialId": cad_key.body["credential"]["credentialId"]},
        )
        admin.call("POST", "/connectors/{connectorId}/disable", path=path)
    finally:
        logger._logger.removeHandler(kept)  # Powertools delegates addHandler only
        logger.setLevel("WARNING")
    secrets = {
        created.body["signingSecret"],
        rotated.body["signingSecret"],
        BEARER,
        new_bearer,
        partner.body["token"],
        cad_key.body["token"],
    }
    # Then no later response, no log line, no audit line and no table item holds one
    later = [answer for answer in admin.answers if answer not in created_answers]
    output = capsys.readouterr()
    audit_records = queued_messages()
    assert len(audit_records) >= len(admin.answers)
    places = {
        "responses": "\n".join(later),
        "stdout (logs)": output.out,
        "audit records": "\n".join(audit_records),
        "stderr": output.err,
        "log records": "\n".join(record.getMessage() for record in caplog.records),
        "function log": lines.getvalue(),
        "tables": json.dumps(cad_items() + auth_items(), default=str),
    }
    for secret in secrets:
        for place, text in places.items():
            assert secret not in text, f"a secret leaked into {place}"
    # And what the CAD received carried the new bearer
    assert receiver.requests[0].headers["Authorization"] == f"Bearer {new_bearer}"


def test_a_selective_filter_on_a_large_log_reads_a_bounded_number_of_items(
    admin: AdminApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a log of 60 deliveries, none FAILED, and a request bound of 25 examined
    monkeypatch.setattr(administration, "LOG_EXAMINE_MAX", 25)
    path = connector_path(new_connector(admin))
    for index in range(60):
        _emit(admin.tenant, path["connectorId"], UpdateKind.CONNECTOR_TEST, f"bulk-{index}")
    read: list[int] = []

    def count(parsed: dict[str, Any], **_: Any) -> None:
        read.append(len(parsed.get("Items", [])))
        read.extend(len(items) for items in parsed.get("Responses", {}).values())

    client = dynamodb()
    client.meta.events.register("after-call.dynamodb.Query", count)
    client.meta.events.register("after-call.dynamodb.BatchGetItem", count)
    # When a filter that matches nothing is read page by page
    pages, cursor = 0, None
    while True:
        query = {"status": "FAILED", "limit": "10", **({"cursor": cursor} if cursor else {})}
        before = sum(read)
        page = admin.call("GET", "/connectors/{connectorId}/deliveries", path=path, query=query)
        # Then each request reads at most the bound (pointers and deliveries) plus the connector
        assert sum(read) - before <= 2 * 25 + 1
        assert page.body["items"] == []
        pages += 1
        cursor = page.body["nextCursor"]
        if cursor is None:
            break
    # And the cursor walks the whole log in bounded steps
    assert pages == 3


def test_the_cli_and_the_api_apply_the_same_delivery_log_rules(
    admin: AdminApi, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a connector with one incident.updated delivery among tests
    connector_id = connector_path(new_connector(admin))["connectorId"]
    wanted = _emit(admin.tenant, connector_id, UpdateKind.INCIDENT_UPDATED, "u")
    _emit(admin.tenant, connector_id, UpdateKind.CONNECTOR_TEST, "t")
    tables = ["--auth-table", auth_table(), "--knowledge-table", knowledge_table()]
    listing = ["connector", "deliveries", "--tenant", str(admin.tenant)]
    listing += ["--connector", connector_id]
    capsys.readouterr()
    # When the operator's CLI filters the same log
    assert admin_cli([*tables, *listing, "--event-type", "incident.updated"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # Then it finds what the API finds
    api = admin.call(
        "GET",
        "/connectors/{connectorId}/deliveries",
        path={"connectorId": connector_id},
        query={"eventType": "incident.updated"},
    )
    assert [line.split("\t")[0] for line in lines] == [wanted]
    assert [item["deliveryId"] for item in api.body["items"]] == [wanted]
    # And refuses what the API refuses, with the same words
    assert admin_cli([*tables, *listing, "--cursor", "bm90LWEtY3Vyc29y"]) == 2
    refused = admin.call(
        "GET",
        "/connectors/{connectorId}/deliveries",
        path={"connectorId": connector_id},
        query={"cursor": "bm90LWEtY3Vyc29y"},
    )
    assert refused.body["info"] in capsys.readouterr().err


def test_an_oversized_admin_body_is_413_before_it_is_parsed(admin: AdminApi) -> None:
    body = {"name": "Riverside CAD", "url": PUBLIC_URL, "bearerCredential": "t" * 20_000}
    reply = admin.call("POST", "/connectors", body=body)
    assert reply.status == 413 and reply.body["reason"] == "PAYLOAD_TOO_LARGE"
    assert cad_items() == [] and secret_names() == []
