"""The knowledge operations' permissions, body limit and OpenAPI description."""

import json

import pytest

from psap.auth.permissions import Permission
from psap.http.operations import OPERATIONS
from psap.limits import KNOWLEDGE_BODY_LIMIT
from tools.openapi import DOCUMENT

P = Permission
BASE = "/api/v1/external/knowledge"
CARD = "/api/v1/external/mcp/resources/knowledge/{knowledgeId}/card"


@pytest.mark.parametrize(
    ("method", "path", "permissions"),
    [
        ("POST", BASE, (P.MANAGE_KNOWLEDGE,)),
        ("POST", BASE + "/{knowledgeId}/versions", (P.MANAGE_KNOWLEDGE,)),
        ("GET", BASE + "/{knowledgeId}", (P.VIEW_KNOWLEDGE, P.MANAGE_KNOWLEDGE)),
        ("POST", BASE + "/{knowledgeId}/versions/{version}/publish", (P.MANAGE_KNOWLEDGE,)),
        ("POST", BASE + "/{knowledgeId}/unpublish", (P.MANAGE_KNOWLEDGE,)),
        ("DELETE", BASE + "/{knowledgeId}", (P.MANAGE_KNOWLEDGE,)),
        ("GET", CARD, (P.VIEW_KNOWLEDGE, P.MANAGE_KNOWLEDGE, P.ADMIN)),
    ],
)
@pytest.mark.spec("endpoints-permission-knowledge-write-and-read", "data-auth-rule-3")
def test_knowledge_operations_need_the_permissions_of_the_spec(
    method: str, path: str, permissions: tuple[P, ...]
) -> None:
    assert OPERATIONS[(method, path)].any_of == permissions


def test_create_and_append_bodies_are_limited_to_1_mb_and_the_others_take_none() -> None:
    assert KNOWLEDGE_BODY_LIMIT == 1_048_576
    assert OPERATIONS[("POST", BASE)].max_body_bytes == KNOWLEDGE_BODY_LIMIT
    assert OPERATIONS[("POST", BASE + "/{knowledgeId}/versions")].max_body_bytes == (
        KNOWLEDGE_BODY_LIMIT
    )


def test_openapi_documents_the_payload_choices_and_the_201_answers() -> None:
    document = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    create = document["paths"][BASE]["post"]
    append = document["paths"][BASE + "/{knowledgeId}/versions"]["post"]
    for operation in (create, append):
        assert operation["responses"]["201"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/KnowledgeEntryDto"
        }
        assert "413" in operation["responses"]
        for choice in ("apiControl", "referenceId", "targetExternalId", "1048576 bytes"):
            assert choice in operation["description"]
    assert "409" in create["responses"]
    card = document["paths"][CARD]["get"]
    assert "processingStatus" in card["description"]
    schemas = document["components"]["schemas"]
    assert set(schemas["KnowledgeCardDto"]["properties"]) >= {
        "knowledgeId",
        "knowledgeType",
        "name",
        "versionId",
        "version",
        "active",
        "processingStatus",
        "sections",
    }
