"""GET /api/v1/external/knowledge: the tenant's API-managed knowledge entries, by id.

The light GET path (docs/design.md): nothing on this function's cold start imports pydantic.
The query is read by the rules of psap.http.knowledge_list (the same 400 answers as
validation), and the page is built as plain JSON (psap.knowledge.listing). contract.py
declares the same route, with its response model, for the OpenAPI document.
"""

from psap.http.knowledge_list import KNOWLEDGE_TYPE, PAGE, PARAMETERS, PATH, PROVIDER, SIZE
from psap.http.query import read_query
from psap.http.resolver import create_light_resolver, current_principal, lambda_handler
from psap.knowledge import listing
from psap.knowledge.listing import KnowledgePage

app = create_light_resolver()


@app.get(PATH)
def list_knowledge() -> KnowledgePage:
    query = read_query(app.current_event.raw_event, PARAMETERS)
    principal = current_principal(app)
    return listing.list_knowledge(
        principal.tenant_id,
        PAGE.value(query),
        SIZE.value(query),
        provider=PROVIDER.value(query),
        knowledge_type=KNOWLEDGE_TYPE.value(query),
    )


handler = lambda_handler(app)
