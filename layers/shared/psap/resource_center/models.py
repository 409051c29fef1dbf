"""Resource-center shapes: catalog records (ours) and the search response (the spec's)."""

import hashlib
import json
from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from psap.models import WireModel

MAX_TITLE_LENGTH = 300
MAX_SUMMARY_LENGTH = 2_000
MAX_BODY_LENGTH = 50_000  # characters: even 4-byte UTF-8 stays inside an item's 400 KB
MAX_FIELD_LENGTH = 2_000  # category, URLs, license name, externalId


class ItemType(StrEnum):
    COACHING_CONTENT = "COACHING_CONTENT"
    HELP_ARTICLE = "HELP_ARTICLE"


class ImportStatus(StrEnum):
    NOT_IMPORTED = "NOT_IMPORTED"
    IMPORTED = "IMPORTED"  # the tenant's copy is of the catalog's current version
    UPDATE_AVAILABLE = "UPDATE_AVAILABLE"  # the catalog item changed since the import


type ShortText = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_FIELD_LENGTH)
]


class CatalogRecord(BaseModel):
    """One line of a catalog import file (JSON Lines). Unknown fields are refused so a typo
    never silently drops a value."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    external_id: ShortText = Field(alias="externalId")
    item_type: ItemType = Field(alias="itemType")
    title: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_TITLE_LENGTH)
    ]
    summary: Annotated[str, StringConstraints(strip_whitespace=True, max_length=MAX_SUMMARY_LENGTH)]
    body: Annotated[str, StringConstraints(strip_whitespace=True, max_length=MAX_BODY_LENGTH)]
    category: ShortText
    thumbnail_url: ShortText | None = Field(default=None, alias="thumbnailUrl")
    url: ShortText
    required_license_name: ShortText | None = Field(default=None, alias="requiredLicenseName")
    published: bool = False

    def content_hash(self) -> str:
        """Changes exactly when what a tenant would import changes (not the published flag):
        the catalog version is bumped on it, and the indexer re-embeds on it."""
        content = self.model_dump(mode="json", exclude={"external_id", "published"})
        encoded = json.dumps(content, sort_keys=True, ensure_ascii=False).encode()
        return hashlib.sha256(encoded).hexdigest()


class CatalogItem(BaseModel):
    """A stored catalog item: the record plus the ids and version we keep."""

    model_config = ConfigDict(frozen=True)

    id: int
    version: int  # 1 on create, +1 whenever the content changes
    content_hash: str
    record: CatalogRecord
    created_at: str
    updated_at: str

    @property
    def published(self) -> bool:
        return self.record.published


class ResourceCenterResult(WireModel):
    """One search result (spec: result item)."""

    item_type: ItemType
    title: str
    summary: str
    matched_snippet: str = Field(
        description="The best-matching passage of the body, at most 300 characters of text. "
        "Query terms are wrapped in <mark>...</mark>; the rest is HTML-escaped, so the "
        "snippet is safe to insert as HTML."
    )
    category: str
    thumbnail_url: str | None
    required_license_name: str | None = Field(
        description="The license an item needs; null when it needs none."
    )
    url: str
    id: int = Field(description="Catalog item id")
    licensed: bool = Field(
        description="The tenant holds the required license, or the item needs none."
    )
    import_status: ImportStatus = Field(
        description="NOT_IMPORTED; IMPORTED (the tenant's copy is current); UPDATE_AVAILABLE "
        "(the catalog item changed since the tenant imported it)."
    )


class ResourceCenterSearchResponse(WireModel):
    results: list[ResourceCenterResult]
    total_hits: int = Field(
        description="Results across all pages: the fused candidates (at most 100 from each "
        "ranker) that pass the filters and the caller's visibility."
    )
    page: int = Field(description="0-based page number")
    page_size: int = Field(description="Effective page size after capping")
