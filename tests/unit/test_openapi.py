"""The committed OpenAPI document is what the code generates (run `make openapi`)."""

import json
from typing import Any

import pytest

from psap.http.operations import operation_for
from psap.text import SINGLE_LINE_PATTERN, TEXT_POLICY_DESCRIPTION
from tools.openapi import DOCUMENT, build_document, check_collisions, render


def test_committed_openapi_document_is_up_to_date() -> None:
    assert DOCUMENT.read_text(encoding="utf-8") == render(build_document()), (
        "functions/api_docs/openapi.json is stale: run `make openapi`"
    )


@pytest.mark.spec(
    "versioning-rule-1", "endpoints-permission-knowledge-list", "resources-knowledge-page-fields"
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


def _document() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    return loaded


def test_a_component_name_defined_twice_differently_fails_the_build() -> None:
    # Given two functions whose models share a component name with different shapes
    found: dict[str, tuple[str, object]] = {}
    first = {"components": {"schemas": {"MediaType": {"enum": ["IMAGE", "VIDEO"]}}}}
    second = {"components": {"schemas": {"MediaType": {"enum": ["RADIO_TRAFFIC"]}}}}
    check_collisions(found, first, "knowledge_create")
    # When the second is merged, Then the build stops naming both
    with pytest.raises(SystemExit, match=r"MediaType.*knowledge_create.*media_get"):
        check_collisions(found, second, "media_get")


def test_the_knowledge_media_type_is_the_one_in_the_document() -> None:
    # The knowledge card's MediaType, not the media-ingest record type it used to collide with
    schemas = _document()["components"]["schemas"]
    assert schemas["MediaType"]["enum"] == ["IMAGE", "VIDEO", "AUDIO", "DOCUMENT"]
    assert schemas["MediaRecordType"]["enum"] == ["RADIO_TRAFFIC"]


@pytest.mark.parametrize(
    ("path", "media_types"),
    [
        ("/cad/v1/incidents", {"application/json", "application/cloudevents+json"}),
        (
            "/api/v1/external/incidents/upload",
            {"text/csv", "application/x-ndjson", "application/jsonl"},
        ),
        ("/api/v1/external/media/radio-traffic", {"application/x-subrip"}),
        ("/api/v1/external/media/radio-traffic/json", {"application/json"}),
    ],
)
def test_operations_that_read_their_own_body_document_it(path: str, media_types: set[str]) -> None:
    operation = _document()["paths"][path]["post"]
    assert set(operation["requestBody"]["content"]) == media_types
    assert {"400", "413", "415"} <= set(operation["responses"])


def test_the_radio_traffic_forms_are_two_operations_each_saying_all_it_takes() -> None:
    # The raw form's fields are its query parameters (channel and start time required); the
    # JSON form takes none, its fields are the body's.
    paths = _document()["paths"]
    raw = paths["/api/v1/external/media/radio-traffic"]["post"]
    parameters = {entry["name"]: entry["required"] for entry in raw["parameters"]}
    assert parameters == {
        "channel": True,
        "recordingStartedAt": True,
        "eventId": False,
        "incidentNumber": False,
    }
    as_json = paths["/api/v1/external/media/radio-traffic/json"]["post"]
    assert as_json["operationId"] == "uploadRadioTrafficJson"
    assert "parameters" not in as_json


def test_every_operation_with_a_body_documents_its_body_and_413_415() -> None:
    document = _document()
    for path, methods in document["paths"].items():
        for method, spec in methods.items():
            operation = operation_for(method, path)
            assert operation is not None
            if operation.body is not None:
                assert "requestBody" in spec, (method, path)
                assert {"413", "415"} <= set(spec["responses"]), (method, path)


def test_sort_values_category_length_and_integer_bounds_are_in_the_schema() -> None:
    paths = _document()["paths"]

    def parameter(path: str, name: str) -> dict[str, Any]:
        found: dict[str, Any] = next(
            p["schema"] for p in paths[path]["get"]["parameters"] if p["name"] == name
        )
        return found

    assert "lastName,desc" in parameter("/api/v1/external/user", "sort")["enum"]
    evaluations = "/api/v1/external/qa/user/{userId}/evaluations"
    assert parameter(evaluations, "sort")["enum"] == [
        "createdAt",
        "createdAt,asc",
        "createdAt,desc",
    ]
    search = parameter("/api/v1/external/mcp/resources/resource-center/search", "category")
    assert search["anyOf"][0]["maxLength"] == 200
    page = parameter("/api/v1/external/knowledge", "page")
    assert (page["maximum"], page["format"]) == (2**31 - 1, "int32")
    knowledge_id = next(
        p["schema"]
        for p in paths["/api/v1/external/knowledge/{knowledgeId}"]["get"]["parameters"]
        if p["name"] == "knowledgeId"
    )
    assert (knowledge_id["maximum"], knowledge_id["format"]) == (2**63 - 1, "int64")


def test_the_text_policy_is_documented_once_in_the_description() -> None:
    description = _document()["info"]["description"]
    assert TEXT_POLICY_DESCRIPTION in description


def _kind(schema: dict[str, Any]) -> str:
    # An integer and a number are one kind of identifier (some SPEC shapes say number).
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return "|".join(
            sorted(_kind(item) for item in schema["anyOf"] if item.get("type") != "null")
        )
    kind = str(schema.get("type", "?"))
    return "number" if kind == "integer" else kind


def test_no_two_resources_use_one_identifier_name_for_different_things() -> None:
    # Given every property and parameter named like an identifier (…Id) in the document
    document = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    kinds: dict[str, dict[str, list[str]]] = {}
    for name, schema in document["components"]["schemas"].items():
        for field, field_schema in (schema.get("properties") or {}).items():
            kinds.setdefault(field, {}).setdefault(_kind(field_schema), []).append(name)
    for path, item in document["paths"].items():
        for method, operation in item.items():
            for parameter in operation.get("parameters", []):
                where = f"{method.upper()} {path}"
                kind = _kind(parameter.get("schema", {}))
                kinds.setdefault(parameter["name"], {}).setdefault(kind, []).append(where)
    # Then each names one kind of thing: the events resource's eventId is an integer, and a
    # webhook delivery's CloudEvents id (evt-...) is another name
    shared = {
        name: found for name, found in kinds.items() if name.endswith("Id") and len(found) > 1
    }
    assert shared == {}


@pytest.mark.parametrize(
    "path", ["/api/v1/external/incidents/upload", "/api/v1/external/media/radio-traffic"]
)
def test_a_file_body_may_not_be_empty(path: str) -> None:
    # The service answers an empty file with 400 ("The file is empty"); the contract says so
    document = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    content = document["paths"][path]["post"]["requestBody"]["content"]
    files = {
        media_type: body["schema"]
        for media_type, body in content.items()
        if media_type != "application/json"
    }
    assert files
    assert {media_type: schema.get("minLength") for media_type, schema in files.items()} == {
        media_type: 1 for media_type in files
    }


def test_the_text_policy_covers_the_names_of_a_request_map() -> None:
    # A control character in a knowledge action's parameter name is refused like one in its
    # value (the decoder checks every key); the contract says so for the names too
    document = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    parameters = document["components"]["schemas"]["CadActionInput"]["properties"]["parameters"]
    assert parameters["propertyNames"] == {"pattern": SINGLE_LINE_PATTERN}
