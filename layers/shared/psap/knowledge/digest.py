"""Section digests of the knowledge card: plain text meant for an assistant to read.

Pure functions of a version's content: one digest per section, with the item count, the
referenceIds (so an assistant can cite an item) and, for questions, the effective display
condition (rule 5). A digest is capped in length; what is left out is counted.
"""

import hashlib
import json
from collections.abc import Sequence

from psap.knowledge.content import (
    CadAction,
    DispatchTrigger,
    Link,
    Media,
    Question,
    RootQuestion,
    Section,
    SectionItem,
    SmsMessage,
    SpokenInstruction,
    all_questions,
)

DIGEST_MAX_CHARS = 6000


def content_hash(items: Sequence[SectionItem]) -> str:
    """sha256 of the section's items in canonical JSON: equal content, equal hash."""
    canonical = json.dumps(
        [item.model_dump(mode="json", by_alias=True) for item in items],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def item_count(section: Section, items: Sequence[SectionItem]) -> int:
    """Items with a referenceId: grouped questions count as questions."""
    if section is Section.QUESTION_LIST:
        return len(all_questions([item for item in items if isinstance(item, RootQuestion)]))
    return len(items)


def section_digest(section: Section, items: Sequence[SectionItem]) -> str:
    lines = [_summary(section, items)]
    match section:
        case Section.QUESTION_LIST:
            lines += _question_lines([item for item in items if isinstance(item, RootQuestion)])
        case _:
            lines += [f"{number}. {_item_line(item)}" for number, item in enumerate(items, start=1)]
    return _capped(lines)


def _summary(section: Section, items: Sequence[SectionItem]) -> str:
    if section is Section.QUESTION_LIST:
        roots = [item for item in items if isinstance(item, RootQuestion)]
        groups = sum(len(root.related_questions) for root in roots)
        grouped = item_count(section, items) - len(roots)
        return (
            f"{_count(len(roots), 'root question')}, {_count(grouped, 'related question')} "
            f"in {_count(groups, 'group')}. "
            "A related question is shown only when its group's condition and its own hold."
        )
    names = {
        Section.SPOKEN_INSTRUCTIONS: "spoken instructions",
        Section.CAD_ACTIONS: "CAD actions",
        Section.SMS_MESSAGES: "SMS messages",
        Section.DISPATCH_TRIGGERS: "dispatch triggers",
        Section.LINKS: "links to other knowledge",
        Section.MEDIA: "media items",
    }
    return f"{len(items)} {names[section]}." if items else f"No {names[section]}."


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def _question_text(question: Question) -> str:
    text = f"[{question.reference_id}] {question.question_text}"
    if question.is_critical:
        text += " (critical)"
    if question.is_optional:
        text += " (optional)"
    if question.effective_display_criteria:
        text += f" Shown when: {question.effective_display_criteria}."
    if question.reference_media:
        text += f" Media: {', '.join(question.reference_media)}."
    return text


def _question_lines(roots: Sequence[RootQuestion]) -> list[str]:
    lines: list[str] = []
    for number, root in enumerate(roots, start=1):
        lines.append(f"{number}. {_question_text(root)}")
        for group_number, group in enumerate(root.related_questions, start=1):
            title = f" '{group.label}'" if group.label else ""
            condition = (
                f" (group shown when: {group.display_criteria})" if group.display_criteria else ""
            )
            lines.append(f"   Related group {number}.{group_number}{title}{condition}:")
            for inner_number, question in enumerate(group.questions, start=1):
                lines.append(
                    f"   {number}.{group_number}.{inner_number}. {_question_text(question)}"
                )
    return lines


def _item_line(item: SectionItem) -> str:
    match item:
        case SpokenInstruction():
            critical = " (critical)" if item.is_critical else ""
            media = f" Media: {', '.join(item.reference_media)}." if item.reference_media else ""
            return f"[{item.reference_id}]{critical} {item.instruction_text}{media}"
        case CadAction():
            details = ", ".join(f"{key}={value}" for key, value in sorted(item.parameters.items()))
            text = f"[{item.reference_id}] {item.action_type}"
            text += f": {item.description}" if item.description else ""
            return text + (f" ({details})" if details else "")
        case SmsMessage():
            to = f" to {item.recipient}" if item.recipient else ""
            media = f" Media: {item.media_ref}." if item.media_ref else ""
            return f"[{item.reference_id}]{to}: {item.message_text}{media}"
        case DispatchTrigger():
            parts = [
                f"{label} {value}"
                for label, value in (
                    ("determinant", item.determinant_code),
                    ("response plan", item.response_plan),
                    ("priority", item.priority),
                )
                if value
            ]
            outcome = f": {', '.join(parts)}" if parts else ""
            return f"[{item.reference_id}] When {item.condition}{outcome}"
        case Link():
            label = f"{item.label} -> " if item.label else ""
            return (
                f"[{item.reference_id}] {label}'{item.target_document_name}' "
                f"({item.target_knowledge_type.value}, knowledge {item.target_knowledge_id}, "
                f"externalId {item.target_external_id})"
            )
        case Media():
            caption = f" {item.caption}" if item.caption else ""
            return f"[{item.reference_id}] {item.media_type.value}{caption} <{item.url}>"
        case _:
            return f"[{item.reference_id}]"


def _capped(lines: list[str]) -> str:
    kept: list[str] = []
    length = 0
    for index, line in enumerate(lines):
        if length + len(line) + 1 > DIGEST_MAX_CHARS:
            kept.append(f"... {len(lines) - index} more lines not shown.")
            break
        kept.append(line)
        length += len(line) + 1
    return "\n".join(kept)
