"""Reading knowledge entries: the full entry of a version (GET /{knowledgeId}) and the
current content a write or a digest starts from (latest version + service-side edits)."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter

from psap.config import knowledge_content_bucket
from psap.errors import NotFound
from psap.knowledge import store
from psap.knowledge.content import (
    ApiControl,
    CadAction,
    DispatchTrigger,
    KnowledgeEntryDto,
    Link,
    Media,
    RootQuestion,
    Section,
    SectionItem,
    SmsMessage,
    SpokenInstruction,
    VersionContent,
)
from psap.knowledge.records import (
    NO_VERSION,
    EditRecord,
    KnowledgeEntry,
    KnowledgeVersion,
    StoredDocument,
    VersionRecord,
)
from psap.knowledge.versioning import overlay

# How each section's stored items are read back.
ITEM_ADAPTERS: dict[Section, TypeAdapter[list[Any]]] = {
    Section.QUESTION_LIST: TypeAdapter(list[RootQuestion]),
    Section.SPOKEN_INSTRUCTIONS: TypeAdapter(list[SpokenInstruction]),
    Section.CAD_ACTIONS: TypeAdapter(list[CadAction]),
    Section.SMS_MESSAGES: TypeAdapter(list[SmsMessage]),
    Section.DISPATCH_TRIGGERS: TypeAdapter(list[DispatchTrigger]),
    Section.LINKS: TypeAdapter(list[Link]),
    Section.MEDIA: TypeAdapter(list[Media]),
}


@dataclass(frozen=True)
class ServiceEdit:
    """The service-side edit of one service-owned section."""

    section: Section
    items: list[SectionItem]
    edited_at: datetime
    edited_by: str
    note: str | None


@dataclass(frozen=True)
class VersionDocument:
    """What a version stores, as read back: the name, description and content it was
    written with (the stored JSON also holds its apiControl and edited sections)."""

    name: str
    description: str | None
    content: VersionContent


def document_json(
    name: str,
    description: str | None,
    control: ApiControl,
    *,
    content: VersionContent,
    edited_sections: Sequence[Section],
) -> dict[str, Any]:
    """What a version stores (compressed): its metadata, ownership and content."""
    return {
        "name": name,
        "description": description,
        "apiControl": control.model_dump(by_alias=True),
        "content": content.model_dump(mode="json", by_alias=True),
        "editedSections": [section.value for section in edited_sections],
    }


def parse_document(document: Mapping[str, Any]) -> VersionDocument:
    return VersionDocument(
        name=str(document["name"]),
        description=document.get("description"),
        content=VersionContent.model_validate(document["content"]),
    )


@dataclass(frozen=True)
class EntryState:
    """An entry as a write or a digest finds it: the entry, its latest version and edits."""

    entry: KnowledgeEntry
    version: VersionRecord | None
    document: VersionDocument | None
    edits: dict[Section, ServiceEdit]

    @property
    def knowledge_id(self) -> int:
        return self.entry.id

    @property
    def latest_version(self) -> KnowledgeVersion:
        return self.entry.latest_version

    @property
    def edit_seq(self) -> int:
        return self.entry.service_edit_seq

    @property
    def api_control(self) -> ApiControl | None:
        return api_control_of(self.entry)

    @property
    def stored_content(self) -> VersionContent:
        """The latest version as stored (nothing when there is no version yet)."""
        return self.document.content if self.document is not None else VersionContent()

    @property
    def current_content(self) -> VersionContent:
        """The latest version with the service-side edits of its service-owned sections."""
        return overlay(
            self.stored_content, {section: edit.items for section, edit in self.edits.items()}
        )


def api_control_of(entry: KnowledgeEntry) -> ApiControl | None:
    """The entry's flags; None for an entry adopted outside the API before its first append."""
    control = entry.api_control
    return ApiControl.model_validate(control) if control is not None else None


def not_found(knowledge_id: int) -> NotFound:
    return NotFound(f"Knowledge {knowledge_id} not found")


def live_entry(tenant_id: int, knowledge_id: int) -> KnowledgeEntry:
    """The entry, or NotFound for an unknown, other tenant's or deleted id."""
    entry = store.read_entry(tenant_id, knowledge_id)
    if entry is None or entry.deleted:
        raise not_found(knowledge_id)
    return entry


def read_document(document: StoredDocument, what: str) -> dict[str, Any]:
    return store.load_document(knowledge_content_bucket(), document, what)


def service_edit(edit: EditRecord, knowledge_id: int) -> ServiceEdit:
    section = Section(edit.section)
    document = read_document(edit.document, f"knowledge {knowledge_id} edit {edit.section}")
    return ServiceEdit(
        section=section,
        items=ITEM_ADAPTERS[section].validate_python(document["items"]),
        edited_at=edit.edited_at,
        edited_by=edit.edited_by,
        note=edit.note,
    )


def read_edits(tenant_id: int, knowledge_id: int) -> dict[Section, ServiceEdit]:
    edits = (service_edit(edit, knowledge_id) for edit in store.read_edits(tenant_id, knowledge_id))
    return {edit.section: edit for edit in edits}


def service_edits(tenant_id: int, knowledge_id: int) -> list[ServiceEdit]:
    """The entry's service-side edits, by section (for operators)."""
    live_entry(tenant_id, knowledge_id)
    return sorted(read_edits(tenant_id, knowledge_id).values(), key=lambda edit: edit.section)


def latest_version(tenant_id: int, entry: KnowledgeEntry) -> VersionRecord:
    """The version the entry names as its latest: written in the same transaction, so it
    is there (DynamoDB reads are serializable with transactions)."""
    found = store.read_version(tenant_id, entry.id, entry.latest_version)
    if found is None:
        raise RuntimeError(f"knowledge {entry.id} lacks its version {entry.latest_version}")
    return found


def version_document(entry: KnowledgeEntry, version: VersionRecord) -> VersionDocument:
    what = f"knowledge {entry.id} version {version.version}"
    return parse_document(read_document(version.document, what))


def read_state(tenant_id: int, knowledge_id: int) -> EntryState:
    """Entry, latest version and edits, read strongly consistent, for a write or a digest."""
    entry = live_entry(tenant_id, knowledge_id)
    if entry.latest_version == NO_VERSION:
        return EntryState(entry=entry, version=None, document=None, edits={})
    version = latest_version(tenant_id, entry)
    return EntryState(
        entry=entry,
        version=version,
        document=version_document(entry, version),
        edits=read_edits(tenant_id, knowledge_id),
    )


def entry_dto(
    entry: KnowledgeEntry,
    version: VersionRecord | None,
    document: VersionDocument | None,
) -> KnowledgeEntryDto:
    """The full entry: the entry's own fields with one version's stored content."""
    content = document.content if document else VersionContent()
    fields = store.summary_fields(entry)
    if document is not None:  # the version's own name and description: what was stored with it
        fields.update(name=document.name, description=document.description)
    return KnowledgeEntryDto(
        **fields,
        latest_version=entry.latest_version,
        version=version.version if version else None,
        version_id=version.version_id if version else None,
        version_created_at=version.created_at if version else None,
        published=version is not None and entry.published_version == version.version,
        api_control=api_control_of(entry),
        question_list=content.question_list,
        spoken_instructions=content.spoken_instructions,
        actions=content.actions,
        media=content.media,
    )


def get_knowledge(
    tenant_id: int, knowledge_id: int, version: KnowledgeVersion | None
) -> KnowledgeEntryDto:
    """GET /{knowledgeId}: the latest version, or `version`, exactly as stored."""
    entry = live_entry(tenant_id, knowledge_id)
    wanted = entry.latest_version if version is None else version
    if wanted == NO_VERSION:
        return entry_dto(entry, None, None)  # an entry adopted outside the API, no content yet
    if wanted > entry.latest_version:
        raise NotFound(f"Version {wanted} of knowledge {knowledge_id} not found")
    found = (
        latest_version(tenant_id, entry)
        if wanted == entry.latest_version
        else store.read_version(tenant_id, knowledge_id, wanted)
    )
    if found is None:
        raise NotFound(f"Version {wanted} of knowledge {knowledge_id} not found")
    return entry_dto(entry, found, version_document(entry, found))
