"""POST /api/v1/external/knowledge/{knowledgeId}/unpublish: no published version."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from psap.audit.changes import note_change
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.knowledge.authoring import unpublish
from psap.knowledge.models import ExternalKnowledgeDto
from psap.knowledge.openapi_text import UNPUBLISH_DESCRIPTION
from psap.models import INT64_MAX

app = create_resolver()


@app.post(
    "/api/v1/external/knowledge/<knowledgeId>/unpublish",
    summary="Unpublish a knowledge entry",
    description=UNPUBLISH_DESCRIPTION,
    operation_id="unpublishKnowledge",
    tags=["Knowledge"],
)
def unpublish_knowledge(
    knowledge_id: Annotated[
        int, Path(alias="knowledgeId", ge=0, le=INT64_MAX, description="Knowledge id")
    ],
) -> ExternalKnowledgeDto:
    principal = current_principal(app)
    entry = unpublish(principal.tenant_id, knowledge_id)
    note_change("knowledge", knowledge_id, "UPDATED")
    return entry


handler = lambda_handler(app)
