"""GET /api/v1/external/knowledge: the tenant's API-managed knowledge entries, by id."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query

from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.knowledge.listing import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, list_knowledge
from psap.knowledge.models import ExternalKnowledgePageDto, KnowledgeType
from psap.models import INT32_MAX

app = create_resolver()


@app.get(
    "/api/v1/external/knowledge",
    summary="List knowledge entries",
    description=(
        "Lists the tenant's API-managed entries (source API_IMPORT, not deleted), sorted by "
        "id, summaries only. Filters match exactly; omit one for no filtering on it. "
        f"A size above {MAX_PAGE_SIZE} is silently reduced to {MAX_PAGE_SIZE}; the response's "
        "size carries the effective value. A page past the end returns no items and the true "
        "totals. Deep pages cost a walk over small keys-only listing pointers."
    ),
    operation_id="listKnowledge",
    tags=["Knowledge"],
)
def list_entries(
    page: Annotated[int, Query(ge=0, le=INT32_MAX, description="0-based page number")] = 0,
    size: Annotated[
        int, Query(ge=1, le=INT32_MAX, description=f"Page size, capped at {MAX_PAGE_SIZE}")
    ] = DEFAULT_PAGE_SIZE,
    provider: Annotated[str | None, Query(description="Exact-match provider filter")] = None,
    knowledge_type: Annotated[
        KnowledgeType | None, Query(alias="knowledgeType", description="Exact-match type filter")
    ] = None,
) -> ExternalKnowledgePageDto:
    principal = current_principal(app)
    return list_knowledge(principal.tenant_id, page, size, provider, knowledge_type)


handler = lambda_handler(app)
