"""Trust in the tenant admin API over real HTTP on the local stack, whose gateway caches the
authorizer's answer per token as API Gateway does (ReauthorizeEvery 60): a revoked Admin
token is refused by its very next admin call, a revocation cascades to what the revoked
credential issued, a connector's bearer credential does not follow its URL to another
origin, and a connector cannot point at an unusual port."""

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.test_admin_api_http import ADMIN
from tests.support.stack import CadEndpoint, call_api

pytestmark = pytest.mark.e2e
DISPATCHER_CONNECTOR_CACHE_SECONDS = 2  # psap.webhooks.dispatcher
UNAUTHENTICATED = {"info": "Authentication required", "reason": "UNAUTHENTICATED"}


@pytest.fixture
def two_cad_endpoints() -> Iterator[tuple[CadEndpoint, CadEndpoint]]:
    endpoints = (CadEndpoint(), CadEndpoint())
    yield endpoints
    for endpoint in endpoints:
        endpoint.close()


def issue_admin(base: str, token: str, label: str) -> dict[str, Any]:
    body = {"kind": "partner", "permissions": ["ADMIN"], "label": label, "expiresInDays": 7}
    status, issued = call_api("POST", base + ADMIN + "/credentials", token, body=body)
    assert status == 201, issued
    return dict(issued)


def revoke(base: str, token: str, credential_id: str) -> dict[str, Any]:
    status, answer = call_api("POST", f"{base}{ADMIN}/credentials/{credential_id}/revoke", token)
    assert status == 200, answer
    return dict(answer)


def test_a_revoked_admin_token_is_refused_by_its_very_next_admin_call(
    stack: dict[str, Any],
) -> None:
    base, admin = stack["baseUrl"], stack["tenants"][0]["credentials"]["admin"]
    # Given an Admin token the gateway has admitted (its authorizer answer is now cached)
    issued = issue_admin(base, admin, "e2e revoke at once")
    token = issued["token"]
    assert call_api("GET", base + ADMIN + "/credentials", token)[0] == 200
    # When it is revoked
    revoke(base, admin, issued["credential"]["credentialId"])
    # Then its next admin call is refused, before its cached policy runs out
    status, body = call_api("GET", base + ADMIN + "/credentials", token)
    assert (status, body) == (401, UNAUTHENTICATED)
    status, body = call_api(
        "POST",
        base + ADMIN + "/credentials",
        token,
        body={"kind": "partner", "permissions": ["ADMIN"], "label": "x", "expiresInDays": 7},
    )
    assert (status, body) == (401, UNAUTHENTICATED)


def test_revoking_a_credential_revokes_what_it_issued(stack: dict[str, Any]) -> None:
    base, admin = stack["baseUrl"], stack["tenants"][0]["credentials"]["admin"]
    # Given A issued by the demo admin, and B issued by A, both admitted by the gateway
    a = issue_admin(base, admin, "e2e cascade A")
    b = issue_admin(base, a["token"], "e2e cascade B")
    assert b["credential"]["issuedBy"] == a["credential"]["credentialId"]
    assert call_api("GET", base + ADMIN + "/connectors", b["token"])[0] == 200
    # When A is revoked
    answer = revoke(base, admin, a["credential"]["credentialId"])
    # Then the answer lists B, and B's next admin call is refused
    assert [item["credentialId"] for item in answer["alsoRevoked"]] == [
        b["credential"]["credentialId"]
    ]
    status, body = call_api("GET", base + ADMIN + "/connectors", b["token"])
    assert (status, body) == (401, UNAUTHENTICATED)


def test_a_connector_url_moved_to_another_origin_needs_the_bearer_credential_again(
    stack: dict[str, Any], two_cad_endpoints: tuple[CadEndpoint, CadEndpoint]
) -> None:
    base, admin = stack["baseUrl"], stack["tenants"][0]["credentials"]["admin"]
    first, second = two_cad_endpoints
    status, created = call_api(
        "POST",
        base + ADMIN + "/connectors",
        admin,
        body={
            "name": "e2e origin rule",
            "url": first.url,
            "bearerCredential": "credential-for-the-first-host",
            "localDev": True,
        },
    )
    assert status == 201, created
    connector = f"{base}{ADMIN}/connectors/{created['connector']['connectorId']}"
    # When only the URL moves to another port: refused, naming the credential
    status, refused = call_api("PATCH", connector, admin, body={"url": second.url})
    assert status == 400 and "'bearerCredential'" in refused["info"], refused
    status, sent = call_api("POST", connector + "/test", admin)
    headers, _ = first.wait_for(sent["deliveryId"])
    assert headers["Authorization"] == "Bearer credential-for-the-first-host"
    # With the second host's own credential, the move is accepted and only it is sent there
    status, moved = call_api(
        "PATCH",
        connector,
        admin,
        body={"url": second.url, "bearerCredential": "credential-for-the-second-host"},
    )
    assert status == 200, moved
    # (the dispatcher keeps a connector 2 s: an update emitted sooner may still go to the
    # first server, with the first server's credential)
    time.sleep(DISPATCHER_CONNECTOR_CACHE_SECONDS + 1)
    status, sent = call_api("POST", connector + "/test", admin)
    headers, _ = second.wait_for(sent["deliveryId"])
    assert headers["Authorization"] == "Bearer credential-for-the-second-host"
    # And neither server ever received the other's credential (the dispatcher's cached
    # connector may still name the first server for a moment: that attempt is held back)
    assert all(
        "first-host" not in request_headers.get("Authorization", "")
        for request_headers, _ in second.requests
    )
    assert all(
        "second-host" not in request_headers.get("Authorization", "")
        for request_headers, _ in first.requests
    )


@pytest.mark.parametrize("url", ["https://1.1.1.1:22/hook", "https://8.8.8.8:6379/"])
def test_a_connector_port_outside_the_allowlist_is_refused(stack: dict[str, Any], url: str) -> None:
    base, admin = stack["baseUrl"], stack["tenants"][0]["credentials"]["admin"]
    body = {"name": "e2e port rule", "url": url, "bearerCredential": "x"}
    status, refused = call_api("POST", base + ADMIN + "/connectors", admin, body=body)
    assert status == 400, refused
    assert refused["info"].startswith("Invalid field 'url'") and "port" in refused["info"]
