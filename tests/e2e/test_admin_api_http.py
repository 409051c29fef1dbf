"""The tenant admin API end to end on the local stack, over real HTTP: a 911 center's admin
sets up its CAD connection with the tenant admin API alone (the flow docs/admin-api.md shows
with curl): a CAD key, a connector to the CAD's endpoint, a test event the CAD verifies, an
incident the CAD posts with the new key coming back as a signed update, the delivery log, a
secret rotation and a revocation. The CAD's endpoint is a receiver this test runs on loopback."""

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from receiver_kit.psap_webhooks import verify_delivery
from tests.support.stack import CadEndpoint, call_api

pytestmark = pytest.mark.e2e
WAIT_SECONDS = 30
ADMIN = "/api/v1/external/admin"
CAD_BEARER = "riverside-cad-issued-credential-e2e"


@pytest.fixture
def cad_endpoint() -> Iterator[CadEndpoint]:
    endpoint = CadEndpoint()
    yield endpoint
    endpoint.close()


def test_a_911_center_sets_up_its_cad_connection_with_the_admin_api(
    stack: dict[str, Any], cad_endpoint: CadEndpoint
) -> None:
    base = stack["baseUrl"]
    tenant, other = stack["tenants"][0], stack["tenants"][1]
    admin = tenant["credentials"]["admin"]

    # 1. A CAD key for the CAD's submissions, shown once
    status, issued = call_api(
        "POST",
        base + ADMIN + "/credentials",
        admin,
        body={"kind": "cad", "label": "Riverside CAD", "expiresInDays": 365},
    )
    assert status == 201, issued
    cad_key = issued["token"]
    assert issued["authorizerCacheSeconds"] == 60

    # 2. The connector to the CAD's endpoint, with the credential the CAD issued to us
    status, created = call_api(
        "POST",
        base + ADMIN + "/connectors",
        admin,
        body={
            "name": "Riverside CAD",
            "url": cad_endpoint.url,
            "profile": "baseline",
            "bearerCredential": CAD_BEARER,
            "localDev": True,  # the local stack allows http on loopback; AWS does not
        },
    )
    assert status == 201, created
    secret = created["signingSecret"]
    connector_id = created["connector"]["connectorId"]

    # 3. A test event: the CAD verifies it with the secret it was given
    status, sent = call_api("POST", f"{base}{ADMIN}/connectors/{connector_id}/test", admin)
    assert status == 202, sent
    headers, body = cad_endpoint.wait_for(sent["deliveryId"])
    assert headers["Authorization"] == f"Bearer {CAD_BEARER}"
    assert verify_delivery(secret, headers, body).delivery_id == sent["deliveryId"]

    # 4. The CAD posts an incident with its new key; the update comes back signed
    number = f"ADMIN-E2E-{uuid.uuid4().hex[:8]}"
    status, receipt = call_api(
        "POST",
        base + "/cad/v1/incidents",
        cad_key,
        body={
            "specversion": "1.0",
            "id": f"e2e-{uuid.uuid4().hex}",
            "source": "urn:cad:riverside",
            "type": "incident.created",
            "time": "2026-11-23T02:32:15.123Z",
            "tenantId": tenant["id"],
            "data": {"number": number, "incidentType": "Structure Fire", "location": "1 Main"},
        },
    )
    assert status == 202, receipt
    headers, body = cad_endpoint.wait_for_type(
        "incident.accepted", "receiptId", receipt["receiptId"]
    )
    verify_delivery(secret, headers, body)

    # 5. The delivery log shows both, and one delivery with its attempt
    status, log = call_api("GET", f"{base}{ADMIN}/connectors/{connector_id}/deliveries", admin)
    assert status == 200, log
    assert {item["eventType"] for item in log["items"]} >= {"connector.test", "incident.accepted"}
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        status, detail = call_api("GET", f"{base}{ADMIN}/deliveries/{sent['deliveryId']}", admin)
        if detail.get("status") == "DELIVERED" or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert detail["status"] == "DELIVERED" and detail["attempts"][0]["statusCode"] == 200

    # 6. Another center's admin cannot see it; a non-admin credential is refused
    other_admin = other["credentials"]["admin"]
    status, _ = call_api("GET", f"{base}{ADMIN}/connectors/{connector_id}", other_admin)
    assert status == 404
    status, refused = call_api(
        "GET", base + ADMIN + "/connectors", tenant["credentials"]["readOnly"]
    )
    assert status == 403 and refused["info"] == "Access denied — Admin permission required"

    # 7. A rotation: the new secret is shown once; one digest per header, signed with the
    # new secret (or, while the dispatcher's connector cache is warm, the old one), so the CAD
    # accepts either during the overlap, as docs/webhooks.md tells vendors
    status, rotated = call_api(
        "POST", f"{base}{ADMIN}/connectors/{connector_id}/rotate-secret", admin, body={}
    )
    assert status == 200, rotated
    status, again = call_api("POST", f"{base}{ADMIN}/connectors/{connector_id}/test", admin)
    headers, body = cad_endpoint.wait_for(again["deliveryId"])
    verify_delivery([rotated["signingSecret"], secret], headers, body)

    # 8. The CAD key is revoked; the answer states the data interface's authorizer cache window
    status, revoked = call_api(
        "POST", f"{base}{ADMIN}/credentials/{issued['credential']['credentialId']}/revoke", admin
    )
    assert status == 200 and revoked["credential"]["revoked"] is True
    assert revoked["authorizerCacheSeconds"] == 60 and revoked["alsoRevoked"] == []
    status, listed = call_api("GET", base + ADMIN + "/credentials", admin)
    assert status == 200 and cad_key not in json.dumps(listed)
