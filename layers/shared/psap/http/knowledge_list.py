"""GET /api/v1/external/knowledge, declared once for its light function and its contract.

functions/knowledge_list/app.py reads the query with these rules (no pydantic);
functions/knowledge_list/contract.py declares the same route, from the same rules, on a
validating resolver for the OpenAPI document (tools/openapi.py).
"""

from typing import Final

from psap.http.query import ChoiceRule, IntegerRule, QueryRule, TextRule
from psap.knowledge.kinds import KnowledgeType
from psap.knowledge.listing import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from psap.limits import INT32_MAX

PATH: Final = "/api/v1/external/knowledge"

PAGE: Final = IntegerRule("page", 0, 0, INT32_MAX, "0-based page number")
SIZE: Final = IntegerRule(
    "size", DEFAULT_PAGE_SIZE, 1, INT32_MAX, f"Page size, capped at {MAX_PAGE_SIZE}"
)
PROVIDER: Final = TextRule("provider", "Exact-match provider filter")
KNOWLEDGE_TYPE: Final = ChoiceRule("knowledgeType", KnowledgeType, "Exact-match type filter")
# In the order the operation declares them: a 400 names the failing ones in this order.
PARAMETERS: Final[tuple[QueryRule, ...]] = (PAGE, SIZE, PROVIDER, KNOWLEDGE_TYPE)
