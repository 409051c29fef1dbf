"""List knowledge entries (spec: "List knowledge entries", rules 1-5), without pydantic.

The list function's cold start imports no pydantic (docs/design.md, "The light GET path"),
so the page is built here as the JSON it is: plain dicts whose keys and values are exactly
those of ExternalKnowledgePageDto's JSON (psap.knowledge.models stays the contract; a unit
test validates these dicts against it).
"""

from collections.abc import Mapping
from typing import Any, TypedDict

from psap.clock import format_timestamp
from psap.knowledge import store
from psap.knowledge.kinds import KnowledgeType
from psap.knowledge.records import KnowledgeEntry
from psap.paging import PageRequest, total_pages

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200


class KnowledgeSummary(store.EntryDescription):
    """ExternalKnowledgeDto's JSON: the entry's description as stored, with its numbers."""

    id: int
    publishedVersion: int | None  # noqa: N815 - the wire's names
    createdAt: str  # noqa: N815
    updatedAt: str  # noqa: N815


# The wire names are camelCase, hence the functional form.
KnowledgePage = TypedDict(  # noqa: UP013
    "KnowledgePage",
    {
        "items": list[KnowledgeSummary],
        "page": int,
        "size": int,
        "totalItems": int,
        "totalPages": int,
    },
)


def summary_of(item: Mapping[str, Any]) -> KnowledgeSummary:
    """An entry's stored attributes as the summary's JSON (see entry_summary)."""
    return entry_summary(store.entry_of(item))


def entry_summary(entry: KnowledgeEntry) -> KnowledgeSummary:
    """An entry as the summary's JSON (ExternalKnowledgeDto's field order; timestamps in the
    `<ts>` form)."""
    return {
        "id": entry.id,
        **store.entry_description(entry),
        "publishedVersion": entry.published_version,
        "createdAt": format_timestamp(entry.created_at),
        "updatedAt": format_timestamp(entry.updated_at),
    }


def list_knowledge(
    tenant_id: int,
    page: int,
    size: int,
    *,
    provider: str | None,
    knowledge_type: KnowledgeType | None,
) -> KnowledgePage:
    request = PageRequest.capped(page, size, MAX_PAGE_SIZE)
    entries, total = store.list_entry_records(tenant_id, provider, knowledge_type, page=request)
    return {
        "items": [entry_summary(entry) for entry in entries],
        "page": request.page,
        "size": request.size,
        "totalItems": total,
        "totalPages": total_pages(total, request.size),
    }
