"""How the content of a new version is built from a request: pure logic, no I/O.

Spec rules ("Knowledge rules (create, append, read)"):
  1-4   ownership: API-owned sections are replaced whole by each append; service-owned ones
        are carried forward (with their service-side edits) and refused in append payloads;
        apiControl is immutable (checked in psap.knowledge.authoring).
  5     effective display condition: a grouped question's condition stacks on its group's.
  6-10  links name targets by externalId; the caller resolves them (one read per write) and
        passes the targets in; the target* fields are copied into the stored link.
  11-14 referenceIds: fresh on create (supplied ones ignored); on append a supplied id keeps
        its item, an omitted one gets a fresh id, an unknown one is refused.
  15    referenceMedia / mediaRef naming a media client id are repointed at the md- id.
"""

import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from psap.errors import InvalidInput
from psap.knowledge.content import (
    CadAction,
    CadActionInput,
    DispatchTrigger,
    DispatchTriggerInput,
    Link,
    LinkInput,
    Media,
    MediaInput,
    Question,
    QuestionInput,
    RelatedQuestionGroup,
    RequestModel,
    RootQuestion,
    RootQuestionInput,
    Section,
    SectionItem,
    SectionsInput,
    SmsMessage,
    SmsMessageInput,
    SpokenInstruction,
    SpokenInstructionInput,
    VersionContent,
    all_questions,
)
from psap.knowledge.models import KnowledgeType

# Media are built first: the other sections' references are repointed at their new ids.
BUILD_ORDER = (Section.MEDIA, *(section for section in Section if section is not Section.MEDIA))


@dataclass(frozen=True)
class LinkTarget:
    """What a link's targetExternalId resolved to when the link was written."""

    knowledge_id: int
    name: str
    knowledge_type: KnowledgeType
    provider: str


def random_hex() -> str:
    return secrets.token_hex(4)


class ReferenceIds:
    """Hands out fresh referenceIds (`{prefix}-{8 lowercase hex}`) unique within the entry."""

    def __init__(self, used: Iterable[str], draw: Callable[[], str] = random_hex) -> None:
        self._used = set(used)
        self._draw = draw

    def fresh(self, section: Section) -> str:
        while True:
            candidate = f"{section.prefix}-{self._draw()}"
            if candidate not in self._used:
                self._used.add(candidate)
                return candidate


def effective_condition(group: str | None, own: str | None) -> str | None:
    """Rule 5: a grouped question's condition stacked on its group's (both must hold)."""
    group, own = (group or "").strip() or None, (own or "").strip() or None
    if group and own:
        return f"({group}) AND ({own})"
    return own or group


def section_ids(content: VersionContent, section: Section) -> set[str]:
    if section is Section.QUESTION_LIST:
        return {question.reference_id for question in all_questions(content.question_list)}
    return {item.reference_id for item in content.items(section)}


def content_ids(content: VersionContent) -> set[str]:
    return {found for section in Section for found in section_ids(content, section)}


@dataclass
class _Write:
    """The state of one write while its sections are converted."""

    ids: ReferenceIds
    targets: Mapping[str, LinkTarget]
    # None on create: supplied referenceIds are ignored. Otherwise each section's ids in the
    # content the write starts from (the previous version, with service-side edits).
    known_ids: Mapping[Section, set[str]] | None
    client_media: dict[str, str] = field(default_factory=dict)  # client id -> md- id
    seen_ids: set[str] = field(default_factory=set)
    unknown_ids: list[str] = field(default_factory=list)
    repeated_ids: list[str] = field(default_factory=list)
    unresolved_targets: list[str] = field(default_factory=list)

    def reference_id(self, section: Section, supplied: str | None) -> str:
        if self.known_ids is None or supplied is None:
            return self.ids.fresh(section)
        if supplied in self.seen_ids:
            self.repeated_ids.append(supplied)
        self.seen_ids.add(supplied)
        if supplied not in self.known_ids[section]:
            self.unknown_ids.append(f"{supplied} ({section.payload_path})")
        return supplied


def _question(item: QuestionInput, write: _Write, group_condition: str | None) -> Question:
    return Question(
        reference_id=write.reference_id(Section.QUESTION_LIST, item.reference_id),
        question_text=item.question_text,
        display_criteria=item.display_criteria,
        effective_display_criteria=effective_condition(group_condition, item.display_criteria),
        is_critical=item.is_critical,
        is_optional=item.is_optional,
        reference_media=list(item.reference_media),
    )


def _root_question(item: RootQuestionInput, write: _Write) -> RootQuestion:
    own = _question(item, write, None)
    groups = [
        RelatedQuestionGroup(
            label=group.label,
            display_criteria=group.display_criteria,
            questions=[
                _question(inner, write, group.display_criteria) for inner in group.questions
            ],
        )
        for group in item.related_questions
    ]
    return RootQuestion(**own.model_dump(), related_questions=groups)


def _link(item: LinkInput, write: _Write) -> Link | None:
    target = write.targets.get(item.target_external_id)
    if target is None:
        write.unresolved_targets.append(item.target_external_id)
        return None
    # Rule 10: the target* fields are what the target was now; they never change afterwards.
    return Link(
        reference_id=write.reference_id(Section.LINKS, item.reference_id),
        target_external_id=item.target_external_id,
        label=item.label,
        target_knowledge_id=target.knowledge_id,
        target_document_name=target.name,
        target_knowledge_type=target.knowledge_type,
        target_provider=target.provider,
    )


def _media(item: MediaInput, write: _Write) -> Media:
    # On create every supplied referenceId is a client id (rule 11 ignores it as an id).
    supplied = item.reference_id if write.known_ids is not None else None
    reference_id = write.reference_id(Section.MEDIA, supplied)
    client_ids = [item.client_id] if item.client_id else []
    if write.known_ids is None and item.reference_id:
        client_ids.append(item.reference_id)
    for client_id in client_ids:
        if client_id in write.client_media and write.client_media[client_id] != reference_id:
            raise InvalidInput(f"media client id '{client_id}' names more than one media item")
        write.client_media[client_id] = reference_id
    return Media(
        reference_id=reference_id,
        media_type=item.media_type,
        url=item.url,
        caption=item.caption,
        mime_type=item.mime_type,
    )


def convert_section(section: Section, items: Sequence[RequestModel], write: _Write) -> list[Any]:
    """Sent items -> stored items, with referenceIds assigned (rules 11-14)."""
    converted: list[Any] = []
    for item in items:
        match item:
            case RootQuestionInput():
                converted.append(_root_question(item, write))
            case SpokenInstructionInput():
                converted.append(
                    SpokenInstruction(
                        reference_id=write.reference_id(section, item.reference_id),
                        instruction_text=item.instruction_text,
                        is_critical=item.is_critical,
                        reference_media=list(item.reference_media),
                    )
                )
            case CadActionInput():
                converted.append(
                    CadAction(
                        reference_id=write.reference_id(section, item.reference_id),
                        action_type=item.action_type,
                        description=item.description,
                        parameters=dict(item.parameters),
                    )
                )
            case SmsMessageInput():
                converted.append(
                    SmsMessage(
                        reference_id=write.reference_id(section, item.reference_id),
                        message_text=item.message_text,
                        recipient=item.recipient,
                        media_ref=item.media_ref,
                    )
                )
            case DispatchTriggerInput():
                converted.append(
                    DispatchTrigger(
                        reference_id=write.reference_id(section, item.reference_id),
                        condition=item.condition,
                        determinant_code=item.determinant_code,
                        response_plan=item.response_plan,
                        priority=item.priority,
                    )
                )
            case LinkInput():
                link = _link(item, write)
                if link is not None:
                    converted.append(link)
            case MediaInput():
                converted.append(_media(item, write))
            case _:
                raise TypeError(f"not an item of {section}: {type(item).__name__}")
    return converted


def build_content(
    sent: Mapping[Section, Sequence[RequestModel]],
    base: VersionContent,
    targets: Mapping[str, LinkTarget],
    *,
    creating: bool,
    draw: Callable[[], str] = random_hex,
) -> VersionContent:
    """The content of a new version: `base` (the content the write starts from: the previous
    version with its service-side edits, or nothing on create) with every section in `sent`
    replaced whole by the converted items. Refuses the whole write (InvalidInput) on an
    unknown or repeated referenceId, an unresolved link target or a dangling media reference.
    """
    write = _Write(
        ids=ReferenceIds(content_ids(base), draw),
        targets=targets,
        known_ids=None
        if creating
        else {section: section_ids(base, section) for section in Section},
    )
    content = base
    for section in BUILD_ORDER:
        if section in sent:
            content = content.replaced(section, convert_section(section, sent[section], write))
    if write.unknown_ids:
        raise InvalidInput(
            "referenceId not present in the previous version: " + ", ".join(write.unknown_ids)
        )
    if write.repeated_ids:
        raise InvalidInput(
            "referenceId sent for more than one item: " + ", ".join(sorted(set(write.repeated_ids)))
        )
    if write.unresolved_targets:
        names = ", ".join(f"'{name}'" for name in dict.fromkeys(write.unresolved_targets))
        raise InvalidInput(
            f"actions.links targetExternalId not loaded in this tenant under the same provider: "
            f"{names}"
        )
    return _repoint_media(content, set(sent), write.client_media)


def _repoint_media(
    content: VersionContent, written: set[Section], client_media: Mapping[str, str]
) -> VersionContent:
    """Rule 15 for the sections this write sent; for every section, each reference must name
    a media item of the resulting version."""
    media_ids = {item.reference_id for item in content.media}
    dangling: list[str] = []

    def point(reference: str, section: Section, owner: str, *, field_name: str) -> str:
        if section in written and reference in client_media:
            return client_media[reference]
        if reference not in media_ids:
            dangling.append(f"'{reference}' ({field_name} of {owner})")
        return reference

    def question(item: Question) -> Question:
        refs = [
            point(ref, Section.QUESTION_LIST, item.reference_id, field_name="referenceMedia")
            for ref in item.reference_media
        ]
        return item.model_copy(update={"reference_media": refs})

    roots = []
    for root in content.question_list:
        groups = [
            group.model_copy(update={"questions": [question(inner) for inner in group.questions]})
            for group in root.related_questions
        ]
        roots.append(question(root).model_copy(update={"related_questions": groups}))
    instructions = [
        item.model_copy(
            update={
                "reference_media": [
                    point(
                        ref,
                        Section.SPOKEN_INSTRUCTIONS,
                        item.reference_id,
                        field_name="referenceMedia",
                    )
                    for ref in item.reference_media
                ]
            }
        )
        for item in content.spoken_instructions
    ]
    messages = [
        item
        if item.media_ref is None
        else item.model_copy(
            update={
                "media_ref": point(
                    item.media_ref, Section.SMS_MESSAGES, item.reference_id, field_name="mediaRef"
                )
            }
        )
        for item in content.actions.sms_messages
    ]
    if dangling:
        raise InvalidInput(
            "media reference names no media item of the version: " + ", ".join(dangling)
        )
    return content.model_copy(
        update={
            "question_list": roots,
            "spoken_instructions": instructions,
            "actions": content.actions.model_copy(update={"sms_messages": messages}),
        }
    )


def sent_sections(
    request: SectionsInput, sections: Iterable[Section]
) -> dict[Section, list[RequestModel]]:
    """The given sections as sent; a section left out counts as sent empty (replaced whole)."""
    return {section: list(request.supplied(section) or []) for section in sections}


def overlay(
    content: VersionContent, edits: Mapping[Section, Sequence[SectionItem]]
) -> VersionContent:
    """A version's content with the service-side edits of its service-owned sections."""
    for section, items in edits.items():
        content = content.replaced(section, list(items))
    return content
