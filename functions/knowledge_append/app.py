"""POST /api/v1/external/knowledge/{knowledgeId}/versions: a new immutable version."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Body, Path

from psap.audit.changes import note_change
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.knowledge.authoring import append_version
from psap.knowledge.content import KnowledgeAppendRequest, KnowledgeEntryDto
from psap.knowledge.openapi_text import APPEND_DESCRIPTION, APPEND_RESPONSES
from psap.limits import KNOWLEDGE_BODY_LIMIT
from psap.models import INT64_MAX

app = create_resolver()


@app.post(
    "/api/v1/external/knowledge/<knowledgeId>/versions",
    summary="Append a version to a knowledge entry",
    description=APPEND_DESCRIPTION.format(limit=KNOWLEDGE_BODY_LIMIT),
    operation_id="appendKnowledgeVersion",
    tags=["Knowledge"],
    status_code=201,
    responses=APPEND_RESPONSES,
)
def append_knowledge_version(
    knowledge_id: Annotated[
        int, Path(alias="knowledgeId", ge=0, le=INT64_MAX, description="Knowledge id")
    ],
    request: Annotated[KnowledgeAppendRequest, Body()],
) -> KnowledgeEntryDto:
    principal = current_principal(app)
    entry = append_version(
        principal.tenant_id, knowledge_id, request, author=principal.credential_id
    )
    note_change("knowledge", entry.id, "UPDATED", version=entry.version)
    return entry


handler = lambda_handler(app)
