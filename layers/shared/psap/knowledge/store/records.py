"""Knowledge items as typed records (psap.knowledge.records), and back."""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict

from psap.clock import format_timestamp, parse_timestamp
from psap.knowledge.kinds import KnowledgeSource, KnowledgeType
from psap.knowledge.records import (
    CardRecord,
    EditRecord,
    KnowledgeEntry,
    KnowledgeVersion,
    StoredDocument,
    VersionRecord,
)

if TYPE_CHECKING:
    from psap.knowledge.models import ExternalKnowledgeDto


# An entry's describing fields under the names, and in the forms, they are stored in (the
# wire's): the light list answers them as they are. The wire names are camelCase, hence the
# functional form.
EntryDescription = TypedDict(  # noqa: UP013
    "EntryDescription",
    {
        "name": str,
        "description": str | None,
        "source": str,
        "provider": str,
        "knowledgeType": str,
        "externalId": str | None,
    },
)


@dataclass(frozen=True)
class NewEntry:
    name: str
    provider: str
    knowledge_type: KnowledgeType
    description: str | None = None
    external_id: str | None = None
    source: KnowledgeSource = KnowledgeSource.API_IMPORT


def _optional_version(value: Any) -> KnowledgeVersion | None:
    return None if value is None else KnowledgeVersion(int(value))


def entry_of(item: Mapping[str, Any]) -> KnowledgeEntry:
    """The record of an entry item (or of its summary projection)."""
    latest_id = item.get("latestVersionId")
    return KnowledgeEntry(
        id=int(item["id"]),
        name=str(item["name"]),
        source=KnowledgeSource(item["source"]),
        provider=str(item["provider"]),
        knowledge_type=KnowledgeType(item["knowledgeType"]),
        created_at=parse_timestamp(str(item["createdAt"])),
        updated_at=parse_timestamp(str(item["updatedAt"])),
        description=None if item.get("description") is None else str(item["description"]),
        external_id=None if item.get("externalId") is None else str(item["externalId"]),
        published_version=_optional_version(item.get("publishedVersion")),
        latest_version=KnowledgeVersion(int(item.get("latestVersion", 0))),
        latest_version_id=None if latest_id is None else int(latest_id),
        api_control=item.get("apiControl"),
        service_edit_seq=int(item.get("serviceEditSeq", 0)),
        deleted=bool(item.get("deleted", False)),
    )


def _document_of(item: Mapping[str, Any]) -> StoredDocument:
    packed = item.get("document")
    return StoredDocument(
        packed=None if packed is None else bytes(packed),
        object_key=None if packed is not None else str(item["documentKey"]),
        raw_bytes=int(item.get("rawBytes", 0)),
        stored_bytes=int(item.get("storedBytes", 0)),
    )


def _document_attributes(document: StoredDocument) -> dict[str, Any]:
    where = (
        {"documentKey": document.object_key} if document.in_s3 else {"document": document.packed}
    )
    return {**where, "rawBytes": document.raw_bytes, "storedBytes": document.stored_bytes}


def as_stored(moment: datetime) -> datetime:
    """A moment as an item holds it (milliseconds), so a record returned by a write reads
    exactly as the record read back later."""
    return parse_timestamp(format_timestamp(moment))


def new_version(
    version: KnowledgeVersion,
    version_id: int,
    now: datetime,
    *,
    author: str,
    stored: StoredDocument,
) -> VersionRecord:
    return VersionRecord(
        version=version,
        version_id=version_id,
        created_at=as_stored(now),
        created_by=author,
        document=stored,
    )


def version_of(item: Mapping[str, Any]) -> VersionRecord:
    return VersionRecord(
        version=KnowledgeVersion(int(item["version"])),
        version_id=int(item["versionId"]),
        created_at=parse_timestamp(str(item["createdAt"])),
        created_by=str(item["createdBy"]),
        document=_document_of(item),
    )


def version_attributes(version: VersionRecord) -> dict[str, Any]:
    return {
        "version": version.version,
        "versionId": version.version_id,
        "createdAt": format_timestamp(version.created_at),
        "createdBy": version.created_by,
        **_document_attributes(version.document),
    }


def edit_of(item: Mapping[str, Any]) -> EditRecord:
    return EditRecord(
        section=str(item["section"]),
        edited_at=parse_timestamp(str(item["editedAt"])),
        edited_by=str(item["editedBy"]),
        note=None if item.get("note") is None else str(item["note"]),
        based_on_version=KnowledgeVersion(int(item.get("basedOnVersion", 0))),
        edit_seq=int(item.get("editSeq", 0)),
        document=_document_of(item),
    )


def card_of(item: Mapping[str, Any]) -> CardRecord:
    reason = item.get("processingReason")
    return CardRecord(
        generation=int(item.get("generation", 0)),
        processing_status=str(item["processingStatus"]),
        processing_reason=None if reason is None else str(reason),
        sections=list(item.get("sections") or []),
    )


def summary_fields(entry: KnowledgeEntry) -> dict[str, Any]:
    """The summary's fields by their model names: all of ExternalKnowledgeDto, the first of
    KnowledgeEntryDto."""
    return {
        "id": entry.id,
        "name": entry.name,
        "description": entry.description,
        "source": entry.source,
        "provider": entry.provider,
        "knowledge_type": entry.knowledge_type,
        "external_id": entry.external_id,
        "published_version": entry.published_version,
        "created_at": entry.created_at,
        "updated_at": entry.updated_at,
    }


def summary_dto(entry: KnowledgeEntry) -> "ExternalKnowledgeDto":
    # Imported here: the light list imports this module and must not load pydantic.
    from psap.knowledge.models import ExternalKnowledgeDto  # noqa: PLC0415

    return ExternalKnowledgeDto(**summary_fields(entry))
