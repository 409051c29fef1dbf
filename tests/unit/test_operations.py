"""The permission table and the template's routes must agree, both ways."""

import json
from pathlib import Path

import pytest

from local.template import load_template
from psap.auth.permissions import Permission
from psap.console.paths import api_resource, is_console_api
from psap.errors import InvalidInput
from psap.http.body import decode_body
from psap.http.operations import ADMIN_API_PREFIX, OPERATIONS, RADIO_TRAFFIC_JSON_PATH
from psap.http.resolver import refuse_query


def template_routes() -> set[tuple[str, str]]:
    """The template's declared methods; ANY (every resource's 405 answer) is not one."""
    template = load_template()
    return {
        (event.method.upper(), event.path)
        for _, event in template.api_events()
        if event.method.upper() != "ANY"
    }


@pytest.mark.spec("data-auth-rule-2")
def test_every_route_of_the_template_declares_its_permissions() -> None:
    # A console API route is its admin operation (psap.console.paths).
    missing = {(method, api_resource(path)) for method, path in template_routes()} - set(OPERATIONS)
    assert not missing, f"routes without an entry in psap.http.operations: {missing}"


def test_every_declared_operation_is_a_route_of_the_template() -> None:
    stale = set(OPERATIONS) - template_routes()
    assert not stale, f"operations no route serves: {stale}"


@pytest.mark.spec("endpoints-permission-knowledge-list")
def test_knowledge_list_needs_view_or_manage_knowledge() -> None:
    operation = OPERATIONS[("GET", "/api/v1/external/knowledge")]
    assert operation.any_of == (Permission.VIEW_KNOWLEDGE, Permission.MANAGE_KNOWLEDGE)
    assert not operation.public


def test_operation_ids_are_unique() -> None:
    ids = [operation.operation_id for operation in OPERATIONS.values()]
    assert len(ids) == len(set(ids))


def test_the_console_reaches_every_admin_operation_but_the_sign_in_link_and_nothing_else() -> None:
    routes = template_routes()
    console = {(method, api_resource(path)) for method, path in routes if is_console_api(path)}
    admin = {
        key
        for key in OPERATIONS
        if key[1].startswith(ADMIN_API_PREFIX) or key[1].startswith("/api/v1/external/audit-log/")
    }
    assert console == admin - {("POST", "/api/v1/external/admin/console-links")}


def _openapi_json_bodies() -> set[tuple[str, str]]:
    """(method, path) of every operation whose OpenAPI request body is JSON."""
    document = json.loads(Path("functions/api_docs/openapi.json").read_text())
    return {
        (method.upper(), path)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        if isinstance(operation, dict)
        and "application/json" in (operation.get("requestBody") or {}).get("content", {})
    }


@pytest.mark.parametrize("raw", ["[null, null]", "[]", '"text"', "7", "true"])
def test_a_json_body_that_is_not_an_object_is_400_for_every_operation(raw: str) -> None:
    # Every JSON body of the API is an object; an optional one of another JSON type would
    # otherwise be taken for no body at all (the tenant export once answered 202 to this).
    for key in sorted(_openapi_json_bodies()):
        rule = OPERATIONS[key].body
        assert rule is not None, key
        event = {"body": raw, "headers": {"Content-Type": "application/json"}}
        with pytest.raises(InvalidInput, match="must be a JSON object"):
            decode_body(event, rule)


def test_null_is_the_same_as_no_body() -> None:
    rule = OPERATIONS[("POST", "/api/v1/external/admin/tenant-exports")].body
    assert rule is not None
    assert decode_body({"body": "null", "headers": {"Content-Type": "application/json"}}, rule)


def test_an_operation_without_query_parameters_refuses_any_with_its_hint() -> None:
    operation = OPERATIONS[("POST", RADIO_TRAFFIC_JSON_PATH)]
    assert operation.no_query is not None
    event = {"multiValueQueryStringParameters": {"channel": ["C2"], "eventId": ["E1"]}}
    with pytest.raises(InvalidInput, match=r"query parameters \(channel, eventId\): give"):
        refuse_query(event, operation.no_query)
    refuse_query({"queryStringParameters": None}, operation.no_query)
