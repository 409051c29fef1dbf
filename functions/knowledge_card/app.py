"""GET /api/v1/external/mcp/resources/knowledge/{knowledgeId}/card: the knowledge card."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.knowledge.card import KnowledgeCardDto, get_card
from psap.knowledge.openapi_text import CARD_DESCRIPTION
from psap.models import INT64_MAX

app = create_resolver()


@app.get(
    "/api/v1/external/mcp/resources/knowledge/<knowledgeId>/card",
    summary="Read the knowledge card",
    description=CARD_DESCRIPTION,
    operation_id="getKnowledgeCard",
    tags=["Knowledge"],
)
def get_knowledge_card(
    knowledge_id: Annotated[
        int, Path(alias="knowledgeId", ge=0, le=INT64_MAX, description="Knowledge id")
    ],
) -> KnowledgeCardDto:
    principal = current_principal(app)
    return get_card(principal.tenant_id, knowledge_id)


handler = lambda_handler(app)
