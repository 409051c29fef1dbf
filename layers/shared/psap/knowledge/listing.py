"""List knowledge entries (spec: "List knowledge entries", rules 1-5), without pydantic.

The list function's cold start imports no pydantic (docs/design.md, "The light GET path"),
so the page is built here as the JSON it is: plain dicts whose keys and values are exactly
those of ExternalKnowledgePageDto's JSON (psap.knowledge.models stays the contract; a unit
test validates these dicts against it).
"""

from collections.abc import Mapping
from typing import Any, TypedDict

from psap.clock import format_timestamp, parse_timestamp
from psap.config import knowledge_table
from psap.knowledge import store
from psap.knowledge.kinds import KnowledgeSource, KnowledgeType
from psap.paging import PageRequest, total_pages

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200

# The wire names are camelCase, hence the functional form.
KnowledgeSummary = TypedDict(  # noqa: UP013
    "KnowledgeSummary",
    {
        "id": int,
        "name": str,
        "description": str | None,
        "source": str,
        "provider": str,
        "knowledgeType": str,
        "externalId": str | None,
        "publishedVersion": int | None,
        "createdAt": str,
        "updatedAt": str,
    },
)
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


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


def summary_of(item: Mapping[str, Any]) -> KnowledgeSummary:
    """An entry's stored attributes as the summary's JSON (ExternalKnowledgeDto's field order;
    enum values checked, timestamps in the `<ts>` form)."""
    return {
        "id": int(item["id"]),
        "name": str(item["name"]),
        "description": _optional_str(item.get("description")),
        "source": KnowledgeSource(item["source"]).value,
        "provider": str(item["provider"]),
        "knowledgeType": KnowledgeType(item["knowledgeType"]).value,
        "externalId": _optional_str(item.get("externalId")),
        "publishedVersion": _optional_int(item.get("publishedVersion")),
        "createdAt": format_timestamp(parse_timestamp(str(item["createdAt"]))),
        "updatedAt": format_timestamp(parse_timestamp(str(item["updatedAt"]))),
    }


def list_knowledge(
    tenant_id: int,
    page: int,
    size: int,
    provider: str | None,
    knowledge_type: KnowledgeType | None,
) -> KnowledgePage:
    request = PageRequest.capped(page, size, MAX_PAGE_SIZE)
    items, total = store.list_entry_items(
        knowledge_table(), tenant_id, provider, knowledge_type, request
    )
    return {
        "items": [summary_of(item) for item in items],
        "page": request.page,
        "size": request.size,
        "totalItems": total,
        "totalPages": total_pages(total, request.size),
    }
