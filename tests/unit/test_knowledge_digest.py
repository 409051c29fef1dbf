"""Section digests of the knowledge card (psap.knowledge.digest): what an assistant reads."""

import pytest

from psap.knowledge.content import (
    Link,
    Question,
    RelatedQuestionGroup,
    RootQuestion,
    Section,
    SpokenInstruction,
)
from psap.knowledge.digest import DIGEST_MAX_CHARS, content_hash, item_count, section_digest
from psap.knowledge.models import KnowledgeType


def questions() -> list[RootQuestion]:
    grouped = Question(
        reference_id="q-00000002",
        question_text="Is the patient blue?",
        display_criteria="age > 1",
        effective_display_criteria="(breathing == 'no') AND (age > 1)",
    )
    group = RelatedQuestionGroup(
        label="Not breathing", display_criteria="breathing == 'no'", questions=[grouped]
    )
    root = RootQuestion(
        reference_id="q-00000001",
        question_text="Is the patient breathing?",
        is_critical=True,
        related_questions=[group],
    )
    return [root]


@pytest.mark.spec("knowledge-rule-5")
def test_rule5_question_digest_shows_each_questions_effective_condition_and_id() -> None:
    digest = section_digest(Section.QUESTION_LIST, questions())
    assert "1 root question, 1 related question in 1 group" in digest
    assert "[q-00000001] Is the patient breathing? (critical)" in digest
    assert "Shown when: (breathing == 'no') AND (age > 1)." in digest
    assert "'Not breathing' (group shown when: breathing == 'no')" in digest


def test_item_count_counts_grouped_questions() -> None:
    assert item_count(Section.QUESTION_LIST, questions()) == 2


def test_link_digest_names_the_target_as_stored() -> None:
    link = Link(
        reference_id="lk-00000001",
        target_external_id="ic-cpr",
        label="Start CPR",
        target_knowledge_id=9,
        target_document_name="CPR Instructions",
        target_knowledge_type=KnowledgeType.INSTRUCTION_CARD,
        target_provider="NENA",
    )
    digest = section_digest(Section.LINKS, [link])
    assert "[lk-00000001] Start CPR -> 'CPR Instructions' (INSTRUCTION_CARD, knowledge 9" in digest


def test_empty_section_says_so() -> None:
    assert section_digest(Section.MEDIA, []) == "No media items."


def test_content_hash_is_equal_for_equal_items_and_differs_otherwise() -> None:
    first = [SpokenInstruction(reference_id="si-00000001", instruction_text="Stay calm.")]
    same = [SpokenInstruction(reference_id="si-00000001", instruction_text="Stay calm.")]
    other = [SpokenInstruction(reference_id="si-00000001", instruction_text="Stay here.")]
    assert content_hash(first) == content_hash(same)
    assert content_hash(first) != content_hash(other)
    assert content_hash(first).startswith("sha256:") and len(content_hash(first)) == 71


def test_a_long_section_is_capped_and_says_how_much_is_left_out() -> None:
    many = [
        SpokenInstruction(reference_id=f"si-{n:08x}", instruction_text="x" * 100)
        for n in range(500)
    ]
    digest = section_digest(Section.SPOKEN_INSTRUCTIONS, many)
    assert len(digest) <= DIGEST_MAX_CHARS + 100
    assert digest.endswith("more lines not shown.")
