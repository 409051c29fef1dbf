"""POST /api/v1/external/knowledge/{knowledgeId}/versions through its handler on moto.
Names follow the spec's knowledge rules 1-4 and 11-14 (by number)."""

from typing import Any

import pytest

from psap.clock import utc_now
from psap.knowledge.models import KnowledgeSource, KnowledgeType
from psap.knowledge.store import NewEntry, create_entry
from tests.support.knowledge import (
    ALL_API,
    OTHER_TENANT,
    TENANT,
    VIEW,
    KnowledgeApi,
    card_payload,
    stored_items,
    writes_of,
)

pytestmark = pytest.mark.harness(api=KnowledgeApi)


def flags(**changes: bool) -> dict[str, bool]:
    return {**ALL_API, **changes}


@pytest.mark.spec("versioning-rule-2")
def test_append_answers_201_with_the_full_entry_at_the_new_version(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    appended = api.appended(
        entry["id"], {"apiControl": flags(), "questionList": [{"questionText": "New?"}]}
    )
    assert (appended["version"], appended["latestVersion"]) == (2, 2)
    assert appended["versionId"] != entry["versionId"]
    assert appended == api.read(entry["id"])
    assert appended["updatedAt"] >= entry["updatedAt"]
    assert appended["createdAt"] == entry["createdAt"]


def test_append_through_the_sample_event(api: KnowledgeApi) -> None:
    # The sample event appends with a link to ic-cpr-adult under NENA-Standards
    entry = api.created(
        card_payload(
            name="CPR",
            external_id="ic-cpr-adult",
            provider="NENA-Standards",
            apiControl=flags(),
        )
    )
    # (the sample event names a demo entry; here, this one)
    status, body = api.call("knowledge_append", path={"knowledgeId": str(entry["id"])})
    assert (status, body["version"]) == (201, 2), body


@pytest.mark.spec("knowledge-rule-1")
def test_rule1_api_control_declares_the_owner_of_each_section(api: KnowledgeApi) -> None:
    entry = api.created(card_payload(apiControl=flags(media=False, links=False)))
    assert entry["apiControl"] == flags(media=False, links=False)
    assert api.read(entry["id"])["apiControl"] == flags(media=False, links=False)


@pytest.mark.spec("knowledge-rule-2")
def test_rule2_api_owned_sections_are_overwritten_whole_on_append(api: KnowledgeApi) -> None:
    # Given version 1 with content in every section
    entry = api.created(card_payload())
    # When an append sends one question and nothing else
    appended = api.appended(
        entry["id"], {"apiControl": flags(), "questionList": [{"questionText": "Only"}]}
    )
    # Then each API-owned section is what the append sent, and nothing of version 1 is left
    assert [question["questionText"] for question in appended["questionList"]] == ["Only"]
    assert appended["spokenInstructions"] == []
    assert appended["actions"] == {
        "cadActions": [],
        "smsMessages": [],
        "dispatchTriggers": [],
        "links": [],
    }
    assert appended["media"] == []


@pytest.mark.spec("knowledge-rule-3")
def test_rule3_service_owned_sections_are_carried_forward_automatically(api: KnowledgeApi) -> None:
    # Given spoken instructions and CAD actions owned by the service, seeded on create
    control = flags(spokenInstructions=False, cadActions=False)
    entry = api.created(card_payload(apiControl=control))
    # When two appends leave them out
    api.appended(entry["id"], {"apiControl": control, "questionList": []})
    third = api.appended(entry["id"], {"apiControl": control})
    # Then version 3 still has them, ids and all
    assert third["spokenInstructions"] == entry["spokenInstructions"]
    assert third["actions"]["cadActions"] == entry["actions"]["cadActions"]
    assert third["actions"]["smsMessages"] == []


@pytest.mark.parametrize(
    ("flag", "payload", "named"),
    [
        ("spokenInstructions", {"spokenInstructions": []}, "spokenInstructions"),
        ("questionList", {"questionList": [{"questionText": "x"}]}, "questionList"),
        ("links", {"actions": {"links": []}}, "actions.links"),
        ("media", {"media": [{"mediaType": "IMAGE", "url": "x"}]}, "media"),
    ],
)
@pytest.mark.spec("knowledge-rule-3", "errors-error-info")
def test_rule3_an_append_that_sends_a_service_owned_section_is_400_naming_it(
    api: KnowledgeApi, flag: str, payload: dict[str, Any], named: str
) -> None:
    control = flags(**{flag: False})
    entry = api.created(card_payload(apiControl=control))
    before = writes_of(stored_items())
    status, body = api.append(entry["id"], {"apiControl": control, **payload})
    assert status == 400
    assert named in body["info"] and "owned by the service" in body["info"]
    assert writes_of(stored_items()) == before


@pytest.mark.spec("knowledge-rule-4")
def test_rule4_an_append_whose_api_control_differs_is_400(api: KnowledgeApi) -> None:
    entry = api.created(card_payload(apiControl=flags(media=False)))
    before = writes_of(stored_items())
    status, body = api.append(entry["id"], {"apiControl": flags()})
    assert status == 400
    assert "apiControl is immutable" in body["info"] and "media" in body["info"]
    assert writes_of(stored_items()) == before
    assert api.read(entry["id"])["apiControl"] == flags(media=False)


@pytest.mark.spec("knowledge-rule-4")
def test_rule4_flags_left_out_mean_true_so_an_equal_control_may_omit_them(
    api: KnowledgeApi,
) -> None:
    entry = api.created(card_payload(apiControl={"media": False}))
    assert api.append(entry["id"], {"apiControl": {"media": False}})[0] == 201


@pytest.mark.spec("knowledge-rule-1")
def test_rule1_an_append_without_api_control_is_400(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    status, body = api.append(entry["id"], {"questionList": []})
    assert status == 400 and "'apiControl'" in body["info"]


@pytest.mark.spec("knowledge-rule-13")
def test_rule13_a_supplied_reference_id_updates_that_item_in_place(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    root = entry["questionList"][0]
    grouped = root["relatedQuestions"][0]["questions"][0]
    question_list = [
        {
            "referenceId": root["referenceId"],
            "questionText": "Is the patient breathing normally?",
            "relatedQuestions": [
                {
                    "questions": [
                        {"referenceId": grouped["referenceId"], "questionText": "Blue lips?"}
                    ]
                }
            ],
        }
    ]
    appended = api.appended(entry["id"], {"apiControl": flags(), "questionList": question_list})
    new_root = appended["questionList"][0]
    assert new_root["referenceId"] == root["referenceId"]
    assert new_root["questionText"] == "Is the patient breathing normally?"
    new_grouped = new_root["relatedQuestions"][0]["questions"][0]
    assert (new_grouped["referenceId"], new_grouped["questionText"]) == (
        grouped["referenceId"],
        "Blue lips?",
    )


@pytest.mark.spec("knowledge-rule-13")
def test_rule13_an_omitted_reference_id_adds_a_new_item_with_a_fresh_id(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    kept = entry["spokenInstructions"][0]["referenceId"]
    appended = api.appended(
        entry["id"],
        {
            "apiControl": flags(),
            "spokenInstructions": [
                {"referenceId": kept, "instructionText": "Stay on the line."},
                {"instructionText": "Unlock the door."},
            ],
        },
    )
    first, second = appended["spokenInstructions"]
    assert first["referenceId"] == kept
    assert second["referenceId"].startswith("si-") and second["referenceId"] != kept


@pytest.mark.spec("knowledge-rule-14", "errors-400-unknown-reference-id")
def test_rule14_a_reference_id_not_in_the_previous_version_is_400_naming_it(
    api: KnowledgeApi,
) -> None:
    entry = api.created(card_payload())
    before = writes_of(stored_items())
    status, body = api.append(
        entry["id"],
        {
            "apiControl": flags(),
            "spokenInstructions": [{"referenceId": "si-0badc0de", "instructionText": "x"}],
        },
    )
    assert status == 400
    assert "si-0badc0de" in body["info"]
    assert writes_of(stored_items()) == before
    assert api.read(entry["id"])["latestVersion"] == 1


@pytest.mark.spec("knowledge-rule-14", "errors-400-unknown-reference-id")
def test_rule14_an_id_only_an_older_version_had_is_not_in_the_previous_version(
    api: KnowledgeApi,
) -> None:
    # Given version 2 that dropped version 1's spoken instruction
    entry = api.created(card_payload())
    dropped = entry["spokenInstructions"][0]["referenceId"]
    api.appended(entry["id"], {"apiControl": flags()})
    # When version 3 names it again
    status, body = api.append(
        entry["id"],
        {
            "apiControl": flags(),
            "spokenInstructions": [{"referenceId": dropped, "instructionText": "x"}],
        },
    )
    # Then it is refused: only the previous version counts
    assert status == 400 and dropped in body["info"]


@pytest.mark.spec("versioning-rule-2")
def test_older_versions_are_immutable_and_read_back_as_stored(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    api.appended(entry["id"], {"apiControl": flags(), "name": "Renamed", "questionList": []})
    first = api.read(entry["id"], version=1)
    assert first["questionList"] == entry["questionList"]
    assert first["name"] == "Chest Pain"
    assert (first["version"], first["latestVersion"]) == (1, 2)
    assert api.read(entry["id"])["name"] == "Renamed"


def test_get_of_a_version_that_does_not_exist_is_404(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    status, body = api.get(entry["id"], version=2)
    assert (status, body["reason"]) == (404, "NOT_FOUND")
    assert (
        api.call("knowledge_get", path={"knowledgeId": str(entry["id"])}, query={"version": "0"})[0]
        == 400
    )


def test_append_renames_and_the_list_shows_the_new_name(api: KnowledgeApi) -> None:
    entry = api.created(card_payload(description="Old"))
    appended = api.appended(entry["id"], {"apiControl": flags(), "name": "Chest Pain (2027)"})
    assert (appended["name"], appended["description"]) == ("Chest Pain (2027)", "Old")
    assert api.listing()["items"][0]["name"] == "Chest Pain (2027)"


@pytest.mark.parametrize("field", ["provider", "knowledgeType", "externalId"])
def test_append_cannot_change_identity_metadata(api: KnowledgeApi, field: str) -> None:
    entry = api.created(card_payload())
    status, body = api.append(entry["id"], {"apiControl": flags(), field: "GUIDE_CARD"})
    assert status == 400 and f"'{field}'" in body["info"]


def test_publish_true_on_append_publishes_the_new_version(api: KnowledgeApi) -> None:
    entry = api.created(card_payload(publish=True))
    appended = api.appended(entry["id"], {"apiControl": flags(), "publish": True})
    assert (appended["publishedVersion"], appended["published"]) == (2, True)
    assert api.read(entry["id"], version=1)["published"] is False


def test_without_publish_an_append_is_a_draft_beside_the_published_version(
    api: KnowledgeApi,
) -> None:
    entry = api.created(card_payload(publish=True))
    appended = api.appended(entry["id"], {"apiControl": flags()})
    assert (appended["publishedVersion"], appended["published"]) == (1, False)


@pytest.mark.spec("service-tenant-from-credential")
def test_append_to_an_unknown_or_other_tenants_id_is_404(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    assert api.append(entry["id"] + 100, {"apiControl": flags()})[0] == 404
    status, body = api.append(entry["id"], {"apiControl": flags()}, tenant=OTHER_TENANT)
    assert (status, body["info"]) == (404, f"Knowledge {entry['id']} not found")
    assert api.read(entry["id"])["latestVersion"] == 1


@pytest.mark.spec("endpoints-permission-knowledge-write-and-read", "data-auth-rule-3")
def test_append_needs_manage_knowledge(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    assert api.append(entry["id"], {"apiControl": flags()}, permissions=VIEW)[0] == 403


def test_an_entry_adopted_outside_the_api_gets_its_version_1_by_append(api: KnowledgeApi) -> None:
    # Given an entry loaded by an operator (metadata only, no version)
    adopted = create_entry(
        TENANT,
        NewEntry("Radio Codes", "NENA", KnowledgeType.POLICY, source=KnowledgeSource.API_IMPORT),
        utc_now(),
    ).id
    empty = api.read(adopted)
    assert (empty["version"], empty["latestVersion"], empty["apiControl"]) == (None, 0, None)
    # When the partner appends to it
    appended = api.appended(
        adopted, {"apiControl": flags(media=False), "questionList": [{"questionText": "?"}]}
    )
    # Then that is version 1 and sets the flags
    assert (appended["version"], appended["apiControl"]) == (1, flags(media=False))
    assert api.append(adopted, {"apiControl": flags()})[0] == 400


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        ("{not json", 400),
        ('{"apiControl": {}, "questionList": [{"questionText": 7}]}', 400),
        ('{"apiControl": {}, "spokenInstructions": [{"instructionText": "x", "loud": true}]}', 400),
        ('{"apiControl": {}, "name": "' + "x" * 1_100_000 + '"}', 413),
    ],
)
@pytest.mark.spec("errors-error-info")
def test_bad_append_bodies_are_error_info_and_nothing_is_written(
    api: KnowledgeApi, raw: str, status: int
) -> None:
    entry = api.created(card_payload())
    before = writes_of(stored_items())
    answer_status, body = api.call(
        "knowledge_append", path={"knowledgeId": str(entry["id"])}, raw_body=raw
    )
    assert answer_status == status
    assert set(body) == {"info", "reason"}
    assert writes_of(stored_items()) == before
