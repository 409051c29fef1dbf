"""How a version's content is built (psap.knowledge.versioning), without storage. Test
names follow the spec's "Knowledge rules (create, append, read)"."""

import itertools
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from psap.errors import InvalidInput
from psap.knowledge.authoring import check_api_control, check_ownership
from psap.knowledge.content import (
    ApiControl,
    KnowledgeAppendRequest,
    KnowledgeCreateRequest,
    Owner,
    Section,
    VersionContent,
    all_questions,
)
from psap.knowledge.models import KnowledgeType
from psap.knowledge.versioning import (
    LinkTarget,
    ReferenceIds,
    build_content,
    content_ids,
    effective_condition,
    sent_sections,
)

FORMATS = {
    Section.QUESTION_LIST: r"q-[0-9a-f]{8}",
    Section.SPOKEN_INSTRUCTIONS: r"si-[0-9a-f]{8}",
    Section.CAD_ACTIONS: r"ca-[0-9a-f]{8}",
    Section.SMS_MESSAGES: r"sms-[0-9a-f]{8}",
    Section.DISPATCH_TRIGGERS: r"dt-[0-9a-f]{8}",
    Section.LINKS: r"lk-[0-9a-f]{8}",
    Section.MEDIA: r"md-[0-9a-f]{8}",
}
TARGET = LinkTarget(41, "CPR Instructions", KnowledgeType.INSTRUCTION_CARD, "NENA")


def create_request(**fields: Any) -> KnowledgeCreateRequest:
    payload: dict[str, Any] = {
        "name": "Card",
        "provider": "NENA",
        "knowledgeType": "GUIDE_CARD",
        "apiControl": {},
        "questionList": [
            {
                "referenceId": "q-supplied",
                "questionText": "Breathing?",
                "displayCriteria": "age > 1",
                "relatedQuestions": [
                    {
                        "displayCriteria": "breathing == 'no'",
                        "questions": [
                            {"questionText": "Blue?", "displayCriteria": "conscious == 'no'"},
                            {"questionText": "Choking?"},
                        ],
                    }
                ],
            }
        ],
        "spokenInstructions": [{"referenceId": "si-11111111", "instructionText": "Stay calm."}],
        "actions": {
            "cadActions": [{"actionType": "SET_PRIORITY"}],
            "smsMessages": [{"messageText": "On the way", "mediaRef": "map"}],
            "dispatchTriggers": [{"condition": "x"}],
            "links": [{"targetExternalId": "ic-cpr"}],
        },
        "media": [{"referenceId": "map", "mediaType": "IMAGE", "url": "https://x/map.png"}],
    }
    payload.update(fields)
    return KnowledgeCreateRequest.model_validate(payload)


def create(request: KnowledgeCreateRequest, **options: Any) -> VersionContent:
    return build_content(
        sent_sections(request, Section),
        VersionContent(),
        {"ic-cpr": TARGET},
        creating=True,
        **options,
    )


def append(base: VersionContent, **fields: Any) -> VersionContent:
    request = KnowledgeAppendRequest.model_validate({"apiControl": {}, **fields})
    return build_content(sent_sections(request, Section), base, {"ic-cpr": TARGET}, creating=False)


@pytest.mark.spec("knowledge-rule-11", "knowledge-reference-id-formats")
def test_rule11_create_assigns_every_item_of_every_list_an_id_in_the_table_format() -> None:
    content = create(create_request())
    for section, pattern in FORMATS.items():
        items = (
            all_questions(content.question_list)
            if section is Section.QUESTION_LIST
            else content.items(section)
        )
        assert items, section
        for item in items:
            assert re.fullmatch(pattern, item.reference_id), (section, item.reference_id)
    assert len(all_questions(content.question_list)) == 3


@pytest.mark.spec("knowledge-rule-11")
def test_rule11_ids_supplied_on_create_are_ignored() -> None:
    content = create(create_request())
    ids = content_ids(content)
    assert "q-supplied" not in ids and "si-11111111" not in ids and "map" not in ids


@pytest.mark.spec("knowledge-rule-11")
def test_rule11_ids_are_unique_within_the_entry_even_when_the_random_draw_repeats() -> None:
    # Given a draw that repeats itself before giving new values
    values: Iterator[str] = itertools.chain(["0000000a"] * 5, (f"{n:08x}" for n in range(1, 99)))
    content = create(create_request(), draw=lambda: next(values))
    # Then no two items share an id
    ids = [question.reference_id for question in all_questions(content.question_list)]
    ids += [
        item.reference_id
        for section in Section
        if section is not Section.QUESTION_LIST
        for item in content.items(section)
    ]
    assert len(ids) == 9
    assert len(ids) == len(set(ids))


@pytest.mark.spec("knowledge-rule-5")
def test_rule5_root_question_effective_condition_is_its_own() -> None:
    root = create(create_request()).question_list[0]
    assert root.effective_display_criteria == "age > 1"


@pytest.mark.spec("knowledge-rule-5")
def test_rule5_grouped_question_stacks_its_condition_on_its_groups() -> None:
    group = create(create_request()).question_list[0].related_questions[0]
    assert group.questions[0].effective_display_criteria == (
        "(breathing == 'no') AND (conscious == 'no')"
    )
    assert group.questions[1].effective_display_criteria == "breathing == 'no'"


@pytest.mark.parametrize(
    ("group", "own", "expected"),
    [
        (None, None, None),
        ("a", None, "a"),
        (None, "b", "b"),
        ("a", "b", "(a) AND (b)"),
        ("  ", "b", "b"),
    ],
)
@pytest.mark.spec("knowledge-rule-5")
def test_rule5_effective_condition(
    group: str | None, own: str | None, expected: str | None
) -> None:
    assert effective_condition(group, own) == expected


@pytest.mark.spec("knowledge-rule-15")
def test_rule15_media_ref_naming_a_supplied_media_id_is_repointed_on_create() -> None:
    content = create(create_request())
    (media,) = content.media
    assert content.actions.sms_messages[0].media_ref == media.reference_id


@pytest.mark.spec("knowledge-rule-15")
def test_rule15_client_id_field_repoints_on_append_too() -> None:
    base = create(create_request())
    content = append(
        base,
        media=[{"clientId": "new-photo", "mediaType": "IMAGE", "url": "https://x/b.png"}],
        spokenInstructions=[{"instructionText": "Look", "referenceMedia": ["new-photo"]}],
    )
    assert content.spoken_instructions[0].reference_media == [content.media[0].reference_id]


@pytest.mark.spec("knowledge-rule-15")
def test_rule15_a_reference_naming_no_media_item_is_refused() -> None:
    request = create_request(
        spokenInstructions=[{"instructionText": "Look", "referenceMedia": ["nowhere"]}]
    )
    with pytest.raises(InvalidInput, match="'nowhere'"):
        create(request)


@pytest.mark.spec("knowledge-rule-13")
def test_rule13_a_supplied_id_keeps_its_item_and_an_omitted_one_gets_a_fresh_id() -> None:
    base = create(create_request())
    kept = base.spoken_instructions[0].reference_id
    content = append(
        base,
        spokenInstructions=[
            {"referenceId": kept, "instructionText": "Stay very calm."},
            {"instructionText": "New"},
        ],
    )
    first, second = content.spoken_instructions
    assert (first.reference_id, first.instruction_text) == (kept, "Stay very calm.")
    assert re.fullmatch(FORMATS[Section.SPOKEN_INSTRUCTIONS], second.reference_id)
    assert second.reference_id not in content_ids(base)


@pytest.mark.spec("knowledge-rule-14")
def test_rule14_an_id_not_in_the_previous_version_is_refused_naming_it() -> None:
    base = create(create_request())
    with pytest.raises(InvalidInput, match="q-deadbeef"):
        append(base, questionList=[{"referenceId": "q-deadbeef", "questionText": "?"}])


@pytest.mark.spec("knowledge-rule-14")
def test_rule14_an_id_of_another_section_is_not_present_in_this_one() -> None:
    base = create(create_request())
    other = base.spoken_instructions[0].reference_id
    with pytest.raises(InvalidInput, match=other):
        append(base, questionList=[{"referenceId": other, "questionText": "?"}])


@pytest.mark.spec("knowledge-rule-13")
def test_rule13_a_grouped_question_may_move_to_the_root_keeping_its_id() -> None:
    base = create(create_request())
    grouped = base.question_list[0].related_questions[0].questions[0].reference_id
    content = append(base, questionList=[{"referenceId": grouped, "questionText": "Blue?"}])
    assert content.question_list[0].reference_id == grouped


def test_one_id_sent_for_two_items_is_refused() -> None:
    base = create(create_request())
    kept = base.spoken_instructions[0].reference_id
    with pytest.raises(InvalidInput, match="more than one item"):
        append(
            base,
            spokenInstructions=[
                {"referenceId": kept, "instructionText": "a"},
                {"referenceId": kept, "instructionText": "b"},
            ],
        )


@pytest.mark.spec("knowledge-rule-9")
def test_rule9_an_unresolved_link_target_refuses_the_write() -> None:
    request = create_request(actions={"links": [{"targetExternalId": "missing"}]})
    with pytest.raises(InvalidInput, match="'missing'"):
        create(request)


@pytest.mark.spec("knowledge-rule-10")
def test_rule10_link_target_fields_are_copied_from_the_resolved_target() -> None:
    (link,) = create(create_request()).actions.links
    assert (link.target_knowledge_id, link.target_document_name) == (41, "CPR Instructions")
    assert link.target_knowledge_type is KnowledgeType.INSTRUCTION_CARD


@pytest.mark.spec("knowledge-rule-2")
def test_rule2_a_section_left_out_of_an_append_is_replaced_by_nothing() -> None:
    base = create(create_request())
    content = append(base, questionList=[{"questionText": "Only this"}])
    assert content.spoken_instructions == [] and content.actions.cad_actions == []


@pytest.mark.spec("knowledge-rule-4")
def test_rule4_flags_that_differ_from_the_create_are_refused_naming_them() -> None:
    stored = ApiControl.model_validate({"links": False})
    with pytest.raises(InvalidInput, match="links"):
        check_api_control(ApiControl.model_validate({}), stored)
    check_api_control(ApiControl.model_validate({"links": False}), stored)


@pytest.mark.spec("knowledge-rule-1")
def test_rule1_a_flag_left_out_means_the_api_owns_the_section() -> None:
    control = ApiControl.model_validate({"media": False})
    assert control.owner(Section.MEDIA) is Owner.SERVICE
    assert control.owner(Section.QUESTION_LIST) is Owner.API
    assert control.service_sections() == [Section.MEDIA]


@pytest.mark.parametrize("section", list(Section))
@pytest.mark.spec("knowledge-rule-3")
def test_rule3_sending_a_service_owned_section_on_append_is_refused_naming_it(
    section: Section,
) -> None:
    flags = {section.value: False}
    payload: dict[str, Any] = {"apiControl": flags}
    if section.payload_path.startswith("actions."):
        payload["actions"] = {section.value: []}
    else:
        payload[section.value] = []
    request = KnowledgeAppendRequest.model_validate(payload)
    with pytest.raises(InvalidInput, match=re.escape(section.payload_path)):
        check_ownership(request, ApiControl.model_validate(flags))


def test_fresh_ids_avoid_every_id_already_in_the_entry() -> None:
    taken = {"q-00000001"}
    draws: Callable[[], str] = iter(["00000001", "00000002"]).__next__
    assert ReferenceIds(taken, draws).fresh(Section.QUESTION_LIST) == "q-00000002"
