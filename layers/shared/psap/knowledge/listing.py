"""List knowledge entries (spec: "List knowledge entries", rules 1-5)."""

from psap.config import knowledge_table
from psap.knowledge import store
from psap.knowledge.models import ExternalKnowledgePageDto, KnowledgeType
from psap.paging import PageRequest, total_pages

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200


def list_knowledge(
    tenant_id: int,
    page: int,
    size: int,
    provider: str | None,
    knowledge_type: KnowledgeType | None,
) -> ExternalKnowledgePageDto:
    request = PageRequest.capped(page, size, MAX_PAGE_SIZE)
    items, total = store.list_entries(
        knowledge_table(), tenant_id, provider, knowledge_type, request
    )
    return ExternalKnowledgePageDto(
        items=items,
        page=request.page,
        size=request.size,
        total_items=total,
        total_pages=total_pages(total, request.size),
    )
