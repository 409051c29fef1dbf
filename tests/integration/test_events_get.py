"""GET /api/v1/external/mcp/resources/events/{eventId} through its Lambda handler, on moto
tables built from template.yaml."""

from datetime import UTC, datetime

import pytest

from psap.events.models import Event
from psap.events.store import import_event, upsert_event
from psap.incidents.models import Incident
from psap.incidents.store import upsert_incident
from psap.storage.ordering import SourceOrder
from tests.support.spec_examples import EVENT, SPEC_FIELDS
from tests.support.tenant_data import ItemsRead, TenantDataApi, strict_json

NOW = datetime(2026, 1, 5, 14, tzinfo=UTC)


pytestmark = pytest.mark.harness(api=TenantDataApi)


@pytest.mark.spec("resources-event-fields")
def test_event_shape_is_the_specs_field_for_field(api: TenantDataApi) -> None:
    import_event(api.tenant, Event.model_validate(EVENT), NOW)
    status, body = api.event(EVENT["id"])
    assert status == 200
    assert strict_json(body) == strict_json(EVENT)
    assert set(body) == SPEC_FIELDS["event"]
    assert set(body["personnel"][0]) == SPEC_FIELDS["personnel"]
    assert set(body["incident"]) == SPEC_FIELDS["reference"]
    assert set(body["media"][0]) == SPEC_FIELDS["media"]


def test_an_event_linked_by_the_cad_names_its_incident(api: TenantDataApi) -> None:
    incident = upsert_incident(api.tenant, Incident(number="26-5"), SourceOrder(NOW), now=NOW)
    event = upsert_event(
        api.tenant, Event(number="EV-5"), SourceOrder(NOW), now=NOW, incident_id=incident.id
    )
    _, body = api.event(event.id)
    assert body["incident"] == {"id": incident.id, "number": "26-5"}
    assert (body["personnel"], body["media"], body["summary"]) == ([], [], None)
    _, incident_body = api.incident(incident.id)
    assert incident_body["event"] == {"id": event.id, "number": "EV-5"}


@pytest.mark.spec("errors-error-info")
def test_unknown_event_is_404_error_info(api: TenantDataApi) -> None:
    assert api.event(5555) == (404, {"info": "event 5555 not found", "reason": "NOT_FOUND"})


@pytest.mark.spec("service-tenant-from-credential")
def test_tenant_isolation_another_tenants_event_is_404(api: TenantDataApi) -> None:
    import_event(api.other_tenant, Event.model_validate(EVENT), NOW)
    assert api.event(EVENT["id"])[0] == 404
    assert api.event(EVENT["id"], tenant=api.other_tenant)[0] == 200


@pytest.mark.spec("endpoints-path-ids-are-integers")
def test_an_event_id_that_is_not_an_integer_is_400_naming_it(api: TenantDataApi) -> None:
    status, body = api.event("EV-2026-0100001")
    assert status == 400
    assert "'eventId'" in body["info"]


@pytest.mark.spec("endpoints-permission-event", "data-auth-rule-2")
def test_browse_or_manage_events_may_read_and_others_get_the_naming_403(
    api: TenantDataApi,
) -> None:
    import_event(api.tenant, Event.model_validate(EVENT), NOW)
    path = {"eventId": str(EVENT["id"])}
    for permissions in ("BROWSE_EVENTS", "MANAGE_EVENTS"):
        assert api.call("event_get", path=path, permissions=permissions)[0] == 200
    status, body = api.call("event_get", path=path, permissions="VIEW_KNOWLEDGE")
    assert status == 403
    assert body == {
        "info": "Access denied — Browse Events or Manage Events permission required",
        "reason": "FORBIDDEN",
    }


def test_one_query_per_request_reads_the_event_and_its_uploaded_media(
    api: TenantDataApi,
) -> None:
    import_event(api.tenant, Event.model_validate(EVENT), NOW)
    reads = ItemsRead()
    try:
        api.event(EVENT["id"])
    finally:
        reads.close()
    # The record and its media links share the event's partition (psap.events.store).
    assert reads.calls == ["Query"]
