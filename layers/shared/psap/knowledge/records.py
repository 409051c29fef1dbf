"""What the knowledge store hands the logic: typed records, never DynamoDB attribute names.

Plain frozen dataclasses, not pydantic: the list function's cold path loads this module and
must stay pydantic-free (docs/design.md, "The light GET path"). The store builds them from
items and back (psap.knowledge.store); the logic reads their fields only.
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NewType

from psap.knowledge.kinds import KnowledgeSource, KnowledgeType

# A version number of one entry (1..N), carried as such from the request to the sort key.
KnowledgeVersion = NewType("KnowledgeVersion", int)
NO_VERSION = KnowledgeVersion(0)


@dataclass(frozen=True)
class StoredDocument:
    """A compressed document (zlib JSON): inline bytes, or the S3 key it was written to."""

    packed: bytes | None
    object_key: str | None
    raw_bytes: int
    stored_bytes: int

    @property
    def in_s3(self) -> bool:
        return self.packed is None


@dataclass(frozen=True)
class KnowledgeEntry:
    """An entry: metadata, its latest and published version, its apiControl flags.

    A listing read projects the summary only: the attributes it leaves out take their
    defaults here (latest_version 0, no apiControl)."""

    id: int
    name: str
    source: KnowledgeSource
    provider: str
    knowledge_type: KnowledgeType
    created_at: datetime
    updated_at: datetime
    description: str | None = None
    external_id: str | None = None
    published_version: KnowledgeVersion | None = None
    latest_version: KnowledgeVersion = NO_VERSION
    latest_version_id: int | None = None
    # The flags as stored (ApiControl's JSON): the model is pydantic, this module is not.
    api_control: dict[str, Any] | None = None
    service_edit_seq: int = 0
    deleted: bool = False

    @property
    def listed(self) -> bool:
        """Whether the entry is in the listing (imported through the API, not deleted)."""
        return self.source is KnowledgeSource.API_IMPORT and not self.deleted


@dataclass(frozen=True)
class LinkedEntry:
    """What a link needs of the entry it targets."""

    id: int
    name: str
    provider: str
    knowledge_type: KnowledgeType


@dataclass(frozen=True)
class VersionRecord:
    """An immutable version of an entry: numbers, authorship and its stored document."""

    version: KnowledgeVersion
    version_id: int
    created_at: datetime
    created_by: str
    document: StoredDocument


@dataclass(frozen=True)
class EditRecord:
    """The service-side edit of one service-owned section (`section`: the Section value)."""

    section: str
    edited_at: datetime
    edited_by: str
    note: str | None
    based_on_version: KnowledgeVersion
    edit_seq: int
    document: StoredDocument


@dataclass(frozen=True)
class CardRecord:
    """The knowledge card: digest status and the section digests (CardSection's JSON)."""

    generation: int
    processing_status: str
    processing_reason: str | None = None
    sections: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class EntryChanges:
    """What a new version changes in its entry (name and description are the version's)."""

    version: VersionRecord
    name: str
    description: str | None
    api_control: dict[str, Any]
    publish: bool
