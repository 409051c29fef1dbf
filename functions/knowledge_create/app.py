"""POST /api/v1/external/knowledge: a new knowledge entry with its first version."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Body

from psap.audit.changes import note_change
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.knowledge.authoring import create_knowledge as create
from psap.knowledge.content import KnowledgeCreateRequest, KnowledgeEntryDto
from psap.knowledge.openapi_text import CREATE_DESCRIPTION, CREATE_RESPONSES
from psap.limits import KNOWLEDGE_BODY_LIMIT

app = create_resolver()


@app.post(
    "/api/v1/external/knowledge",
    summary="Create a knowledge entry",
    description=CREATE_DESCRIPTION.format(limit=KNOWLEDGE_BODY_LIMIT),
    operation_id="createKnowledge",
    tags=["Knowledge"],
    status_code=201,
    responses=CREATE_RESPONSES,
)
def create_knowledge(request: Annotated[KnowledgeCreateRequest, Body()]) -> KnowledgeEntryDto:
    principal = current_principal(app)
    entry = create(principal.tenant_id, request, principal.credential_id)
    note_change("knowledge", entry.id, "CREATED", version=entry.version)
    return entry


handler = lambda_handler(app)
