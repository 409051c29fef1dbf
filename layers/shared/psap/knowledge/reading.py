"""Reading knowledge entries: the full entry of a version (GET /{knowledgeId}) and the
current content a write or a digest starts from (latest version + service-side edits)."""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter

from psap.clock import parse_timestamp
from psap.config import knowledge_content_bucket, knowledge_table
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
class EntryState:
    """An entry as a write or a digest finds it: its item, latest version and edits."""

    item: dict[str, Any]
    latest_version: int
    edit_seq: int
    api_control: ApiControl | None
    version_item: dict[str, Any] | None
    document: dict[str, Any] | None
    edits: dict[Section, ServiceEdit]

    @property
    def knowledge_id(self) -> int:
        return int(self.item["id"])

    @property
    def stored_content(self) -> VersionContent:
        """The latest version as stored (nothing when there is no version yet)."""
        if self.document is None:
            return VersionContent()
        return VersionContent.model_validate(self.document["content"])

    @property
    def current_content(self) -> VersionContent:
        """The latest version with the service-side edits of its service-owned sections."""
        return overlay(
            self.stored_content, {section: edit.items for section, edit in self.edits.items()}
        )


def not_found(knowledge_id: int) -> NotFound:
    return NotFound(f"Knowledge {knowledge_id} not found")


def live_entry_item(table: str, tenant_id: int, knowledge_id: int) -> dict[str, Any]:
    """The entry item, or NotFound for an unknown, other tenant's or deleted id."""
    item = store.read_entry_item(table, tenant_id, knowledge_id)
    if item is None or item.get("deleted"):
        raise not_found(knowledge_id)
    return item


def read_document(version_item: Mapping[str, Any]) -> dict[str, Any]:
    return store.load_document(knowledge_content_bucket(), version_item)


def read_edits(table: str, tenant_id: int, knowledge_id: int) -> dict[Section, ServiceEdit]:
    edits: dict[Section, ServiceEdit] = {}
    for item in store.read_edit_items(table, tenant_id, knowledge_id):
        section = Section(item["section"])
        document = read_document(item)
        edits[section] = ServiceEdit(
            section=section,
            items=ITEM_ADAPTERS[section].validate_python(document["items"]),
            edited_at=parse_timestamp(str(item["editedAt"])),
            edited_by=str(item["editedBy"]),
            note=item.get("note"),
        )
    return edits


def service_edits(tenant_id: int, knowledge_id: int) -> list[ServiceEdit]:
    """The entry's service-side edits, by section (for operators)."""
    table = knowledge_table()
    live_entry_item(table, tenant_id, knowledge_id)
    return sorted(
        read_edits(table, tenant_id, knowledge_id).values(), key=lambda edit: edit.section
    )


def latest_version_item(
    table: str, tenant_id: int, knowledge_id: int, latest: int
) -> dict[str, Any]:
    """The version item the entry names as its latest: written in the same transaction,
    so it is there (DynamoDB reads are serializable with transactions)."""
    found = store.read_version_item(table, tenant_id, knowledge_id, latest)
    if found is None:
        raise RuntimeError(f"knowledge {knowledge_id} lacks its version {latest}")
    return found


def read_state(table: str, tenant_id: int, knowledge_id: int) -> EntryState:
    """Entry, latest version and edits, read strongly consistent, for a write or a digest."""
    item = live_entry_item(table, tenant_id, knowledge_id)
    latest = int(item.get("latestVersion", 0))
    version_item = None
    document = None
    if latest:
        version_item = latest_version_item(table, tenant_id, knowledge_id, latest)
        document = read_document(version_item)
    control = item.get("apiControl")
    return EntryState(
        item=item,
        latest_version=latest,
        edit_seq=int(item.get("serviceEditSeq", 0)),
        api_control=ApiControl.model_validate(control) if control is not None else None,
        version_item=version_item,
        document=document,
        edits=read_edits(table, tenant_id, knowledge_id) if latest else {},
    )


def entry_dto(
    item: Mapping[str, Any],
    version_item: Mapping[str, Any] | None,
    document: Mapping[str, Any] | None,
) -> KnowledgeEntryDto:
    """The full entry: the entry's own fields with one version's stored content."""
    published = item.get("publishedVersion")
    version = int(version_item["version"]) if version_item else None
    content = VersionContent.model_validate(document["content"]) if document else VersionContent()
    control = item.get("apiControl")
    return KnowledgeEntryDto(
        id=int(item["id"]),
        # The version's own name and description: what was stored with it.
        name=str(document["name"]) if document else str(item["name"]),
        description=document.get("description") if document else item.get("description"),
        source=item["source"],
        provider=str(item["provider"]),
        knowledge_type=item["knowledgeType"],
        external_id=item.get("externalId"),
        published_version=published,
        created_at=parse_timestamp(str(item["createdAt"])),
        updated_at=parse_timestamp(str(item["updatedAt"])),
        latest_version=int(item.get("latestVersion", 0)),
        version=version,
        version_id=int(version_item["versionId"]) if version_item else None,
        version_created_at=(
            parse_timestamp(str(version_item["createdAt"])) if version_item else None
        ),
        published=version is not None and published == version,
        api_control=ApiControl.model_validate(control) if control is not None else None,
        question_list=content.question_list,
        spoken_instructions=content.spoken_instructions,
        actions=content.actions,
        media=content.media,
    )


def get_knowledge(tenant_id: int, knowledge_id: int, version: int | None) -> KnowledgeEntryDto:
    """GET /{knowledgeId}: the latest version, or `version`, exactly as stored."""
    table = knowledge_table()
    item = live_entry_item(table, tenant_id, knowledge_id)
    latest = int(item.get("latestVersion", 0))
    wanted = latest if version is None else version
    if wanted == 0:
        return entry_dto(item, None, None)  # an entry adopted outside the API, no content yet
    if wanted > latest:
        raise NotFound(f"Version {wanted} of knowledge {knowledge_id} not found")
    version_item = (
        latest_version_item(table, tenant_id, knowledge_id, wanted)
        if wanted == latest
        else store.read_version_item(table, tenant_id, knowledge_id, wanted)
    )
    if version_item is None:
        raise NotFound(f"Version {wanted} of knowledge {knowledge_id} not found")
    return entry_dto(item, version_item, read_document(version_item))
