"""The knowledge card and its digest worker (SQS), through the handlers on moto: card
fields of the spec, versioning rule 2 (`versionId`, `version`, `active`), rule 5 where the
card shows it, and the processing status (PENDING, READY, FAILED)."""

from typing import Any

import pytest

from psap.config import knowledge_table
from psap.knowledge import store
from psap.storage.dynamodb import dynamodb
from tests.support.knowledge import (
    ALL_API,
    OTHER_TENANT,
    TENANT,
    KnowledgeApi,
    card_payload,
)

SECTIONS = [
    "questionList",
    "spokenInstructions",
    "cadActions",
    "smsMessages",
    "dispatchTriggers",
    "links",
    "media",
]


pytestmark = pytest.mark.harness(api=KnowledgeApi)


def ready_card(api: KnowledgeApi, knowledge_id: int, **options: Any) -> dict[str, Any]:
    assert api.run_digests() == {"batchItemFailures": []}
    status, card = api.card(knowledge_id, **options)
    assert status == 200, card
    assert card["processingStatus"] == "READY", card
    return dict(card)


@pytest.mark.spec("resources-knowledge-card-fields")
def test_card_has_the_fields_of_the_spec(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    card = ready_card(api, entry["id"])
    assert set(card) == {
        "knowledgeId",
        "knowledgeType",
        "name",
        "versionId",
        "version",
        "active",
        "processingStatus",
        "processingReason",
        "sections",
    }
    assert (card["knowledgeId"], card["knowledgeType"], card["name"]) == (
        entry["id"],
        "GUIDE_CARD",
        "Chest Pain",
    )


def test_card_is_pending_until_the_digest_worker_has_run(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    status, card = api.card(entry["id"])
    assert (status, card["processingStatus"], card["sections"]) == (200, "PENDING", [])
    assert len(api.pending_digests()) == 1


@pytest.mark.spec("versioning-rule-2", "resources-knowledge-card-fields")
def test_versioning_rule2_card_shows_the_latest_version_its_id_and_whether_it_is_active(
    api: KnowledgeApi,
) -> None:
    entry = api.created(card_payload(publish=True))
    appended = api.appended(entry["id"], {"apiControl": ALL_API})
    card = ready_card(api, entry["id"])
    assert (card["version"], card["versionId"], card["active"]) == (2, appended["versionId"], False)
    api.publish(entry["id"], 2)
    _, card = api.card(entry["id"])
    assert card["active"] is True


@pytest.mark.spec("resources-knowledge-card-fields")
def test_card_holds_one_digest_per_section_of_the_latest_version(api: KnowledgeApi) -> None:
    entry = api.created(card_payload(apiControl={**ALL_API, "media": False}))
    card = ready_card(api, entry["id"])
    assert [section["section"] for section in card["sections"]] == SECTIONS
    by_name = {section["section"]: section for section in card["sections"]}
    assert by_name["questionList"]["itemCount"] == 2  # a root question and a grouped one
    assert by_name["media"]["owner"] == "SERVICE"
    assert by_name["questionList"]["owner"] == "API"
    assert not any(section["edited"] for section in card["sections"])
    root = entry["questionList"][0]["referenceId"]
    assert f"[{root}] Is the patient breathing?" in by_name["questionList"]["digest"]
    assert by_name["links"]["digest"] == "No links to other knowledge."
    assert by_name["links"]["contentHash"].startswith("sha256:")


@pytest.mark.spec("knowledge-rule-5")
def test_rule5_effective_display_condition_is_stored_and_shown_on_the_card(
    api: KnowledgeApi,
) -> None:
    payload = card_payload()
    payload["questionList"][0]["displayCriteria"] = "caller == 'patient'"
    payload["questionList"][0]["relatedQuestions"][0]["questions"][0]["displayCriteria"] = "age > 8"
    entry = api.created(payload)
    root = entry["questionList"][0]
    grouped = root["relatedQuestions"][0]["questions"][0]
    assert root["effectiveDisplayCriteria"] == "caller == 'patient'"
    assert grouped["effectiveDisplayCriteria"] == "(answer == 'no') AND (age > 8)"
    questions = ready_card(api, entry["id"])["sections"][0]["digest"]
    assert "Shown when: (answer == 'no') AND (age > 8)." in questions
    assert "Shown when: caller == 'patient'." in questions


def test_a_new_write_makes_the_card_pending_until_its_own_digest(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    first = ready_card(api, entry["id"])
    api.appended(entry["id"], {"apiControl": ALL_API, "questionList": []})
    _, pending = api.card(entry["id"])
    # While PENDING the sections are those of the last digest made
    assert (pending["processingStatus"], pending["sections"]) == ("PENDING", first["sections"])
    card = ready_card(api, entry["id"])
    assert card["sections"][0]["itemCount"] == 0


def test_a_digest_of_older_content_never_overwrites_a_newer_request(api: KnowledgeApi) -> None:
    # Given two writes whose messages are both queued
    entry = api.created(card_payload())
    api.appended(entry["id"], {"apiControl": ALL_API, "questionList": []})
    # When the worker handles both (in any order), the card is the latest content's
    card = ready_card(api, entry["id"])
    assert (card["version"], card["sections"][0]["itemCount"]) == (2, 0)


def test_unreadable_content_marks_the_card_failed_with_a_reason(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    dynamodb().update_item(
        TableName=knowledge_table(),
        Key=store.version_key(TENANT, entry["id"], 1),
        UpdateExpression="SET document = :garbage",
        ExpressionAttributeValues={":garbage": {"B": b"not zlib"}},
    )
    assert api.run_digests() == {"batchItemFailures": []}
    _, card = api.card(entry["id"])
    assert card["processingStatus"] == "FAILED"
    assert "could not be digested" in card["processingReason"]


def test_a_failing_store_is_retried_and_the_last_attempt_marks_the_card_failed(
    api: KnowledgeApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    from psap.errors import StoreUnavailable
    from psap.knowledge import card as card_logic

    entry = api.created(card_payload())
    message = api.pending_digests()[0]

    def broken(*_: Any) -> None:
        raise StoreUnavailable("throttled")

    monkeypatch.setattr(card_logic, "read_state", broken)

    def deliver(receive_count: int) -> dict[str, Any]:
        record = {
            "messageId": message["MessageId"],
            "receiptHandle": message["ReceiptHandle"],
            "body": message["Body"],
            "attributes": {"ApproximateReceiveCount": str(receive_count)},
            "messageAttributes": {},
            "eventSource": "aws:sqs",
        }
        return api.digest({"Records": [record]})

    # A first attempt fails the record (SQS delivers it again) and leaves the card PENDING
    assert deliver(1) == {"batchItemFailures": [{"itemIdentifier": message["MessageId"]}]}
    assert api.card(entry["id"])[1]["processingStatus"] == "PENDING"
    # The last attempt (maxReceiveCount 3) records the failure before the DLQ takes it
    assert deliver(3) == {"batchItemFailures": []}
    _, card = api.card(entry["id"])
    assert card["processingStatus"] == "FAILED"
    assert "after 3 attempts" in card["processingReason"]


def test_a_message_that_is_not_a_digest_request_fails_and_goes_to_the_dlq(
    api: KnowledgeApi,
) -> None:
    record = {"messageId": "m-1", "receiptHandle": "r", "body": "{}", "attributes": {}}
    result = api.digest({"Records": [record]})
    assert result == {"batchItemFailures": [{"itemIdentifier": "m-1"}]}


def test_digest_of_a_deleted_entry_is_dropped(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    api.delete(entry["id"])
    assert api.run_digests() == {"batchItemFailures": []}


def test_digest_sample_event_is_handled(api: KnowledgeApi, load_event: Any) -> None:
    result = api.digest(load_event("knowledge_digest"))
    assert result == {"batchItemFailures": []}  # knowledge 1 does not exist: nothing to do


@pytest.mark.parametrize("permissions", ["VIEW_KNOWLEDGE", "MANAGE_KNOWLEDGE", "ADMIN"])
@pytest.mark.spec("endpoints-permission-knowledge-card")
def test_view_manage_knowledge_or_admin_may_read_the_card(
    api: KnowledgeApi, permissions: str
) -> None:
    entry = api.created(card_payload())
    assert api.card(entry["id"], permissions=permissions)[0] == 200


@pytest.mark.spec("endpoints-permission-knowledge-card", "data-auth-rule-2")
def test_card_without_view_manage_or_admin_is_403_naming_them(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    status, body = api.card(entry["id"], permissions="MANAGE_USERS")
    assert status == 403
    assert body["info"] == (
        "Access denied — View Knowledge, Manage Knowledge or Admin permission required"
    )


@pytest.mark.spec("service-tenant-from-credential")
def test_card_of_an_unknown_or_other_tenants_entry_is_404(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    assert api.card(entry["id"], tenant=OTHER_TENANT)[0] == 404
    assert api.card(entry["id"] + 7)[0] == 404
