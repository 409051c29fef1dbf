"""DELETE /api/v1/external/knowledge/{knowledgeId}: soft delete."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path

from psap.audit.changes import note_change
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.knowledge import authoring
from psap.knowledge.openapi_text import DELETE_DESCRIPTION
from psap.models import INT64_MAX

app = create_resolver()


@app.delete(
    "/api/v1/external/knowledge/<knowledgeId>",
    summary="Delete a knowledge entry",
    description=DELETE_DESCRIPTION,
    operation_id="deleteKnowledge",
    tags=["Knowledge"],
    responses={204: {"description": "Deleted; no body", "content": {}}},
)
def delete_knowledge(
    knowledge_id: Annotated[
        int, Path(alias="knowledgeId", ge=0, le=INT64_MAX, description="Knowledge id")
    ],
) -> Response[None]:
    principal = current_principal(app)
    authoring.delete_knowledge(principal.tenant_id, knowledge_id)
    note_change("knowledge", knowledge_id, "DELETED")
    return Response(status_code=204)


handler = lambda_handler(app)
