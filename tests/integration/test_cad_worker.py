"""The intake worker: stored submissions -> incident and event records (read back through the
data interface's own handlers) -> webhook updates to the tenant's connectors."""

import json
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from psap.cad import worker
from psap.errors import StoreUnavailable
from psap.incidents import store as incidents
from psap.webhooks import store as webhook_store
from psap.webhooks.connectors import ConnectorChanges, update_connector
from psap.webhooks.models import ConnectorStatus
from tests.support.cad import TENANT, CadFunctions, drain, eido_submission, flat_submission

UNUSED_URL = "http://127.0.0.1:9/never-called"


@pytest.fixture
def read_api(
    import_function: Callable[[str], ModuleType],
    load_event: Callable[[str], dict[str, Any]],
    lambda_context: Any,
) -> Callable[[str, int], tuple[int, Any]]:
    """GET incidents/{id} and events/{id} through the data interface's handlers."""
    handlers: dict[str, Any] = {}

    def get(kind: str, record_id: int) -> tuple[int, Any]:
        function = {"incident": "incident_get", "event": "event_get"}[kind]
        if function not in handlers:
            handlers[function] = import_function(function).handler
        event = load_event(function)
        name = f"{kind}Id"
        event["pathParameters"] = {name: str(record_id)}
        event["path"] = event["resource"].replace("{" + name + "}", str(record_id))
        event["requestContext"]["authorizer"].update(
            tenantId=str(TENANT), permissions="BROWSE_EVENTS"
        )
        answer = handlers[function](event, lambda_context)
        return answer["statusCode"], json.loads(answer["body"])

    return get


def process(cad: CadFunctions, submission: dict[str, Any]) -> None:
    status, _ = cad.submit(submission)
    assert status == 202
    result = cad.run_worker()
    assert result == {"batchItemFailures": []}


def updates() -> list[dict[str, Any]]:
    """The bodies of the deliveries the worker created, in queue order."""
    messages = drain("WebhookQueue")
    bodies = []
    for message in messages:
        delivery = webhook_store.get_delivery(TENANT, message["deliveryId"])
        bodies.append(json.loads(delivery.body))
    return bodies


def submit_with_the_store_down(cad: CadFunctions, monkeypatch: pytest.MonkeyPatch) -> None:
    """A submission queued for a tenant with a connector, the tenant data table down when
    the worker writes its incident."""
    add_connector()
    cad.submit(flat_submission())

    def store_down(*_: Any, **__: Any) -> Any:
        raise StoreUnavailable("tenant data table unavailable")

    monkeypatch.setattr(incidents, "upsert_incident", store_down)


def add_connector(event_types: list[str] | None = None) -> str:
    from tests.support.webhooks import add_connector as create

    return create(UNUSED_URL, event_types=event_types).connector.connector_id


def test_flat_form_maps_field_for_field_and_is_served_by_the_data_interface(
    cad: CadFunctions, read_api: Any
) -> None:
    add_connector()
    process(cad, flat_submission(event={"number": "EV-1", "eventType": "911 call"}))
    (update,) = updates()
    assert update["type"] == "incident.accepted"
    incident_id = update["data"]["incidentId"]
    status, incident = read_api("incident", incident_id)
    assert status == 200
    assert incident["number"] == "2026-000123"
    assert incident["incidentType"] == "Structure Fire"
    assert incident["initialIncidentType"] == "Structure Fire"  # the first submission's
    assert incident["latitude"] == "33.9533"  # numbers become the spec's strings
    assert incident["callReceivedTime"] == "2026-11-23T02:30:01.000Z"
    assert incident["notes"][0]["note"] == "Smoke from the roof"
    assert incident["responders"][0]["unitName"] == "E12"
    assert incident["event"] == {"id": update["data"]["eventId"], "number": "EV-1"}
    status, event = read_api("event", update["data"]["eventId"])
    assert status == 200
    assert event["incident"] == {"id": incident_id, "number": "2026-000123"}
    assert event["eventType"] == "911 call"


def test_eido_form_maps_its_components(cad: CadFunctions, read_api: Any) -> None:
    add_connector()
    process(cad, eido_submission())
    (update,) = updates()
    status, incident = read_api("incident", update["data"]["incidentId"])
    assert status == 200
    assert incident["number"] == "EIDO-77"
    assert incident["incidentType"] == "Water Rescue"
    assert incident["priority"] == "2"
    assert incident["location"] == "Pier 4, Lakeshore Dr"  # the referenced location
    assert (incident["latitude"], incident["longitude"]) == ("43.0731", "-89.4012")
    assert incident["disposition"] == "Patient transported"
    assert incident["agency"] == "Lakeshore Fire"
    assert incident["agencyType"] == "Fire"
    assert incident["callerNumber"] == "+16085550199"
    assert incident["callPickupTime"] == "2026-11-23T02:34:35.000Z"
    assert incident["incidentDate"] == "2026-11-23T02:35:00.000Z"
    assert incident["notes"] == [
        {
            "noteId": "note-1",
            "note": "Caller sees a person in the water",
            "noteBy": "agent-7",
            "noteAt": "2026-11-23T02:36:00.000Z",
        }
    ]
    assert incident["responders"][0]["unitName"] == "Boat 3"
    assert incident["responders"][0]["arrivedAt"] == "2026-11-23T02:45:00.000Z"
    assert incident["event"]["number"] == "CALL-9001"
    status, event = read_api("event", incident["event"]["id"])
    assert event["eventDate"] == "2026-11-23T02:34:30.000Z"


def test_accepted_update_carries_the_service_ids_and_the_cads_identifiers(
    cad: CadFunctions,
) -> None:
    add_connector()
    _, receipt = cad.submit(flat_submission())
    cad.run_worker()
    (update,) = updates()
    assert update["specversion"] == "1.0"
    assert update["dataschema"] == "urn:psap:webhooks:v1:incident.accepted"
    assert update["subject"] == "2026-000123"
    assert update["tenantid"] == TENANT
    data = update["data"]
    assert data["receiptId"] == receipt["receiptId"]
    assert (data["cadEventId"], data["cadSource"]) == ("A-1", "urn:cad:riverside")
    assert data["cadEventType"] == "incident.created"
    assert data["cadIncidentNumber"] == "2026-000123"
    assert data["outcome"] == "CREATED"
    assert isinstance(data["incidentId"], int)


def test_a_later_update_with_the_same_number_updates_the_same_incident(
    cad: CadFunctions, read_api: Any
) -> None:
    add_connector()
    process(cad, flat_submission())
    process(
        cad,
        flat_submission(
            event_id="A-2",
            event_type="incident.updated",
            time="2026-11-23T02:40:00Z",
            incidentType="Commercial Fire",
            disposition="Knocked down",
        ),
    )
    created, updated = updates()
    assert created["data"]["incidentId"] == updated["data"]["incidentId"]
    assert updated["data"]["outcome"] == "UPDATED"
    _, incident = read_api("incident", updated["data"]["incidentId"])
    assert incident["incidentType"] == "Commercial Fire"
    assert incident["initialIncidentType"] == "Structure Fire"  # kept from the first
    assert incident["disposition"] == "Knocked down"


def test_an_out_of_order_update_never_overwrites_newer_data(
    cad: CadFunctions, read_api: Any
) -> None:
    add_connector()
    # Given the newer update arrived first
    process(
        cad,
        flat_submission(
            event_id="A-3",
            event_type="incident.updated",
            time="2026-11-23T03:00:00Z",
            incidentType="Newest",
        ),
    )
    # When an older one arrives afterwards
    process(
        cad,
        flat_submission(event_id="A-2", time="2026-11-23T02:50:00Z", incidentType="Older"),
    )
    newest, older = updates()
    # Then the incident keeps the newer data, and the CAD is told the older one was stale
    assert older["data"]["outcome"] == "STALE_IGNORED"
    assert older["data"]["incidentId"] == newest["data"]["incidentId"]
    _, incident = read_api("incident", newest["data"]["incidentId"])
    assert incident["incidentType"] == "Newest"


def test_sequence_breaks_ties_between_updates_with_the_same_time(
    cad: CadFunctions, read_api: Any
) -> None:
    add_connector()
    same_time = "2026-11-23T03:00:00Z"
    second = flat_submission(event_id="S-2", time=same_time, incidentType="Second")
    second["sequence"] = "2"
    first = flat_submission(event_id="S-1", time=same_time, incidentType="First")
    first["sequence"] = "1"
    process(cad, second)
    process(cad, first)
    applied, stale = updates()
    assert stale["data"]["outcome"] == "STALE_IGNORED"
    _, incident = read_api("incident", applied["data"]["incidentId"])
    assert incident["incidentType"] == "Second"


def test_incident_closed_sets_closed_at_from_the_event_time(
    cad: CadFunctions, read_api: Any
) -> None:
    add_connector()
    process(cad, flat_submission())
    process(
        cad,
        flat_submission(event_id="A-9", event_type="incident.closed", time="2026-11-23T04:00:00Z"),
    )
    _, closed = updates()
    assert closed["data"]["outcome"] == "CLOSED"
    _, incident = read_api("incident", closed["data"]["incidentId"])
    assert incident["closedAt"] == "2026-11-23T04:00:00.000Z"


def test_updates_go_to_every_active_connector_that_wants_them(cad: CadFunctions) -> None:
    wants_all = add_connector()
    wants_accepted = add_connector(["incident.accepted"])
    add_connector(["incident.rejected"])
    disabled = add_connector()
    update_connector(
        TENANT, disabled, ConnectorChanges(status=ConnectorStatus.DISABLED), now=_now()
    )
    process(cad, flat_submission())
    messages = drain("WebhookQueue")
    targets = {webhook_store.get_delivery(TENANT, m["deliveryId"]).connector_id for m in messages}
    assert targets == {wants_all, wants_accepted}
    bodies = {webhook_store.get_delivery(TENANT, m["deliveryId"]).body for m in messages}
    assert len(bodies) == 1  # one event, the same bytes for every connector


def test_running_the_worker_twice_never_duplicates_a_delivery(cad: CadFunctions) -> None:
    add_connector()
    cad.submit(flat_submission())
    (message,) = drain("CadIntakeQueue")
    body = json.dumps(message)
    for _ in range(2):
        event = cad.load_event("cad_worker")
        event["Records"][0]["body"] = body
        assert cad.worker(event, cad.context) == {"batchItemFailures": []}
    messages = drain("WebhookQueue")
    assert len({m["deliveryId"] for m in messages}) == 1
    update = json.loads(webhook_store.get_delivery(TENANT, messages[0]["deliveryId"]).body)
    assert update["data"]["outcome"] == "CREATED"  # the stored answer, not "stale"


def test_a_submission_the_store_refuses_is_answered_with_incident_rejected(
    cad: CadFunctions,
) -> None:
    add_connector()
    # A number of blanks passes the envelope but names no incident.
    process(cad, flat_submission(number="   "))
    (update,) = updates()
    assert update["type"] == "incident.rejected"
    assert update["data"]["reasons"][0]["code"] == "NOT_APPLICABLE"
    assert update["data"]["receiptId"].startswith("rcpt-")


def test_a_failing_last_try_tells_the_cad_and_leaves_the_message_for_the_dlq(
    cad: CadFunctions, monkeypatch: pytest.MonkeyPatch
) -> None:
    submit_with_the_store_down(cad, monkeypatch)
    result = cad.run_worker(receives=worker.max_receives())
    assert len(result["batchItemFailures"]) == 1  # stays for the DLQ
    (update,) = updates()
    assert update["type"] == "incident.rejected"
    assert update["data"]["reasons"][0]["code"] == "PROCESSING_FAILED"


def test_an_earlier_failing_try_is_retried_silently(
    cad: CadFunctions, monkeypatch: pytest.MonkeyPatch
) -> None:
    submit_with_the_store_down(cad, monkeypatch)
    result = cad.run_worker(receives=1)
    assert len(result["batchItemFailures"]) == 1
    assert drain("WebhookQueue") == []


@pytest.mark.spec("service-tenant-from-credential")
def test_incidents_of_one_tenant_are_not_visible_to_another(cad: CadFunctions) -> None:
    process(cad, flat_submission())
    assert incidents.find_incident_id(TENANT, "2026-000123") is not None
    assert incidents.find_incident_id(TENANT + 1, "2026-000123") is None


def _now() -> Any:
    from psap import clock

    return clock.utc_now()
