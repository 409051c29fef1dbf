"""Card-level links (`actions.links`) through the handlers on moto: spec knowledge rules
6-10, by number."""

from typing import Any

import pytest

from tests.support.knowledge import (
    ALL_API,
    OTHER_TENANT,
    TENANT,
    KnowledgeApi,
    card_payload,
    stored_items,
    writes_of,
)

pytestmark = pytest.mark.harness(api=KnowledgeApi)


def target(
    api: KnowledgeApi, external_id: str = "ic-cpr", tenant: int = TENANT, **fields: Any
) -> dict[str, Any]:
    fields.setdefault("knowledgeType", "INSTRUCTION_CARD")
    payload = card_payload(name="CPR Instructions", external_id=external_id, **fields)
    return api.created(payload, tenant=tenant)


def linking(*targets: str, external_id: str = "gc-linking", **fields: Any) -> dict[str, Any]:
    links = [{"targetExternalId": target, "label": "See"} for target in targets]
    return card_payload(external_id=external_id, actions={"links": links}, **fields)


@pytest.mark.spec("knowledge-rule-7")
def test_rule7_a_link_names_its_target_by_external_id_and_stores_the_resolved_target(
    api: KnowledgeApi,
) -> None:
    cpr = target(api)
    entry = api.created(linking("ic-cpr"))
    (link,) = entry["actions"]["links"]
    assert link["referenceId"].startswith("lk-")
    assert link["targetExternalId"] == "ic-cpr"
    assert link["targetKnowledgeId"] == cpr["id"]
    assert link["targetDocumentName"] == "CPR Instructions"
    assert link["targetKnowledgeType"] == "INSTRUCTION_CARD"
    assert link["targetProvider"] == "NENA"


@pytest.mark.spec("knowledge-rule-7")
def test_rule7_the_target_is_looked_up_under_the_same_provider_only(api: KnowledgeApi) -> None:
    # Given the same externalId under two providers
    target(api, provider="APCO")
    nena = target(api)
    # When a NENA card links to it, then the NENA entry is the target
    (link,) = api.created(linking("ic-cpr"))["actions"]["links"]
    assert link["targetKnowledgeId"] == nena["id"]
    # And an APCO-only externalId does not resolve for a NENA card
    target(api, external_id="ic-apco-only", provider="APCO")
    status, body = api.create(linking("ic-apco-only", external_id="gc-other"))
    assert status == 400 and "'ic-apco-only'" in body["info"]


@pytest.mark.spec("knowledge-rule-8")
def test_rule8_the_target_need_not_be_published(api: KnowledgeApi) -> None:
    cpr = target(api)
    assert cpr["publishedVersion"] is None
    assert api.create(linking("ic-cpr"))[0] == 201


@pytest.mark.spec("knowledge-rule-8", "service-tenant-from-credential")
def test_rule8_the_target_must_be_loaded_in_the_same_tenant(api: KnowledgeApi) -> None:
    target(api, tenant=OTHER_TENANT)
    status, body = api.create(linking("ic-cpr"))
    assert status == 400 and "'ic-cpr'" in body["info"]


@pytest.mark.spec("knowledge-rule-8")
def test_rule8_a_card_cannot_link_to_itself_on_create_it_is_not_loaded_yet(
    api: KnowledgeApi,
) -> None:
    assert api.create(linking("gc-linking"))[0] == 400


@pytest.mark.spec("knowledge-rule-9", "errors-400-unresolved-link-target")
def test_rule9_an_unresolved_target_rejects_the_whole_create_nothing_written(
    api: KnowledgeApi,
) -> None:
    target(api)
    before = writes_of(stored_items())
    status, body = api.create(linking("ic-cpr", "ic-missing", "ic-gone"))
    assert status == 400
    assert body["reason"] == "INVALID_INPUT"
    assert "'ic-missing'" in body["info"] and "'ic-gone'" in body["info"]
    assert "'ic-cpr'" not in body["info"]
    assert writes_of(stored_items()) == before


@pytest.mark.spec("knowledge-rule-9", "errors-400-unresolved-link-target")
def test_rule9_an_unresolved_target_rejects_the_whole_append_nothing_written(
    api: KnowledgeApi,
) -> None:
    target(api)
    entry = api.created(linking("ic-cpr"))
    before = writes_of(stored_items())
    status, _ = api.append(
        entry["id"],
        {
            "apiControl": ALL_API,
            "questionList": [{"questionText": "changed"}],
            "actions": {"links": [{"targetExternalId": "ic-missing"}]},
        },
    )
    assert status == 400
    assert writes_of(stored_items()) == before
    assert api.read(entry["id"])["latestVersion"] == 1


@pytest.mark.spec("knowledge-rule-10")
def test_rule10_target_fields_read_back_as_stored_after_the_target_is_renamed(
    api: KnowledgeApi,
) -> None:
    cpr = target(api)
    entry = api.created(linking("ic-cpr"))
    api.appended(cpr["id"], {"apiControl": ALL_API, "name": "CPR (2027 wording)"})
    (link,) = api.read(entry["id"])["actions"]["links"]
    assert link["targetDocumentName"] == "CPR Instructions"


@pytest.mark.spec("knowledge-rule-10")
def test_rule10_target_fields_read_back_as_stored_after_the_target_is_deleted(
    api: KnowledgeApi,
) -> None:
    cpr = target(api)
    entry = api.created(linking("ic-cpr"))
    assert api.delete(cpr["id"])[0] == 204
    (link,) = api.read(entry["id"])["actions"]["links"]
    assert (link["targetKnowledgeId"], link["targetDocumentName"]) == (
        cpr["id"],
        "CPR Instructions",
    )


@pytest.mark.spec("knowledge-rule-7")
def test_rule7_resolved_on_every_write_a_deleted_target_no_longer_resolves(
    api: KnowledgeApi,
) -> None:
    cpr = target(api)
    entry = api.created(linking("ic-cpr"))
    api.delete(cpr["id"])
    payload = {"apiControl": ALL_API, "actions": {"links": [{"targetExternalId": "ic-cpr"}]}}
    assert api.append(entry["id"], payload)[0] == 400
    # A new entry that takes the externalId is what the next write resolves to
    successor = target(api)
    (link,) = api.appended(entry["id"], payload)["actions"]["links"]
    assert link["targetKnowledgeId"] == successor["id"] != cpr["id"]


@pytest.mark.spec("knowledge-rule-6")
def test_rule6_links_follow_the_links_flag_like_any_action_set(api: KnowledgeApi) -> None:
    # Given links owned by the service
    target(api)
    control = {**ALL_API, "links": False}
    entry = api.created(linking("ic-cpr", apiControl=control))
    # Then an append may not send them, and carries the stored ones forward unchanged
    status, body = api.append(entry["id"], {"apiControl": control, "actions": {"links": []}})
    assert status == 400 and "actions.links" in body["info"]
    appended = api.appended(entry["id"], {"apiControl": control, "actions": {"cadActions": []}})
    assert appended["actions"]["links"] == entry["actions"]["links"]


@pytest.mark.spec("knowledge-rule-13")
def test_link_reference_ids_follow_rules_13_and_14(api: KnowledgeApi) -> None:
    target(api)
    target(api, external_id="ic-aed")
    entry = api.created(linking("ic-cpr"))
    kept = entry["actions"]["links"][0]["referenceId"]
    links = [{"referenceId": kept, "targetExternalId": "ic-aed"}, {"targetExternalId": "ic-cpr"}]
    appended = api.appended(entry["id"], {"apiControl": ALL_API, "actions": {"links": links}})
    first, second = appended["actions"]["links"]
    assert (first["referenceId"], first["targetExternalId"]) == (kept, "ic-aed")
    assert second["referenceId"] != kept


@pytest.mark.spec("knowledge-rule-10")
def test_read_only_target_fields_sent_back_are_ignored(api: KnowledgeApi) -> None:
    cpr = target(api)
    entry = api.created(linking("ic-cpr"))
    echoed = dict(entry["actions"]["links"][0], targetDocumentName="Forged", targetKnowledgeId=999)
    appended = api.appended(entry["id"], {"apiControl": ALL_API, "actions": {"links": [echoed]}})
    (link,) = appended["actions"]["links"]
    assert (link["targetDocumentName"], link["targetKnowledgeId"]) == (
        "CPR Instructions",
        cpr["id"],
    )
