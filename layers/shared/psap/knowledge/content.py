"""The content of a knowledge version: its sections, their items, and the section ownership.

The spec leaves the payload to us. A version carries these sections, each a list of items:

  questionList          root questions; each may hold `relatedQuestions` groups of questions
  spokenInstructions    what the call-taker reads to the caller
  actions.cadActions    actions proposed to the CAD system
  actions.smsMessages   text messages to send
  actions.dispatchTriggers  conditions that recommend a dispatch
  actions.links         links to other knowledge entries, by the target's `externalId`
  media                 images, videos, audio and documents the other items refer to

`apiControl` has one boolean flag per section: true = the API owns it (every append replaces
it whole), false = the service owns it (edited inside the service, carried forward by appends,
refused in append payloads). Two families of models: `*Input` (what a partner sends: strict,
unknown fields refused, referenceId optional) and the stored/returned items (referenceId set).
"""

from enum import StrEnum
from typing import Annotated

from pydantic import ConfigDict, Field, StrictBool, StringConstraints

from psap.knowledge.models import ExternalKnowledgeDto, KnowledgeType
from psap.models import FreeText, Timestamp, WireModel
from psap.models import RequestModel as BaseRequestModel


class Section(StrEnum):
    """A content section, named as its `apiControl` flag."""

    QUESTION_LIST = "questionList"
    SPOKEN_INSTRUCTIONS = "spokenInstructions"
    CAD_ACTIONS = "cadActions"
    SMS_MESSAGES = "smsMessages"
    DISPATCH_TRIGGERS = "dispatchTriggers"
    LINKS = "links"
    MEDIA = "media"

    @property
    def prefix(self) -> str:
        """The referenceId prefix of the section's items (spec table)."""
        return _PREFIXES[self]

    @property
    def payload_path(self) -> str:
        """Where the section sits in a payload: action sets are under `actions`."""
        return f"actions.{self.value}" if self in ACTION_SECTIONS else self.value


_PREFIXES = {
    Section.QUESTION_LIST: "q",
    Section.SPOKEN_INSTRUCTIONS: "si",
    Section.CAD_ACTIONS: "ca",
    Section.SMS_MESSAGES: "sms",
    Section.DISPATCH_TRIGGERS: "dt",
    Section.LINKS: "lk",
    Section.MEDIA: "md",
}
ACTION_SECTIONS = (
    Section.CAD_ACTIONS,
    Section.SMS_MESSAGES,
    Section.DISPATCH_TRIGGERS,
    Section.LINKS,
)


class Owner(StrEnum):
    API = "API"
    SERVICE = "SERVICE"


class MediaType(StrEnum):
    IMAGE = "IMAGE"
    VIDEO = "VIDEO"
    AUDIO = "AUDIO"
    DOCUMENT = "DOCUMENT"


class ProcessingStatus(StrEnum):
    PENDING = "PENDING"
    READY = "READY"
    FAILED = "FAILED"


# Free text (tab and newlines allowed, psap.text); every other string is a single line.
Text = Annotated[FreeText, StringConstraints(min_length=1, max_length=4000)]
ShortText = Annotated[str, StringConstraints(min_length=1, max_length=300)]
ReferenceId = Annotated[str, StringConstraints(min_length=1, max_length=64)]
Condition = Annotated[FreeText, StringConstraints(max_length=2000)]


class RequestModel(BaseRequestModel):
    """A knowledge request shape: camelCase only, unknown fields refused (400 naming them),
    the text policy on every string (psap.models.RequestModel)."""

    model_config = ConfigDict(validate_by_name=False)


# ---------------------------------------------------------------- ownership


class ApiControl(RequestModel):
    """One flag per section: true = owned by the API, false = owned by the service.

    Sent on every create and append; set by the create and immutable afterwards (an append
    whose flags differ is refused). A flag left out means true."""

    question_list: StrictBool = True
    spoken_instructions: StrictBool = True
    cad_actions: StrictBool = True
    sms_messages: StrictBool = True
    dispatch_triggers: StrictBool = True
    links: StrictBool = True
    media: StrictBool = True

    def owner(self, section: Section) -> Owner:
        owned_by_api = bool(getattr(self, _FLAG_FIELDS[section]))
        return Owner.API if owned_by_api else Owner.SERVICE

    def service_sections(self) -> list[Section]:
        return [section for section in Section if self.owner(section) is Owner.SERVICE]


_FLAG_FIELDS = {
    Section.QUESTION_LIST: "question_list",
    Section.SPOKEN_INSTRUCTIONS: "spoken_instructions",
    Section.CAD_ACTIONS: "cad_actions",
    Section.SMS_MESSAGES: "sms_messages",
    Section.DISPATCH_TRIGGERS: "dispatch_triggers",
    Section.LINKS: "links",
    Section.MEDIA: "media",
}


# ---------------------------------------------------------------- items as sent

_REFERENCE_ID_IN = (
    "On create: ignored and not stored (a media item's value is its client id, see media). "
    "On append: an id of the previous version updates that item in place; omit it to add "
    "a new item; an id the previous version does not have is refused with 400."
)
_READ_ONLY = "Read-only: computed by the service; accepted and ignored on input."


class QuestionInput(RequestModel):
    reference_id: ReferenceId | None = Field(default=None, description=_REFERENCE_ID_IN)
    question_text: Text
    display_criteria: Condition | None = Field(
        default=None, description="When the question is shown (the partner's own expression)"
    )
    is_critical: StrictBool = False
    is_optional: StrictBool = False
    reference_media: list[ReferenceId] = Field(
        default_factory=list, description="Media shown with the question: md- ids or client ids"
    )
    effective_display_criteria: Condition | None = Field(default=None, description=_READ_ONLY)


class RelatedQuestionGroupInput(RequestModel):
    label: ShortText | None = None
    display_criteria: Condition | None = Field(
        default=None, description="Condition of the whole group; each question's stacks on it"
    )
    questions: list[QuestionInput] = Field(default_factory=list)


class RootQuestionInput(QuestionInput):
    related_questions: list[RelatedQuestionGroupInput] = Field(default_factory=list)


class SpokenInstructionInput(RequestModel):
    reference_id: ReferenceId | None = Field(default=None, description=_REFERENCE_ID_IN)
    instruction_text: Text
    is_critical: StrictBool = False
    reference_media: list[ReferenceId] = Field(default_factory=list)


class CadActionInput(RequestModel):
    reference_id: ReferenceId | None = Field(default=None, description=_REFERENCE_ID_IN)
    action_type: ShortText = Field(description="What the CAD should do, e.g. SET_PRIORITY")
    description: Text | None = None
    parameters: dict[str, str] = Field(default_factory=dict)


class SmsMessageInput(RequestModel):
    reference_id: ReferenceId | None = Field(default=None, description=_REFERENCE_ID_IN)
    message_text: Text
    recipient: ShortText | None = Field(default=None, description="e.g. CALLER")
    media_ref: ReferenceId | None = Field(
        default=None, description="A media item sent with the message: md- id or client id"
    )


class DispatchTriggerInput(RequestModel):
    reference_id: ReferenceId | None = Field(default=None, description=_REFERENCE_ID_IN)
    condition: Condition = Field(min_length=1)
    determinant_code: ShortText | None = None
    response_plan: ShortText | None = None
    priority: ShortText | None = None


class LinkInput(RequestModel):
    reference_id: ReferenceId | None = Field(default=None, description=_REFERENCE_ID_IN)
    target_external_id: ShortText = Field(
        description="The target's own externalId under the same provider, in the same tenant "
        "(published or not). Resolved on every write; unresolved = 400 for the whole request."
    )
    label: ShortText | None = None
    target_knowledge_id: int | None = Field(default=None, description=_READ_ONLY)
    target_document_name: str | None = Field(default=None, description=_READ_ONLY)
    target_knowledge_type: KnowledgeType | None = Field(default=None, description=_READ_ONLY)
    target_provider: str | None = Field(default=None, description=_READ_ONLY)


class MediaInput(RequestModel):
    reference_id: ReferenceId | None = Field(
        default=None,
        description="On create: a client id that referenceMedia/mediaRef may name; they are "
        "repointed at the md- id the service assigns. On append: as for every item.",
    )
    client_id: ReferenceId | None = Field(
        default=None,
        description="A client id for a new media item (create or append), never stored: "
        "referenceMedia/mediaRef naming it are repointed at the assigned md- id.",
    )
    media_type: MediaType
    url: Annotated[str, StringConstraints(min_length=1, max_length=2000)]
    caption: Text | None = None
    mime_type: ShortText | None = None


class ActionsInput(RequestModel):
    cad_actions: list[CadActionInput] | None = None
    sms_messages: list[SmsMessageInput] | None = None
    dispatch_triggers: list[DispatchTriggerInput] | None = None
    links: list[LinkInput] | None = None


class SectionsInput(RequestModel):
    """The content sections of a create or append. A section left out (or null) is empty
    when the API owns it; a service-owned section must be left out of an append."""

    question_list: list[RootQuestionInput] | None = None
    spoken_instructions: list[SpokenInstructionInput] | None = None
    actions: ActionsInput | None = None
    media: list[MediaInput] | None = None

    def supplied(self, section: Section) -> list[RequestModel] | None:
        """The section's items as sent; None when the section was not sent."""
        if section in ACTION_SECTIONS:
            if self.actions is None:
                return None
            items: list[RequestModel] | None = getattr(self.actions, _FLAG_FIELDS[section])
            return items
        sent: list[RequestModel] | None = getattr(self, _FLAG_FIELDS[section])
        return sent


class KnowledgeCreateRequest(SectionsInput):
    name: ShortText
    description: Text | None = None
    provider: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    knowledge_type: KnowledgeType
    external_id: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = Field(
        default=None, description="Unique per (tenant, provider); links name targets by it"
    )
    api_control: ApiControl = Field(description="Section ownership; immutable after create")
    publish: StrictBool = Field(default=False, description="Publish version 1 at once")


class KnowledgeAppendRequest(SectionsInput):
    api_control: ApiControl = Field(description="Must equal the flags set on create")
    name: ShortText | None = Field(default=None, description="A new name; omit to keep it")
    description: Text | None = Field(default=None, description="A new description; omit to keep")
    publish: StrictBool = Field(default=False, description="Publish the new version at once")


# ---------------------------------------------------------------- items as stored and returned


class Question(WireModel):
    reference_id: str = Field(description="q-{8 hex}, stable across versions")
    question_text: str
    display_criteria: str | None = None
    effective_display_criteria: str | None = Field(
        default=None,
        description="The condition that really applies: a root question's own; a grouped "
        "question's stacked on its group's, `(group) AND (own)`",
    )
    is_critical: bool = False
    is_optional: bool = False
    reference_media: list[str] = Field(default_factory=list)


class RelatedQuestionGroup(WireModel):
    label: str | None = None
    display_criteria: str | None = None
    questions: list[Question] = Field(default_factory=list)


class RootQuestion(Question):
    related_questions: list[RelatedQuestionGroup] = Field(default_factory=list)


class SpokenInstruction(WireModel):
    reference_id: str = Field(description="si-{8 hex}")
    instruction_text: str
    is_critical: bool = False
    reference_media: list[str] = Field(default_factory=list)


class CadAction(WireModel):
    reference_id: str = Field(description="ca-{8 hex}")
    action_type: str
    description: str | None = None
    parameters: dict[str, str] = Field(default_factory=dict)


class SmsMessage(WireModel):
    reference_id: str = Field(description="sms-{8 hex}")
    message_text: str
    recipient: str | None = None
    media_ref: str | None = None


class DispatchTrigger(WireModel):
    reference_id: str = Field(description="dt-{8 hex}")
    condition: str
    determinant_code: str | None = None
    response_plan: str | None = None
    priority: str | None = None


class Link(WireModel):
    reference_id: str = Field(description="lk-{8 hex}")
    target_external_id: str
    label: str | None = None
    target_knowledge_id: int = Field(description="Resolved and stored at write time")
    target_document_name: str = Field(description="The target's name at write time")
    target_knowledge_type: KnowledgeType = Field(description="The target's type at write time")
    target_provider: str = Field(description="The provider the target was resolved under")


class Media(WireModel):
    reference_id: str = Field(description="md-{8 hex}")
    media_type: MediaType
    url: str
    caption: str | None = None
    mime_type: str | None = None


class Actions(WireModel):
    cad_actions: list[CadAction] = Field(default_factory=list)
    sms_messages: list[SmsMessage] = Field(default_factory=list)
    dispatch_triggers: list[DispatchTrigger] = Field(default_factory=list)
    links: list[Link] = Field(default_factory=list)


type SectionItem = (
    RootQuestion | SpokenInstruction | CadAction | SmsMessage | DispatchTrigger | (Link | Media)
)


class VersionContent(WireModel):
    """Every section of one version, as stored and as returned."""

    question_list: list[RootQuestion] = Field(default_factory=list)
    spoken_instructions: list[SpokenInstruction] = Field(default_factory=list)
    actions: Actions = Field(default_factory=Actions)
    media: list[Media] = Field(default_factory=list)

    def items(self, section: Section) -> list[SectionItem]:
        if section in ACTION_SECTIONS:
            action_items: list[SectionItem] = getattr(self.actions, _FLAG_FIELDS[section])
            return action_items
        section_items: list[SectionItem] = getattr(self, _FLAG_FIELDS[section])
        return section_items

    def replaced(self, section: Section, items: list[SectionItem]) -> "VersionContent":
        """A copy with one section's items replaced."""
        field = _FLAG_FIELDS[section]
        if section in ACTION_SECTIONS:
            actions = self.actions.model_copy(update={field: list(items)})
            return self.model_copy(update={"actions": actions})
        return self.model_copy(update={field: list(items)})


def all_questions(questions: list[RootQuestion]) -> list[Question]:
    """Root questions and the questions of their groups, in reading order."""
    found: list[Question] = []
    for root in questions:
        found.append(root)
        for group in root.related_questions:
            found.extend(group.questions)
    return found


# ---------------------------------------------------------------- the full entry


class KnowledgeEntryDto(ExternalKnowledgeDto):
    """A knowledge entry with the full content of one version, as stored at write time."""

    latest_version: int = Field(description="Number of the latest version (0: none yet)")
    version: int | None = Field(description="Number of the version shown; null when none yet")
    version_id: int | None = Field(description="The version record's own integer id")
    version_created_at: Timestamp | None = Field(description="When this version was stored")
    published: bool = Field(description="Whether this version is the published one")
    api_control: ApiControl | None = Field(description="Section ownership set on create")
    question_list: list[RootQuestion] = Field(default_factory=list)
    spoken_instructions: list[SpokenInstruction] = Field(default_factory=list)
    actions: Actions = Field(default_factory=Actions)
    media: list[Media] = Field(default_factory=list)
