"""GET /api/v1/external/mcp/resources/resource-center/search: hybrid keyword and semantic
search over the published catalog, with the tenant's license and import status per result.

The engine (model, index) loads once per warm container; its dependencies come from the
search layer, which only this function and the indexer attach.
"""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query

from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.models import INT32_MAX
from psap.resource_center import search
from psap.resource_center.engine.encoder import query_encoder
from psap.resource_center.models import ItemType, ResourceCenterSearchResponse
from psap.resource_center.query import (
    DEFAULT_PAGE_SIZE,
    MAX_CATEGORY_LENGTH,
    MAX_PAGE_SIZE,
    MAX_QUERY_LENGTH,
    parse_search_query,
)

app = create_resolver()
# In the init phase, not in the first request: the model is the bulk of a cold start.
query_encoder()


@app.get(
    "/api/v1/external/mcp/resources/resource-center/search",
    summary="Search the resource center",
    description=(
        "Hybrid keyword (BM25, stemmed) and semantic (all-MiniLM-L6-v2) search over published "
        "coaching content and help articles, fused by min-max normalized scores with equal "
        "weights over the top 100 of each ranker. Any valid partner credential may search; "
        "callers without Resource Center access (ADMIN or RESOURCE_CENTER_PUBLISH) receive "
        "help articles only, and coaching content never counts in their totalHits. "
        f"A pageSize above {MAX_PAGE_SIZE} is silently reduced to {MAX_PAGE_SIZE}. "
        "matchedSnippet marks query terms with <mark>...</mark> and is otherwise HTML-escaped. "
        "A newly published catalog change is searchable within about a minute."
    ),
    operation_id="searchResourceCenter",
    tags=["Resource center"],
)
def search_resource_center(
    *,
    q: Annotated[
        str,
        Query(
            min_length=1,
            max_length=MAX_QUERY_LENGTH,
            pattern=r"\S",
            description=f"Search text, 1-{MAX_QUERY_LENGTH} characters after trimming",
        ),
    ],
    page: Annotated[int, Query(ge=0, le=INT32_MAX, description="0-based page number")] = 0,
    page_size: Annotated[
        int,
        Query(
            alias="pageSize",
            ge=1,
            le=INT32_MAX,
            description=f"Page size, capped at {MAX_PAGE_SIZE}",
        ),
    ] = DEFAULT_PAGE_SIZE,
    item_type: Annotated[
        ItemType | None, Query(alias="itemType", description="Only items of this type")
    ] = None,
    category: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=MAX_CATEGORY_LENGTH,
            pattern=r"\S",
            description="Only items of this category (exact match, trimmed)",
        ),
    ] = None,
) -> ResourceCenterSearchResponse:
    principal = current_principal(app)
    query = parse_search_query(q, page, page_size, item_type=item_type, category=category)
    return search.search_resource_center(principal.tenant_id, principal.permissions, query)


handler = lambda_handler(app)
