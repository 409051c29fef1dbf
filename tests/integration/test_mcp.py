"""The MCP function in-process on moto tables, spoken to by the official SDK client (both
protocol eras), compared with the REST functions that share its logic."""

import io
import json
from collections.abc import Callable
from contextlib import redirect_stdout
from types import ModuleType
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from psap.clock import utc_now
from psap.config import search_index_bucket
from psap.mcp.protocol import MAX_BODY_BYTES
from psap.resource_center import catalog
from psap.resource_center.indexing import rebuild_index
from psap.resource_center.search import forget_loaded_index
from psap.storage.dynamodb import dynamodb
from psap.storage.s3 import s3
from tests.support.audit import queued_records
from tests.support.harness import answer_of, with_caller, with_path, with_query
from tests.support.mcp import ALL_READS, McpHarness, seed_cards, seed_tenant
from tools.lint_template import translated_template

TENANT, OTHER = 71, 72
TOOL_ARGUMENTS = {
    "search_resource_center": {"query", "item_type", "page_size"},
    "get_incident": {"incident_id"},
    "get_event": {"event_id"},
    "get_knowledge_card": {"knowledge_id"},
    "list_knowledge": {"provider", "knowledge_type", "page", "size"},
    "list_user_evaluations": {"user_id", "page", "size"},
    "list_user_enrollments": {"user_id"},
}
TEMPLATES = {
    "psap://incidents/{incidentId}",
    "psap://events/{eventId}",
    "psap://knowledge/{knowledgeId}/card",
}


@pytest.fixture
def harness(
    aws: None,
    import_function: Callable[[str], ModuleType],
    load_event: Callable[[str], dict[str, Any]],
    lambda_context: Any,
) -> McpHarness:
    return McpHarness(import_function, load_event, lambda_context)


@pytest.fixture
def rest(
    aws: None,
    import_function: Callable[[str], ModuleType],
    load_event: Callable[[str], dict[str, Any]],
    lambda_context: Any,
) -> Callable[..., tuple[int, Any]]:
    """GET through a REST function's own handler, for the same tenant."""

    def get(
        function: str,
        path: dict[str, str] | None = None,
        query: dict[str, str] | None = None,
        tenant: int = TENANT,
    ) -> tuple[int, Any]:
        event = load_event(function)
        if path is not None:
            with_path(event, path)
        with_query(event, query)
        with_caller(event, tenant, ALL_READS)
        with redirect_stdout(io.StringIO()):
            status, body, _ = answer_of(import_function(function).handler(event, lambda_context))
        return status, body

    return get


def call(harness: McpHarness, name: str, arguments: dict[str, Any], **options: Any) -> Any:
    async def work(client: Client) -> Any:
        return await client.call_tool(name, arguments)

    with redirect_stdout(io.StringIO()):
        return harness.session(work, TENANT, **options)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_sdk_client_negotiates_and_lists_the_tools_and_templates(
    harness: McpHarness, mode: str
) -> None:
    async def work(client: Client) -> tuple[str, Any, Any]:
        tools = await client.list_tools()
        templates = await client.list_resource_templates()
        return client.protocol_version, tools, templates

    with redirect_stdout(io.StringIO()):
        version, tools, templates = harness.session(work, TENANT, mode=mode)
    assert version == ("2026-07-28" if mode == "auto" else "2025-11-25")
    listed = {tool.name: set(tool.input_schema["properties"]) for tool in tools.tools}
    assert listed == TOOL_ARGUMENTS
    for tool in tools.tools:
        assert tool.description and len(tool.description) > 80
        assert tool.output_schema is not None
        assert tool.input_schema.get("additionalProperties") is False
    assert {template.uri_template for template in templates.resource_templates} == TEMPLATES
    # Stateless: no session id was ever handed out, so nothing to resume or delete.
    assert not any("Mcp-Session-Id" in answer["headers"] for _, answer in harness.exchanges)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_each_tool_answers_the_rest_body_as_structured_content_and_text(
    harness: McpHarness, rest: Callable[..., tuple[int, Any]], mode: str
) -> None:
    dataset = seed_tenant(TENANT)
    cards = seed_cards(TENANT)
    incident, event = dataset.incidents[0], dataset.events[0]
    evaluated = next(e.user_id for e in dataset.evaluations if e.user_id is not None)
    trainee = next(e.user.id for e in dataset.enrollments if e.user is not None)
    cases: list[tuple[str, dict[str, Any], tuple[int, Any]]] = [
        (
            "get_incident",
            {"incident_id": incident.id},
            rest("incident_get", {"incidentId": str(incident.id)}),
        ),
        ("get_event", {"event_id": event.id}, rest("event_get", {"eventId": str(event.id)})),
        (
            "get_knowledge_card",
            {"knowledge_id": cards[0]},
            rest("knowledge_card", {"knowledgeId": str(cards[0])}),
        ),
        (
            "list_knowledge",
            {"knowledge_type": "GUIDE_CARD", "size": 1},
            rest("knowledge_list", query={"knowledgeType": "GUIDE_CARD", "size": "1"}),
        ),
        (
            "list_user_evaluations",
            {"user_id": evaluated, "size": 2},
            rest("evaluations_list", {"userId": str(evaluated)}, {"size": "2"}),
        ),
        (
            "list_user_enrollments",
            {"user_id": trainee},
            rest("enrollments_list", {"userId": str(trainee)}),
        ),
    ]
    for name, arguments, (status, body) in cases:
        assert status == 200, (name, body)
        result = call(harness, name, arguments, mode=mode)
        assert not result.is_error, (name, result.content)
        assert json.loads(result.content[0].text) == body, name
        expected = body
        if name == "list_user_enrollments" and mode == "legacy":
            # Before 2026-07-28 structured content must be an object: the array is wrapped.
            expected = {"enrollments": body}
        assert result.structured_content == expected, name


@pytest.mark.spec("data-auth-rule-2")
def test_a_missing_permission_is_a_tool_error_naming_it(harness: McpHarness) -> None:
    dataset = seed_tenant(TENANT)

    async def work(client: Client) -> Any:
        return await client.call_tool("get_incident", {"incident_id": dataset.incidents[0].id})

    with redirect_stdout(io.StringIO()):
        result = harness.session(work, TENANT, permissions="VIEW_KNOWLEDGE")
    assert result.is_error
    assert json.loads(result.content[0].text) == {
        "info": "Access denied — Browse Events or Manage Events permission required",
        "reason": "FORBIDDEN",
    }


@pytest.mark.spec("service-tenant-from-credential")
def test_another_tenants_id_is_not_found_by_tool_and_by_resource(harness: McpHarness) -> None:
    theirs = seed_tenant(OTHER, seed=4102)
    incident_id = theirs.incidents[0].id

    async def work(client: Client) -> tuple[Any, MCPError]:
        result = await client.call_tool("get_incident", {"incident_id": incident_id})
        with pytest.raises(MCPError) as refused:
            await client.read_resource(f"psap://incidents/{incident_id}")
        return result, refused.value

    with redirect_stdout(io.StringIO()):
        result, refused = harness.session(work, TENANT)
    assert result.is_error
    assert json.loads(result.content[0].text) == {
        "info": f"incident {incident_id} not found",
        "reason": "NOT_FOUND",
    }
    assert refused.error.code == -32602 and refused.error.message == "Resource not found"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_resource_templates_read_as_the_rest_body(
    harness: McpHarness, rest: Callable[..., tuple[int, Any]], mode: str
) -> None:
    dataset = seed_tenant(TENANT)
    cards = seed_cards(TENANT)
    incident, event = dataset.incidents[1], dataset.events[1]
    expected = {
        f"psap://incidents/{incident.id}": rest("incident_get", {"incidentId": str(incident.id)}),
        f"psap://events/{event.id}": rest("event_get", {"eventId": str(event.id)}),
        f"psap://knowledge/{cards[1]}/card": rest("knowledge_card", {"knowledgeId": str(cards[1])}),
    }

    async def work(client: Client) -> dict[str, Any]:
        read = {}
        for uri in expected:
            contents = (await client.read_resource(uri)).contents
            assert len(contents) == 1 and contents[0].mime_type == "application/json"
            read[uri] = json.loads(contents[0].text)  # type: ignore[union-attr]
        return read

    with redirect_stdout(io.StringIO()):
        read = harness.session(work, TENANT, mode=mode)
    assert read == {uri: body for uri, (_, body) in expected.items()}


def test_wrong_arguments_and_unknown_names_are_json_rpc_errors_and_the_next_call_works(
    harness: McpHarness,
) -> None:
    dataset = seed_tenant(TENANT)
    incident_id = dataset.incidents[0].id

    async def work(client: Client) -> list[tuple[int, str]]:
        refusals = []
        for name, arguments in (
            ("get_incident", {"incident_id": str(incident_id)}),  # a string, not an integer
            ("get_incident", {"incident_id": incident_id, "extra": 1}),
            ("get_incident", {}),
            ("list_knowledge", {"knowledge_type": "RECIPE"}),
            ("search_resource_center", {"query": "   "}),
            ("no_such_tool", {}),
        ):
            with pytest.raises(MCPError) as refused:
                await client.call_tool(name, arguments)
            refusals.append((refused.value.error.code, refused.value.error.message))
        with pytest.raises(MCPError) as unknown:
            await client.read_resource("psap://users/1")
        refusals.append((unknown.value.error.code, unknown.value.error.message))
        after = await client.call_tool("get_incident", {"incident_id": incident_id})
        assert not after.is_error
        return refusals

    with redirect_stdout(io.StringIO()):
        refusals = harness.session(work, TENANT)
    assert [code for code, _ in refusals] == [-32602] * 7
    assert "incident_id" in refusals[0][1] and "extra" in refusals[1][1]
    assert "no_such_tool" in refusals[5][1]
    assert all(answer["statusCode"] < 500 for _, answer in harness.exchanges)


def test_transport_abuse_is_refused_without_a_5xx(harness: McpHarness) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    cases = [
        (b"{not json", 400, -32700),
        (json.dumps([request, request]).encode(), 400, -32600),  # a batch
        (json.dumps({**request, "params": {"x": "y" * MAX_BODY_BYTES}}).encode(), 413, -32600),
        (b"[" * 5000 + b"]" * 5000, 400, -32700),  # nesting
        (json.dumps({"jsonrpc": "2.0", "id": None, "method": "tools/list"}).encode(), 400, -32600),
        (json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}}).encode(), 400, -32600),
    ]
    with redirect_stdout(io.StringIO()):
        for body, status, code in cases:
            answered, payload, _ = harness.post(body, TENANT)
            assert (answered, payload["error"]["code"]) == (status, code), body[:60]
        answered, payload, _ = harness.post(request, TENANT, headers={"Content-Type": "text/plain"})
        assert (answered, payload["error"]["code"]) == (415, -32600)
        answered, payload, _ = harness.post(request, TENANT, headers={"Accept": "text/html"})
        assert (answered, payload["error"]["code"]) == (406, -32600)
        answered, payload, _ = harness.post(request, TENANT)
    assert answered == 200 and len(payload["result"]["tools"]) == 7


def test_get_and_delete_are_405_and_other_credentials_are_401(harness: McpHarness) -> None:
    with redirect_stdout(io.StringIO()):
        for method in ("GET", "DELETE"):
            status, body, headers = harness.post(b"", TENANT, method=method)
            assert (status, body["reason"], headers["Allow"]) == (405, "METHOD_NOT_ALLOWED", "POST")
        event = harness.event(
            "POST", [("Content-Type", "application/json")], b"{}", tenant=TENANT, permissions=""
        )
        event["requestContext"]["authorizer"]["kind"] = "cad"
        status, body, _ = answer_of(harness.invoke(event))
        unauthenticated = {"info": "Authentication required", "reason": "UNAUTHENTICATED"}
        assert (status, body) == (401, unauthenticated)
        del event["requestContext"]["authorizer"]
        status, body, _ = answer_of(harness.invoke(event))
        assert status == 401 and body["info"] == "Authentication required"


def test_every_tool_call_and_resource_read_is_an_audit_record_like_rest(
    harness: McpHarness,
) -> None:
    dataset = seed_tenant(TENANT)
    incident_id, event_id = dataset.incidents[0].id, dataset.events[0].id

    async def work(client: Client) -> None:
        await client.call_tool("get_incident", {"incident_id": incident_id})
        await client.read_resource(f"psap://events/{event_id}")
        await client.call_tool("get_incident", {"incident_id": 999_999_999})

    harness.session(work, TENANT, mode="legacy")
    records = queued_records()
    reads = [r for r in records if r["operation"] in {"getIncident", "getEvent"}]
    assert [(r["operation"], r["status"], r["resourceIds"]) for r in reads] == [
        ("getIncident", 200, {"incidentId": str(incident_id)}),
        ("getEvent", 200, {"eventId": str(event_id)}),
        ("getIncident", 404, {"incidentId": "999999999"}),
    ]
    for record in reads:
        assert (record["tenantId"], record["method"], record["path"]) == (TENANT, "POST", "/mcp")
        assert record["credentialKind"] == "partner" and record["credentialId"]
    # The protocol messages (initialize, its notification) are recorded too, as REST calls are.
    assert {r["operation"] for r in records} - {"getIncident", "getEvent"} == {"postMcpMessage"}
    assert len(records) == len(harness.exchanges)


def test_the_function_calls_only_the_aws_actions_its_template_policy_grants(
    harness: McpHarness,
) -> None:
    dataset = seed_tenant(TENANT)
    cards = seed_cards(TENANT)
    forget_loaded_index()  # a fresh container: the search loads the index artifact from S3
    catalog.import_catalog([HELP_ARTICLE], utc_now())
    rebuild_index(search_index_bucket())
    called: set[str] = set()

    def record(event_name: str, **_: Any) -> None:
        service, operation = event_name.split(".")[1:3]
        # S3's HeadObject is authorized as s3:GetObject.
        called.add(f"{service}:{'GetObject' if operation == 'HeadObject' else operation}")

    clients = (dynamodb(), s3())
    for client in clients:
        client.meta.events.register("before-call.*", record)
    try:
        for name, arguments in (
            ("get_incident", {"incident_id": dataset.incidents[0].id}),
            ("get_event", {"event_id": dataset.events[0].id}),
            ("get_knowledge_card", {"knowledge_id": cards[0]}),
            ("list_knowledge", {"page": 1, "size": 1}),
            ("list_user_evaluations", {"user_id": dataset.evaluations[0].user_id, "size": 1}),
            ("list_user_enrollments", {"user_id": dataset.users[0].id}),
            ("search_resource_center", {"query": "rebid wireless location"}),
        ):
            result = call(harness, name, arguments, mode="legacy")
            assert not result.is_error, (name, result.content)
    finally:
        for client in clients:
            client.meta.events.unregister("before-call.*", record)
    assert result.structured_content["results"], "the search found the article"
    # Every action used is granted, and every one granted is used: no more, no less.
    assert {action.lower() for action in called} == granted_actions()


HELP_ARTICLE = json.dumps(
    {
        "externalId": "help-rebid",
        "itemType": "HELP_ARTICLE",
        "title": "Rebidding ALI for a Wireless Caller",
        "summary": "Refresh the caller's location.",
        "body": "Press Rebid to refresh the caller's Phase II wireless location.",
        "category": "CAD How-To",
        "url": "https://resources.example.com/items/help-rebid",
        "published": True,
    }
)


def granted_actions() -> set[str]:
    """The actions of the MCP function's role in the SAM-translated template."""
    translated = translated_template()
    role = translated["Resources"]["McpFunctionRole"]["Properties"]
    actions: set[str] = set()
    for policy in role.get("Policies", []):
        for statement in policy["PolicyDocument"]["Statement"]:
            listed = statement["Action"]
            actions.update(a.lower() for a in ([listed] if isinstance(listed, str) else listed))
    return actions
