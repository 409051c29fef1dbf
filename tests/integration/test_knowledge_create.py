"""POST /api/v1/external/knowledge through its handler on moto (tables, queue and bucket
from template.yaml). Names follow the spec's knowledge rules and the issue's bad-input list."""

import json
import re
from typing import Any

import pytest

from tests.support.knowledge import (
    OTHER_TENANT,
    TENANT,
    VIEW,
    KnowledgeApi,
    card_payload,
    stored_items,
    stored_objects,
    writes_of,
)

ID_FORMAT = re.compile(r"(q|si|ca|sms|dt|lk|md)-[0-9a-f]{8}")


pytestmark = pytest.mark.harness(api=KnowledgeApi)


def reference_ids(entry: dict[str, Any]) -> dict[str, list[str]]:
    questions = []
    for root in entry["questionList"]:
        questions.append(root["referenceId"])
        for group in root["relatedQuestions"]:
            questions.extend(question["referenceId"] for question in group["questions"])
    found = {"questionList": questions}
    for name in ("spokenInstructions", "media"):
        found[name] = [item["referenceId"] for item in entry[name]]
    for name, items in entry["actions"].items():
        found[name] = [item["referenceId"] for item in items]
    return found


@pytest.mark.spec("versioning-rule-2")
def test_create_answers_201_with_the_full_entry_at_version_1(api: KnowledgeApi) -> None:
    # Given the sample create event (a linking card), its link target loaded first
    api.created(
        card_payload(name="CPR (Adult)", external_id="ic-cpr-adult", provider="NENA-Standards")
    )
    # When it is created through the handler
    status, entry = api.call("knowledge_create")
    # Then the answer is the full entry, as GET returns it
    assert status == 201
    assert entry["id"] > 0
    assert (entry["version"], entry["latestVersion"], entry["versionId"]) == (
        1,
        1,
        entry["versionId"],
    )
    assert entry["source"] == "API_IMPORT"
    assert entry["externalId"] == "gc-chest-pain"
    assert entry == api.read(entry["id"])


@pytest.mark.spec("resources-timestamps-and-dates")
def test_create_stamps_created_at_and_updated_at_with_the_write_time(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    assert entry["createdAt"] == entry["updatedAt"] == entry["versionCreatedAt"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", entry["createdAt"])


@pytest.mark.spec("knowledge-rule-11", "knowledge-reference-id-formats")
def test_rule11_create_assigns_a_reference_id_in_its_format_to_every_item(
    api: KnowledgeApi,
) -> None:
    entry = api.created(
        card_payload(actions={"cadActions": [{"actionType": "A"}, {"actionType": "B"}]})
    )
    ids = reference_ids(entry)
    prefixes = {
        "questionList": "q",
        "spokenInstructions": "si",
        "cadActions": "ca",
        "media": "md",
    }
    for section, prefix in prefixes.items():
        assert ids[section], section
        assert all(
            ID_FORMAT.fullmatch(found) and found.startswith(prefix + "-") for found in ids[section]
        )
    every = [found for values in ids.values() for found in values]
    assert len(every) == len(set(every)) == 6


@pytest.mark.spec("knowledge-rule-11")
def test_rule11_reference_ids_supplied_on_create_are_ignored_and_not_stored(
    api: KnowledgeApi,
) -> None:
    payload = card_payload(
        spokenInstructions=[{"referenceId": "si-aaaaaaaa", "instructionText": "x"}]
    )
    entry = api.created(payload)
    assert entry["spokenInstructions"][0]["referenceId"] != "si-aaaaaaaa"
    assert "si-aaaaaaaa" not in json.dumps(api.read(entry["id"]))


@pytest.mark.spec("knowledge-rule-12")
def test_rule12_reference_ids_are_echoed_and_read_back_by_get(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    assert reference_ids(api.read(entry["id"])) == reference_ids(entry)
    assert reference_ids(api.read(entry["id"], version=1)) == reference_ids(entry)


@pytest.mark.spec("knowledge-rule-15")
def test_rule15_media_client_ids_are_repointed_at_the_assigned_md_ids(api: KnowledgeApi) -> None:
    # Given media with a supplied id and with a clientId, and fields that name them
    payload = card_payload(
        media=[
            {"referenceId": "photo", "mediaType": "IMAGE", "url": "https://x/p.png"},
            {"clientId": "clip", "mediaType": "VIDEO", "url": "https://x/c.mp4"},
        ],
        spokenInstructions=[{"instructionText": "Look", "referenceMedia": ["photo", "clip"]}],
        actions={"smsMessages": [{"messageText": "See", "mediaRef": "clip"}]},
    )
    payload["questionList"][0]["relatedQuestions"][0]["questions"][0]["referenceMedia"] = ["photo"]
    # When the entry is created
    entry = api.created(payload)
    # Then each reference names the md- id the service gave that media item
    photo, clip = (item["referenceId"] for item in entry["media"])
    assert entry["spokenInstructions"][0]["referenceMedia"] == [photo, clip]
    assert entry["actions"]["smsMessages"][0]["mediaRef"] == clip
    grouped = entry["questionList"][0]["relatedQuestions"][0]["questions"][0]
    assert grouped["referenceMedia"] == [photo]
    assert "clientId" not in entry["media"][1]


@pytest.mark.spec("knowledge-rule-15", "errors-error-info")
def test_rule15_a_reference_to_an_unknown_media_id_is_400_and_nothing_is_written(
    api: KnowledgeApi,
) -> None:
    before = writes_of(stored_items())
    payload = card_payload(actions={"smsMessages": [{"messageText": "See", "mediaRef": "nope"}]})
    status, body = api.create(payload)
    assert status == 400
    assert "'nope'" in body["info"]
    assert writes_of(stored_items()) == before


def test_external_id_is_unique_per_tenant_and_provider_409_names_the_existing_id(
    api: KnowledgeApi,
) -> None:
    first = api.created(card_payload(external_id="gc-1"))
    status, body = api.create(card_payload(name="Again", external_id="gc-1"))
    assert status == 409
    assert body["reason"] == "CONFLICT"
    assert f"knowledge id {first['id']}" in body["info"]
    assert api.listing()["totalItems"] == 1


def test_the_same_external_id_under_another_provider_or_tenant_is_another_entry(
    api: KnowledgeApi,
) -> None:
    api.created(card_payload(external_id="gc-1"))
    assert api.create(card_payload(external_id="gc-1", provider="APCO"))[0] == 201
    assert api.create(card_payload(external_id="gc-1"), tenant=OTHER_TENANT)[0] == 201


def test_create_updates_the_list_and_its_counters_in_the_same_transaction(
    api: KnowledgeApi,
) -> None:
    created = [
        api.created(card_payload(name=f"Card {n}", external_id=f"gc-{n}"))["id"] for n in range(3)
    ]
    listed = api.listing()
    assert [item["id"] for item in listed["items"]] == created
    assert listed["totalItems"] == 3
    assert api.listing(provider="NENA", knowledgeType="GUIDE_CARD")["totalItems"] == 3


def test_publish_true_on_create_publishes_version_1(api: KnowledgeApi) -> None:
    entry = api.created(card_payload(publish=True))
    assert (entry["publishedVersion"], entry["published"]) == (1, True)
    assert api.listing()["items"][0]["publishedVersion"] == 1


def test_without_publish_version_1_is_a_draft(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    assert (entry["publishedVersion"], entry["published"]) == (None, False)


@pytest.mark.parametrize("field", ["name", "knowledgeType", "provider", "apiControl"])
def test_missing_required_field_on_create_is_400_naming_it(api: KnowledgeApi, field: str) -> None:
    payload = card_payload()
    del payload[field]
    status, body = api.create(payload)
    assert status == 400
    assert f"'{field}'" in body["info"]
    assert set(body) == {"info", "reason"}
    assert writes_of(stored_items()) == []


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"colour": "red"}, "colour"),
        ({"apiControl": {"questionList": True, "pictures": True}}, "apiControl.pictures"),
        (
            {"spokenInstructions": [{"instructionText": "x", "tone": "calm"}]},
            "spokenInstructions.0.tone",
        ),
        ({"actions": {"faxes": []}}, "actions.faxes"),
        ({"api_control": {}}, "api_control"),
    ],
)
def test_unknown_fields_are_400_naming_them(
    api: KnowledgeApi, change: dict[str, Any], named: str
) -> None:
    status, body = api.create(card_payload(**change))
    assert status == 400
    assert f"'{named}'" in body["info"]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"apiControl": {"questionList": "yes"}}, "apiControl.questionList"),
        ({"questionList": {"questionText": "x"}}, "questionList"),
        ({"publish": "true"}, "publish"),
        ({"knowledgeType": "FLOWCHART"}, "knowledgeType"),
        ({"name": 42}, "name"),
        ({"name": ""}, "name"),
        ({"media": [{"mediaType": "HOLOGRAM", "url": "x"}]}, "media.0.mediaType"),
        ({"spokenInstructions": [{}]}, "spokenInstructions.0.instructionText"),
    ],
)
def test_wrong_types_are_400_naming_the_field(
    api: KnowledgeApi, change: dict[str, Any], named: str
) -> None:
    status, body = api.create(card_payload(**change))
    assert status == 400
    assert f"'{named}'" in body["info"]
    assert writes_of(stored_items()) == []


@pytest.mark.parametrize("raw", ["{not json", "", "[]", "null", '"text"'])
def test_malformed_or_missing_body_is_400_and_nothing_is_written(
    api: KnowledgeApi, raw: str
) -> None:
    status, body = api.call("knowledge_create", raw_body=raw)
    assert status == 400
    assert set(body) == {"info", "reason"}
    assert writes_of(stored_items()) == []


def test_malformed_json_says_so(api: KnowledgeApi) -> None:
    _, body = api.call("knowledge_create", raw_body='{"name": "x",')
    assert body["info"].startswith("The request body is not valid JSON")


def test_body_over_1_mb_is_413_and_nothing_is_written(api: KnowledgeApi) -> None:
    payload = card_payload(description="x" * 100)
    payload["questionList"] = [{"questionText": "y" * 3000} for _ in range(400)]
    assert len(json.dumps(payload)) > 1_048_576
    status, body = api.create(payload)
    assert status == 413
    assert body["reason"] == "PAYLOAD_TOO_LARGE"
    assert writes_of(stored_items()) == []
    assert stored_objects() == []


@pytest.mark.spec(
    "endpoints-permission-knowledge-write-and-read", "data-auth-rule-3", "data-auth-rule-2"
)
def test_create_needs_manage_knowledge(api: KnowledgeApi) -> None:
    status, body = api.create(card_payload(), permissions=VIEW)
    assert status == 403
    assert body == {
        "info": "Access denied — Manage Knowledge permission required",
        "reason": "FORBIDDEN",
    }


def test_403_comes_before_body_validation_and_the_size_limit(api: KnowledgeApi) -> None:
    assert api.call("knowledge_create", raw_body="{bad", permissions=VIEW)[0] == 403
    assert api.call("knowledge_create", raw_body="x" * 1_100_000, permissions=VIEW)[0] == 403


@pytest.mark.spec("service-tenant-from-credential")
def test_tenant_isolation_an_entry_of_another_tenant_reads_as_unknown(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    status, body = api.get(entry["id"], tenant=OTHER_TENANT)
    assert (status, body["reason"]) == (404, "NOT_FOUND")
    assert api.listing(tenant=OTHER_TENANT)["totalItems"] == 0


def test_every_key_written_by_a_create_begins_with_the_tenant(api: KnowledgeApi) -> None:
    api.created(card_payload(), tenant=TENANT)
    keys = [item["pk"]["S"] for item in stored_items()]
    assert all(key.startswith(f"T#{TENANT}#") or key.startswith("SEQ#") for key in keys)


@pytest.mark.parametrize("permissions", ["VIEW_KNOWLEDGE", "MANAGE_KNOWLEDGE"])
@pytest.mark.spec("endpoints-permission-knowledge-write-and-read", "data-auth-rule-3")
def test_get_accepts_view_or_manage_knowledge(api: KnowledgeApi, permissions: str) -> None:
    entry = api.created(card_payload())
    assert api.get(entry["id"], permissions=permissions)[0] == 200


@pytest.mark.spec("endpoints-permission-knowledge-write-and-read", "data-auth-rule-2")
def test_get_without_knowledge_permissions_is_403_with_the_spec_message(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    status, body = api.get(entry["id"], permissions="MANAGE_USERS")
    assert status == 403
    assert body == {
        "info": "Access denied — View Knowledge or Manage Knowledge permission required",
        "reason": "FORBIDDEN",
    }


def test_get_through_the_sample_event(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())  # the sample event names a demo entry: this one
    status, body = api.call(
        "knowledge_get", path={"knowledgeId": str(entry["id"])}, permissions=VIEW
    )
    assert (status, body["id"], body["version"]) == (200, entry["id"], 1)
