"""GET /api/v1/external/knowledge/{knowledgeId}: the full content of a version."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.knowledge import reading
from psap.knowledge.content import KnowledgeEntryDto
from psap.knowledge.openapi_text import GET_DESCRIPTION
from psap.knowledge.records import KnowledgeVersion
from psap.models import INT32_MAX, INT64_MAX

app = create_resolver()


@app.get(
    "/api/v1/external/knowledge/<knowledgeId>",
    summary="Read a knowledge entry with its full content",
    description=GET_DESCRIPTION,
    operation_id="getKnowledge",
    tags=["Knowledge"],
)
def get_knowledge(
    knowledge_id: Annotated[
        int, Path(alias="knowledgeId", ge=0, le=INT64_MAX, description="Knowledge id")
    ],
    version: Annotated[
        int | None, Query(ge=1, le=INT32_MAX, description="A version number; omit for the latest")
    ] = None,
) -> KnowledgeEntryDto:
    principal = current_principal(app)
    wanted = None if version is None else KnowledgeVersion(version)
    return reading.get_knowledge(principal.tenant_id, knowledge_id, wanted)


handler = lambda_handler(app)
