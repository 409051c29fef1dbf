"""The committed OpenAPI document is what the code generates (run `make openapi`)."""

import json

from tools.openapi import DOCUMENT, build_document, render


def test_committed_openapi_document_is_up_to_date() -> None:
    assert DOCUMENT.read_text(encoding="utf-8") == render(build_document()), (
        "functions/api_docs/openapi.json is stale: run `make openapi`"
    )


def test_document_describes_the_knowledge_list_with_error_info_and_permissions() -> None:
    document = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    assert document["info"]["version"] == "1.0"
    operation = document["paths"]["/api/v1/external/knowledge"]["get"]
    assert operation["x-permissions"] == ["VIEW_KNOWLEDGE", "MANAGE_KNOWLEDGE"]
    assert set(operation["responses"]) >= {"200", "400", "401", "403"}
    assert "422" not in operation["responses"]
    page = document["components"]["schemas"]["ExternalKnowledgePageDto"]
    assert set(page["properties"]) == {"items", "page", "size", "totalItems", "totalPages"}
