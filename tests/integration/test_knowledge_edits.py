"""Service-side edits of service-owned sections (what "editable inside the service" means
here, rule 3): stored against the entry, preferred by the card, carried forward by appends.
Through the admin CLI and the logic it calls, on moto."""

import json
from pathlib import Path

import pytest

from psap.config import auth_table, knowledge_table
from psap.errors import InvalidInput, NotFound
from psap.knowledge import store
from psap.knowledge.authoring import edit_service_section
from psap.knowledge.content import Section
from tests.support.knowledge import (
    ALL_API,
    OTHER_TENANT,
    TENANT,
    KnowledgeApi,
    card_payload,
)
from tools import admin

SERVICE_INSTRUCTIONS = {**ALL_API, "spokenInstructions": False}


pytestmark = pytest.mark.harness(api=KnowledgeApi)


def run_admin(*arguments: str) -> int:
    tables = ["--auth-table", auth_table(), "--knowledge-table", knowledge_table()]
    return admin.main([*tables, *arguments])


@pytest.mark.spec("knowledge-rule-3", "resources-knowledge-card-prefers-edits")
def test_rule3_an_edit_through_the_admin_cli_is_preferred_by_the_card(
    api: KnowledgeApi, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given an entry whose spoken instructions the service owns
    entry = api.created(card_payload(apiControl=SERVICE_INSTRUCTIONS))
    kept = entry["spokenInstructions"][0]["referenceId"]
    edit = tmp_path / "instructions.json"
    edit.write_text(
        json.dumps(
            {
                "items": [
                    {"referenceId": kept, "instructionText": "Stay on the line with me."},
                    {"instructionText": "Turn on the porch light."},
                ]
            }
        )
    )
    # When an operator edits them
    code = run_admin(
        "knowledge", "edit", "--tenant", str(TENANT), "--id", str(entry["id"]),
        "--section", "spokenInstructions", "--file", str(edit), "--editor", "supervisor",
        "--note", "local wording",
    )  # fmt: skip
    assert code == 0
    assert f"edited spokenInstructions of knowledge {entry['id']}" in capsys.readouterr().out
    # Then the card shows the edit (after its digest), marked as edited
    api.run_digests()
    _, card = api.card(entry["id"])
    section = next(item for item in card["sections"] if item["section"] == "spokenInstructions")
    assert (section["owner"], section["edited"], section["itemCount"]) == ("SERVICE", True, 2)
    assert f"[{kept}] Stay on the line with me." in section["digest"]
    assert section["editedAt"] is not None
    # And the CLI lists it
    assert run_admin("knowledge", "edits", "--tenant", str(TENANT), "--id", str(entry["id"])) == 0
    listed = capsys.readouterr().out
    assert "spokenInstructions\t2 items" in listed and "supervisor" in listed


@pytest.mark.spec("knowledge-rule-3")
def test_rule3_an_edit_is_carried_forward_by_the_next_append(api: KnowledgeApi) -> None:
    entry = api.created(card_payload(apiControl=SERVICE_INSTRUCTIONS))
    result = edit_service_section(
        TENANT,
        entry["id"],
        Section.SPOKEN_INSTRUCTIONS,
        items=[{"instructionText": "Edited."}],
        editor="ops",
    )
    # GET shows version 1 as stored until a new version exists
    assert api.read(entry["id"])["spokenInstructions"] == entry["spokenInstructions"]
    appended = api.appended(entry["id"], {"apiControl": SERVICE_INSTRUCTIONS, "questionList": []})
    assert [item["instructionText"] for item in appended["spokenInstructions"]] == ["Edited."]
    assert appended["spokenInstructions"][0]["referenceId"] == result.reference_ids[0]
    # And so is every later append
    third = api.appended(entry["id"], {"apiControl": SERVICE_INSTRUCTIONS})
    assert third["spokenInstructions"] == appended["spokenInstructions"]


@pytest.mark.spec("knowledge-rule-1")
def test_an_edit_of_an_api_owned_section_is_refused(api: KnowledgeApi) -> None:
    entry = api.created(card_payload(apiControl=SERVICE_INSTRUCTIONS))
    with pytest.raises(InvalidInput, match="owned by the API"):
        edit_service_section(TENANT, entry["id"], Section.QUESTION_LIST, items=[], editor="ops")


@pytest.mark.spec("knowledge-rule-13", "knowledge-rule-14")
def test_edit_reference_ids_follow_rules_13_and_14(api: KnowledgeApi) -> None:
    entry = api.created(card_payload(apiControl=SERVICE_INSTRUCTIONS))
    with pytest.raises(InvalidInput, match="si-00000000"):
        edit_service_section(
            TENANT,
            entry["id"],
            Section.SPOKEN_INSTRUCTIONS,
            items=[{"referenceId": "si-00000000", "instructionText": "x"}],
            editor="ops",
        )
    assert store.read_edit_items(TENANT, entry["id"]) == []


def test_edit_items_are_validated_like_the_payload_naming_the_field(api: KnowledgeApi) -> None:
    entry = api.created(card_payload(apiControl=SERVICE_INSTRUCTIONS))
    with pytest.raises(InvalidInput, match=r"'items\.0\.instructionText'"):
        edit_service_section(
            TENANT, entry["id"], Section.SPOKEN_INSTRUCTIONS, items=[{}], editor="ops"
        )


@pytest.mark.spec("knowledge-rule-7")
def test_edited_links_are_resolved_like_any_write(api: KnowledgeApi) -> None:
    target = api.created(card_payload(name="CPR", external_id="ic-cpr"))
    control = {**ALL_API, "links": False}
    entry = api.created(card_payload(external_id="gc-x", apiControl=control))
    with pytest.raises(InvalidInput, match="'ic-missing'"):
        edit_service_section(
            TENANT,
            entry["id"],
            Section.LINKS,
            items=[{"targetExternalId": "ic-missing"}],
            editor="ops",
        )
    edit_service_section(
        TENANT, entry["id"], Section.LINKS, items=[{"targetExternalId": "ic-cpr"}], editor="ops"
    )
    appended = api.appended(entry["id"], {"apiControl": control})
    assert appended["actions"]["links"][0]["targetKnowledgeId"] == target["id"]


def test_an_edit_removing_media_that_items_still_reference_is_refused(api: KnowledgeApi) -> None:
    payload = card_payload(
        apiControl={**ALL_API, "media": False},
        media=[{"referenceId": "photo", "mediaType": "IMAGE", "url": "https://x/p.png"}],
        spokenInstructions=[{"instructionText": "Look", "referenceMedia": ["photo"]}],
    )
    entry = api.created(payload)
    with pytest.raises(InvalidInput, match="referenceMedia"):
        edit_service_section(TENANT, entry["id"], Section.MEDIA, items=[], editor="ops")


def test_a_concurrent_edit_fails_an_appends_conditional_write_so_it_reads_again(
    api: KnowledgeApi,
) -> None:
    # An edit between an append's read and its write moves serviceEditSeq: the write fails
    # its condition, so the append reads again and carries the edit forward.
    entry = api.created(card_payload(apiControl=SERVICE_INSTRUCTIONS))
    with pytest.raises(store.WriteRaced):
        store.write_version(
            TENANT,
            entry["id"],
            1,
            expected_edit_seq=5,
            entry_changes={"latestVersion": 2},
            version_attributes={"version": 2},
        )
    edit_service_section(TENANT, entry["id"], Section.SPOKEN_INSTRUCTIONS, items=[], editor="ops")
    with pytest.raises(store.WriteRaced):
        store.write_version(
            TENANT,
            entry["id"],
            1,
            expected_edit_seq=0,
            entry_changes={"latestVersion": 2},
            version_attributes={"version": 2},
        )


@pytest.mark.spec("service-tenant-from-credential")
def test_an_edit_of_another_tenants_entry_is_not_found(api: KnowledgeApi) -> None:
    entry = api.created(card_payload(apiControl=SERVICE_INSTRUCTIONS))
    with pytest.raises(NotFound):
        edit_service_section(
            OTHER_TENANT, entry["id"], Section.SPOKEN_INSTRUCTIONS, items=[], editor="ops"
        )


def test_admin_redigest_asks_for_the_card_again(
    api: KnowledgeApi, capsys: pytest.CaptureFixture[str]
) -> None:
    entry = api.created(card_payload())
    api.run_digests()
    assert (
        run_admin("knowledge", "redigest", "--tenant", str(TENANT), "--id", str(entry["id"])) == 0
    )
    assert api.card(entry["id"])[1]["processingStatus"] == "PENDING"
    api.run_digests()
    assert api.card(entry["id"])[1]["processingStatus"] == "READY"


def test_admin_edit_with_an_unknown_section_is_a_usage_error(
    api: KnowledgeApi, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit = tmp_path / "edit.json"
    edit.write_text("[]")
    code = run_admin(
        "knowledge", "edit", "--tenant", str(TENANT), "--id", "1", "--section", "faxes",
        "--file", str(edit),
    )  # fmt: skip
    assert code == 2
    assert "unknown section 'faxes'" in capsys.readouterr().err
