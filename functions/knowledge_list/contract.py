"""The knowledge list as the OpenAPI document declares it: its contract, not its runtime.

tools/openapi.py reads this module instead of app.py. The route is the same one, declared on
a validating resolver from the same query rules (psap.http.knowledge_list) with the response
model; app.py serves it without pydantic, and tests/unit/test_light_path.py checks that the
two answer every request alike.
"""

from typing import Annotated

from psap.http.contract import declared
from psap.http.knowledge_list import KNOWLEDGE_TYPE, PAGE, PATH, PROVIDER, SIZE
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.knowledge import listing
from psap.knowledge.listing import MAX_PAGE_SIZE
from psap.knowledge.models import ExternalKnowledgePageDto, KnowledgeType

app = create_resolver()


@app.get(
    PATH,
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
def list_knowledge(
    *,
    page: Annotated[int, declared(PAGE)] = PAGE.default,
    size: Annotated[int, declared(SIZE)] = SIZE.default,
    provider: Annotated[str | None, declared(PROVIDER)] = None,
    knowledge_type: Annotated[KnowledgeType | None, declared(KNOWLEDGE_TYPE, aliased=True)] = None,
) -> ExternalKnowledgePageDto:
    principal = current_principal(app)
    page_json = listing.list_knowledge(
        principal.tenant_id, page, size, provider=provider, knowledge_type=knowledge_type
    )
    return ExternalKnowledgePageDto.model_validate(page_json)


handler = lambda_handler(app)
