"""GET /api/v1/external/mcp/resources/incidents/{incidentId} through its Lambda handler, on
moto tables built from template.yaml."""

from datetime import UTC, datetime

import pytest

from psap.incidents.models import Incident
from psap.incidents.store import import_incident, upsert_incident
from psap.storage.ordering import SourceOrder
from tests.support.spec_examples import INCIDENT, SPEC_FIELDS
from tests.support.tenant_data import ItemsRead, TenantDataApi, strict_json

NOW = datetime(2026, 1, 5, 14, tzinfo=UTC)


pytestmark = pytest.mark.harness(api=TenantDataApi)


@pytest.mark.spec("resources-incident-fields")
def test_incident_shape_is_the_specs_field_for_field(api: TenantDataApi) -> None:
    # Given an incident with every field of the spec's Incident table set
    import_incident(api.tenant, Incident.model_validate(INCIDENT), NOW)
    # When it is read by id
    status, body = api.incident(INCIDENT["id"])
    # Then it reads back exactly, with the spec's names, nesting and types
    assert status == 200
    assert strict_json(body) == strict_json(INCIDENT)
    assert set(body) == SPEC_FIELDS["incident"]
    assert set(body["notes"][0]) == SPEC_FIELDS["note"]
    assert set(body["responders"][0]) == SPEC_FIELDS["responder"]
    assert set(body["event"]) == SPEC_FIELDS["reference"]


def test_an_incident_from_the_cad_reads_with_nulls_empty_arrays_and_its_service_id(
    api: TenantDataApi,
) -> None:
    result = upsert_incident(api.tenant, Incident(number="26-77"), SourceOrder(NOW), now=NOW)
    status, body = api.incident(result.id)
    assert status == 200
    assert set(body) == SPEC_FIELDS["incident"]
    assert (body["id"], body["number"], body["createdAt"]) == (
        result.id,
        "26-77",
        "2026-01-05T14:00:00.000Z",
    )
    assert (body["priority"], body["event"], body["notes"], body["responders"]) == (
        None,
        None,
        [],
        [],
    )


@pytest.mark.spec("errors-error-info")
def test_unknown_incident_is_404_error_info(api: TenantDataApi) -> None:
    assert api.incident(987654) == (
        404,
        {"info": "incident 987654 not found", "reason": "NOT_FOUND"},
    )


@pytest.mark.spec("service-tenant-from-credential")
def test_tenant_isolation_another_tenants_incident_is_404(api: TenantDataApi) -> None:
    import_incident(api.other_tenant, Incident.model_validate(INCIDENT), NOW)
    status, body = api.incident(INCIDENT["id"])
    assert (status, body["reason"]) == (404, "NOT_FOUND")
    assert api.incident(INCIDENT["id"], tenant=api.other_tenant)[0] == 200


@pytest.mark.spec("endpoints-path-ids-are-integers")
def test_an_incident_id_that_is_not_an_integer_is_400_naming_it(api: TenantDataApi) -> None:
    for incident_id in ("26-0100001", "1e3", "x"):
        status, body = api.incident(incident_id)
        assert status == 400, incident_id
        assert "'incidentId'" in body["info"]


@pytest.mark.spec("endpoints-permission-incident", "data-auth-rule-2")
def test_browse_or_manage_events_may_read_and_others_get_the_naming_403(
    api: TenantDataApi,
) -> None:
    import_incident(api.tenant, Incident.model_validate(INCIDENT), NOW)
    path = {"incidentId": str(INCIDENT["id"])}
    for permissions in ("BROWSE_EVENTS", "MANAGE_EVENTS"):
        assert api.call("incident_get", path=path, permissions=permissions)[0] == 200
    status, body = api.call("incident_get", path=path, permissions="MANAGE_USERS,VIEW_QA")
    assert status == 403
    assert body == {
        "info": "Access denied — Browse Events or Manage Events permission required",
        "reason": "FORBIDDEN",
    }


def test_one_get_item_per_request(api: TenantDataApi) -> None:
    import_incident(api.tenant, Incident.model_validate(INCIDENT), NOW)
    reads = ItemsRead()
    try:
        api.incident(INCIDENT["id"])
    finally:
        reads.close()
    assert reads.calls == ["GetItem"]
