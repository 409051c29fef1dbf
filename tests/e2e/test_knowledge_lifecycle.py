"""A knowledge card's life over real HTTP through the local stack: create a target, create a
card linking to it, append with updated / new / unknown referenceIds, publish, a service-side
edit through the admin CLI, the card READY once the queue poller has run the digest worker,
unpublish and delete. In a tenant of its own, so the demo tenants' lists stay as seeded."""

import json
import re
import time
from typing import Any

import httpx
import pytest

from tests.support.knowledge import ALL_API
from tests.support.stack import psap_admin

pytestmark = pytest.mark.e2e

KNOWLEDGE = "/api/v1/external/knowledge"
CARD = "/api/v1/external/mcp/resources/knowledge/{}/card"
# Every section under the API's control but media, which the service (an operator) edits.
SERVICE_MEDIA = {**ALL_API, "media": False}


@pytest.fixture(scope="module")
def partner(stack: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A new tenant with a Manage Knowledge credential, made with the admin CLI."""
    state_file = tmp_path_factory.mktemp("knowledge") / "stack.json"
    state_file.write_text(json.dumps(stack))
    created = psap_admin(state_file, "tenant", "create", "--name", "Knowledge E2E County")
    tenant = int(re.search(r"created tenant (\d+)", created).group(1))  # type: ignore[union-attr]
    issued = psap_admin(
        state_file, "credential", "issue", "--tenant", str(tenant), "--kind", "partner",
        "--permissions", "VIEW_KNOWLEDGE,MANAGE_KNOWLEDGE", "--label", "e2e",
        "--expires-in-days", "30",
    )  # fmt: skip
    token = issued.strip().splitlines()[-1]
    return {"tenant": tenant, "stateFile": state_file, "token": token, "baseUrl": stack["baseUrl"]}


def call(partner: dict[str, Any], method: str, path: str, **options: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {partner['token']}", **options.pop("headers", {})}
    return httpx.request(method, partner["baseUrl"] + path, headers=headers, timeout=30, **options)


def ready_card(partner: dict[str, Any], knowledge_id: int, version: int) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        card: dict[str, Any] = call(partner, "GET", CARD.format(knowledge_id)).json()
        if card["processingStatus"] == "READY" and card["version"] == version:
            return card
        assert time.monotonic() < deadline, f"the card did not become READY: {card}"
        time.sleep(0.3)


@pytest.mark.spec(
    "versioning-rule-2",
    "knowledge-rule-3",
    "knowledge-rule-7",
    "knowledge-rule-8",
    "knowledge-rule-10",
    "knowledge-rule-11",
    "knowledge-rule-13",
    "knowledge-rule-14",
    "knowledge-rule-15",
    "knowledge-reference-id-formats",
    "errors-400-unknown-reference-id",
    "resources-knowledge-card-prefers-edits",
    "knowledge-list-rule-1",
)
def test_knowledge_lifecycle_over_http(partner: dict[str, Any]) -> None:
    # Given a target card, loaded first (rule 8)
    target = call(
        partner,
        "POST",
        KNOWLEDGE,
        json={
            "name": "CPR Instructions",
            "provider": "NENA",
            "knowledgeType": "INSTRUCTION_CARD",
            "externalId": "ic-cpr",
            "apiControl": {},
            "spokenInstructions": [{"instructionText": "Push hard and fast."}],
        },
    )
    assert target.status_code == 201, target.text
    # When a card that links to it is created, with a media client id
    created = call(
        partner,
        "POST",
        KNOWLEDGE,
        json={
            "name": "Cardiac Arrest",
            "provider": "NENA",
            "knowledgeType": "GUIDE_CARD",
            "externalId": "gc-cardiac-arrest",
            "apiControl": SERVICE_MEDIA,
            "questionList": [
                {
                    "questionText": "Is the patient breathing?",
                    "relatedQuestions": [
                        {
                            "displayCriteria": "answer == 'no'",
                            "questions": [{"questionText": "AED nearby?"}],
                        }
                    ],
                },
                {"questionText": "How old is the patient?", "referenceMedia": ["chart"]},
            ],
            "actions": {"links": [{"targetExternalId": "ic-cpr", "label": "Start CPR"}]},
            "media": [{"referenceId": "chart", "mediaType": "IMAGE", "url": "https://x/chart.png"}],
        },
    )
    # Then it is 201 with ids, the resolved link and the repointed media reference
    assert created.status_code == 201, created.text
    card = created.json()
    knowledge_id = card["id"]
    first, second = card["questionList"]
    assert re.fullmatch(r"q-[0-9a-f]{8}", first["referenceId"])
    assert second["referenceMedia"] == [card["media"][0]["referenceId"]]
    link = card["actions"]["links"][0]
    assert (link["targetKnowledgeId"], link["targetDocumentName"]) == (
        target.json()["id"],
        "CPR Instructions",
    )

    # When an append updates one question, adds one and drops the other
    appended = call(
        partner,
        "POST",
        f"{KNOWLEDGE}/{knowledge_id}/versions",
        json={
            "apiControl": SERVICE_MEDIA,
            "questionList": [
                {
                    "referenceId": first["referenceId"],
                    "questionText": "Is the patient breathing normally?",
                },
                {"questionText": "Is anyone trained in CPR?"},
            ],
            "actions": {"links": [{"targetExternalId": "ic-cpr"}]},
        },
    )
    assert appended.status_code == 201, appended.text
    version_2 = appended.json()
    assert version_2["version"] == 2
    assert version_2["questionList"][0]["referenceId"] == first["referenceId"]
    assert version_2["questionList"][1]["referenceId"] not in {
        first["referenceId"],
        second["referenceId"],
    }
    assert version_2["media"] == card["media"]  # service-owned: carried forward

    # And an append naming an id version 2 does not have is refused, nothing written
    unknown = call(
        partner,
        "POST",
        f"{KNOWLEDGE}/{knowledge_id}/versions",
        json={
            "apiControl": SERVICE_MEDIA,
            "questionList": [{"referenceId": second["referenceId"], "questionText": "?"}],
        },
    )
    assert unknown.status_code == 400
    assert second["referenceId"] in unknown.json()["info"]

    # When version 2 is published
    published = call(partner, "POST", f"{KNOWLEDGE}/{knowledge_id}/versions/2/publish")
    assert published.status_code == 200 and published.json()["publishedVersion"] == 2

    # Then the card becomes READY once the poller has run the digest worker
    ready = ready_card(partner, knowledge_id, 2)
    assert (ready["active"], ready["versionId"]) == (True, version_2["versionId"])
    questions = next(
        section for section in ready["sections"] if section["section"] == "questionList"
    )
    assert first["referenceId"] in questions["digest"]

    # When an operator edits the service-owned media (admin CLI), the card prefers the edit
    edit = partner["stateFile"].parent / "media.json"
    edit.write_text(
        json.dumps([{"mediaType": "IMAGE", "url": "https://x/new-chart.png", "caption": "New"}])
    )
    psap_admin(
        partner["stateFile"], "knowledge", "edit", "--tenant", str(partner["tenant"]),
        "--id", str(knowledge_id), "--section", "media", "--file", str(edit),
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while True:
        current = call(partner, "GET", CARD.format(knowledge_id)).json()
        media = next(section for section in current["sections"] if section["section"] == "media")
        if current["processingStatus"] == "READY" and media["edited"]:
            break
        assert time.monotonic() < deadline, current
        time.sleep(0.3)
    assert "new-chart.png" in media["digest"]

    # And GET reads every version as stored
    read = call(partner, "GET", f"{KNOWLEDGE}/{knowledge_id}", params={"version": 1})
    assert read.status_code == 200 and read.json()["questionList"] == card["questionList"]

    # Finally unpublish and delete: the list no longer shows it, the link still reads
    assert (
        call(partner, "POST", f"{KNOWLEDGE}/{knowledge_id}/unpublish").json()["publishedVersion"]
        is None
    )
    assert call(partner, "DELETE", f"{KNOWLEDGE}/{target.json()['id']}").status_code == 204
    listed = call(partner, "GET", KNOWLEDGE).json()
    assert [item["id"] for item in listed["items"]] == [knowledge_id]
    again = call(partner, "GET", f"{KNOWLEDGE}/{knowledge_id}").json()
    assert again["actions"]["links"][0]["targetDocumentName"] == "CPR Instructions"


def test_body_over_the_limit_is_413_over_http(partner: dict[str, Any]) -> None:
    answer = call(
        partner,
        "POST",
        KNOWLEDGE,
        content=b'{"name": "' + b"x" * 1_100_000 + b'"}',
        headers={"Content-Type": "application/json"},
    )
    assert answer.status_code == 413
    assert answer.json()["reason"] == "PAYLOAD_TOO_LARGE"


def test_demo_tenant_has_linked_cards_with_ready_cards(stack: dict[str, Any]) -> None:
    token = stack["tenants"][0]["credentials"]["readOnly"]
    headers = {"Authorization": f"Bearer {token}"}
    listed = httpx.get(
        stack["baseUrl"] + KNOWLEDGE, headers=headers, params={"size": 200}, timeout=30
    ).json()
    by_name = {item["name"]: item for item in listed["items"]}
    unconscious = by_name["Unconscious Person"]
    entry = httpx.get(
        f"{stack['baseUrl']}{KNOWLEDGE}/{unconscious['id']}", headers=headers, timeout=30
    ).json()
    assert (entry["version"], entry["publishedVersion"]) == (2, 1)
    targets = {
        link["targetExternalId"]: link["targetKnowledgeId"] for link in entry["actions"]["links"]
    }
    assert targets == {
        "ic-cpr-adult": by_name["CPR Instructions (Adult)"]["id"],
        "ic-aed": by_name["AED Instructions"]["id"],
    }
    ready_card({"token": token, "baseUrl": stack["baseUrl"]}, unconscious["id"], 2)
