"""POST /api/v1/external/knowledge/{knowledgeId}/versions/{version}/publish."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from psap.audit.changes import note_change
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.knowledge.authoring import publish_version
from psap.knowledge.models import ExternalKnowledgeDto
from psap.knowledge.openapi_text import PUBLISH_DESCRIPTION
from psap.knowledge.records import KnowledgeVersion
from psap.models import INT32_MAX, INT64_MAX

app = create_resolver()


@app.post(
    "/api/v1/external/knowledge/<knowledgeId>/versions/<version>/publish",
    summary="Publish a version of a knowledge entry",
    description=PUBLISH_DESCRIPTION,
    operation_id="publishKnowledgeVersion",
    tags=["Knowledge"],
)
def publish_knowledge_version(
    knowledge_id: Annotated[
        int, Path(alias="knowledgeId", ge=0, le=INT64_MAX, description="Knowledge id")
    ],
    version: Annotated[int, Path(ge=0, le=INT32_MAX, description="The version number to publish")],
) -> ExternalKnowledgeDto:
    principal = current_principal(app)
    entry = publish_version(principal.tenant_id, knowledge_id, KnowledgeVersion(version))
    note_change("knowledge", knowledge_id, "UPDATED", version=entry.published_version)
    return entry


handler = lambda_handler(app)
