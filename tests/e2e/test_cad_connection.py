"""The CAD connection end to end on the local stack, over real HTTP: a CAD posts an incident,
the sample CAD receiver (verifying every delivery with the receiver kit) gets a signed
`incident.accepted`, and the incident reads back through the data interface."""

import time
import uuid
from typing import Any

import pytest

from tests.support.stack import call_api

pytestmark = pytest.mark.e2e
WAIT_SECONDS = 30


def submission(tenant_id: int, number: str) -> dict[str, Any]:
    return {
        "specversion": "1.0",
        "id": f"e2e-{uuid.uuid4().hex}",
        "source": "urn:cad:e2e",
        "type": "incident.created",
        "time": "2026-11-23T02:32:15.123Z",
        "tenantId": tenant_id,
        "data": {
            "number": number,
            "incidentType": "Traffic Collision",
            "location": "Hwy 9 at Mile 12",
            "notes": [{"noteId": "n1", "note": "Two vehicles", "noteAt": "2026-11-23T02:31Z"}],
        },
    }


def received(stack: dict[str, Any], receipt_id: str) -> dict[str, Any]:
    """The sample receiver's verdict on the update answering `receipt_id` (waits for it)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        _, deliveries = call_api("GET", stack["cadReceiverUrl"] + "/received")
        for delivery in deliveries:
            event = delivery.get("event") or {}
            if (event.get("data") or {}).get("receiptId") == receipt_id:
                found: dict[str, Any] = delivery
                return found
        time.sleep(0.3)
    raise AssertionError(f"no delivery for {receipt_id} within {WAIT_SECONDS} s")


@pytest.mark.spec("cad-auth-rule-1", "events-delivery-headers", "webhook-profile-rule-3")
def test_a_cad_incident_comes_back_as_a_verified_webhook_and_reads_through_the_api(
    stack: dict[str, Any], stack_log: Any
) -> None:
    tenant = stack["tenants"][0]
    credentials = tenant["credentials"]
    number = f"E2E-{uuid.uuid4().hex[:8]}"
    # When the CAD posts an incident with its cad credential
    status, receipt = call_api(
        "POST",
        stack["baseUrl"] + "/cad/v1/incidents",
        credentials["cad"],
        body=submission(tenant["id"], number),
    )
    assert status == 202, receipt
    assert receipt["status"] == "ACCEPTED"
    # Then the sample CAD receiver accepts a verified incident.accepted for it
    delivery = received(stack, receipt["receiptId"])
    assert delivery["verdict"] == "ACCEPT"
    assert delivery["path"] == tenant["cadConnector"]["path"]
    event = delivery["event"]
    assert event["type"] == "incident.accepted"
    assert event["data"]["outcome"] == "CREATED"
    assert event["data"]["cadIncidentNumber"] == number
    assert f"ACCEPT delivery={delivery['deliveryId']}" in stack_log()
    # And the incident reads back through the data interface under the service's id
    incident_id = event["data"]["incidentId"]
    status, incident = call_api(
        "GET",
        f"{stack['baseUrl']}/api/v1/external/mcp/resources/incidents/{incident_id}",
        credentials["admin"],
    )
    assert status == 200
    assert incident["id"] == incident_id
    assert incident["number"] == number
    assert incident["notes"][0]["note"] == "Two vehicles"


@pytest.mark.spec("auth-credential-per-direction")
def test_a_partner_credential_cannot_submit_cad_incidents(stack: dict[str, Any]) -> None:
    tenant = stack["tenants"][0]
    status, body = call_api(
        "POST",
        stack["baseUrl"] + "/cad/v1/incidents",
        tenant["credentials"]["admin"],
        body=submission(tenant["id"], "E2E-X"),
    )
    assert status == 401
    assert body == {"info": "Authentication required", "reason": "UNAUTHENTICATED"}


@pytest.mark.spec("auth-credential-per-direction")
def test_a_cad_credential_cannot_read_the_data_interface(stack: dict[str, Any]) -> None:
    tenant = stack["tenants"][0]
    status, _ = call_api(
        "GET",
        f"{stack['baseUrl']}/api/v1/external/mcp/resources/incidents/1",
        tenant["credentials"]["cad"],
    )
    assert status == 401


@pytest.mark.spec("cad-auth-rule-2")
def test_the_envelope_naming_another_tenant_is_403(stack: dict[str, Any]) -> None:
    mine, theirs = stack["tenants"][0], stack["tenants"][1]
    status, body = call_api(
        "POST",
        stack["baseUrl"] + "/cad/v1/incidents",
        mine["credentials"]["cad"],
        body=submission(theirs["id"], "E2E-Y"),
    )
    assert status == 403
    assert body["reason"] == "FORBIDDEN"
