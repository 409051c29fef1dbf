"""Large versions: a 1 000-question entry, and a version too large for one DynamoDB item
(400 KB), which is kept compressed in S3 with a pointer in its item."""

import random
import string
from collections.abc import Callable
from typing import Any

import pytest

from psap.knowledge import store
from tests.support.knowledge import (
    ALL_API,
    TENANT,
    KnowledgeApi,
    card_payload,
    stored_items,
    stored_objects,
)

DYNAMODB_ITEM_LIMIT = 400 * 1024


pytestmark = pytest.mark.harness(api=KnowledgeApi)


def questions(count: int, text: Callable[[int], str]) -> list[dict[str, Any]]:
    return [
        {
            "questionText": text(number),
            "displayCriteria": f"step == {number}",
            "relatedQuestions": [
                {
                    "displayCriteria": "answer == 'yes'",
                    "questions": [{"questionText": f"Why {number}?"}],
                }
            ]
            if number % 10 == 0
            else [],
        }
        for number in range(count)
    ]


def largest_item_bytes() -> int:
    return max(len(str(item)) for item in stored_items())


def test_a_1000_question_entry_is_created_appended_and_read_back(api: KnowledgeApi) -> None:
    # Given 1 000 root questions (and 100 grouped ones) with realistic wording
    payload = card_payload(
        questionList=questions(
            1000, lambda n: f"Question {n}: is the caller safe where they are now?"
        )
    )
    # When it is created and appended with every referenceId kept
    entry = api.created(payload)
    assert len(entry["questionList"]) == 1000
    kept = [
        {"referenceId": q["referenceId"], "questionText": q["questionText"] + " (v2)"}
        for q in entry["questionList"]
    ]
    appended = api.appended(entry["id"], {"apiControl": ALL_API, "questionList": kept})
    # Then both versions read back whole, ids kept, every item under DynamoDB's limit
    assert [q["referenceId"] for q in api.read(entry["id"])["questionList"]] == [
        q["referenceId"] for q in entry["questionList"]
    ]
    assert api.read(entry["id"], version=1)["questionList"] == entry["questionList"]
    assert appended["questionList"][999]["questionText"].endswith("(v2)")
    assert largest_item_bytes() < DYNAMODB_ITEM_LIMIT
    # And the card digests it (capped text, full count)
    api.run_digests()
    _, card = api.card(entry["id"])
    assert card["sections"][0]["itemCount"] == 1000


def test_a_version_too_large_for_an_item_is_kept_in_s3_and_reads_back(api: KnowledgeApi) -> None:
    # Given 1 000 questions of random text, which compress to far more than 64 KB
    generator = random.Random(7)  # noqa: S311 - test data, not secrets
    alphabet = string.ascii_letters + string.digits

    def noise(number: int) -> str:
        return f"{number} " + "".join(generator.choices(alphabet, k=300))

    entry = api.created(card_payload(questionList=questions(1000, noise)))
    # Then the version item points at S3, and GET reads the content back whole
    version = store.read_version_item(TENANT, entry["id"], 1)
    assert version is not None
    assert "document" not in version and version["documentKey"] in stored_objects()
    assert version["storedBytes"] > store.INLINE_DOCUMENT_BYTES
    assert api.read(entry["id"]) == entry
    assert largest_item_bytes() < DYNAMODB_ITEM_LIMIT
    api.run_digests()
    assert api.card(entry["id"])[1]["processingStatus"] == "READY"


def test_a_small_version_stays_inline_compressed(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    version = store.read_version_item(TENANT, entry["id"], 1)
    assert version is not None
    assert isinstance(version["document"], bytes)
    assert version["storedBytes"] < version["rawBytes"]
    assert stored_objects() == []
