"""POST /api/v1/external/knowledge/{knowledgeId}/unpublish: no published version."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.knowledge.authoring import unpublish
from psap.knowledge.models import ExternalKnowledgeDto
from psap.knowledge.openapi_text import UNPUBLISH_DESCRIPTION

app = create_resolver()


@app.post(
    "/api/v1/external/knowledge/<knowledgeId>/unpublish",
    summary="Unpublish a knowledge entry",
    description=UNPUBLISH_DESCRIPTION,
    operation_id="unpublishKnowledge",
    tags=["Knowledge"],
)
def unpublish_knowledge(
    knowledge_id: Annotated[int, Path(alias="knowledgeId", description="Knowledge id")],
) -> ExternalKnowledgeDto:
    principal = current_principal(app)
    return unpublish(principal.tenant_id, knowledge_id)


handler = lambda_handler(app)
