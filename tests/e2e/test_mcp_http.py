"""The MCP endpoint over real HTTP through the local stack (gateway, partner authorizer, the
MCP function), spoken to by the official Python SDK client as a user would connect it, and
compared with the REST endpoints of the same stack."""

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.e2e

API = "/api/v1/external"


def token(stack: dict[str, Any], label: str = "admin", tenant: int = 0) -> str:
    value: str = stack["tenants"][tenant]["credentials"][label]
    return value


def facts(stack: dict[str, Any], tenant: int = 0) -> dict[str, Any]:
    data: dict[str, Any] = stack["tenants"][tenant]["tenantData"]
    return data


def connect[T](
    stack: dict[str, Any], bearer: str, work: Callable[[Client], Awaitable[T]], mode: str = "auto"
) -> T:
    """What docs/mcp.md shows: the SDK client with the token on its HTTP client."""

    async def run() -> T:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"}, timeout=60)
        url = stack["baseUrl"] + "/mcp"
        async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as c:
            return await work(c)

    return asyncio.run(run())


def rest(stack: dict[str, Any], path: str, bearer: str, **params: Any) -> Any:
    answer = httpx.get(
        stack["baseUrl"] + API + path,
        headers={"Authorization": f"Bearer {bearer}"},
        params=params,
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_an_sdk_client_lists_the_tools_and_templates(stack: dict[str, Any], mode: str) -> None:
    async def work(client: Client) -> tuple[str, set[str], set[str]]:
        tools = await client.list_tools()
        templates = await client.list_resource_templates()
        return (
            client.protocol_version,
            {tool.name for tool in tools.tools},
            {template.uri_template for template in templates.resource_templates},
        )

    version, tools, templates = connect(stack, token(stack), work, mode)
    assert version == ("2026-07-28" if mode == "auto" else "2025-11-25")
    assert tools == {
        "search_resource_center",
        "get_incident",
        "get_event",
        "get_knowledge_card",
        "list_knowledge",
        "list_user_evaluations",
        "list_user_enrollments",
    }
    assert templates == {
        "psap://incidents/{incidentId}",
        "psap://events/{eventId}",
        "psap://knowledge/{knowledgeId}/card",
    }


def digested_card(stack: dict[str, Any], bearer: str) -> int:
    """The demo guide card with content, once the stack's digest worker has made its card
    (a comparison must not straddle PENDING -> READY)."""
    knowledge_id: int = stack["tenants"][0]["knowledgeIds"][-1]
    deadline = time.monotonic() + 60
    path = f"/mcp/resources/knowledge/{knowledge_id}/card"
    while rest(stack, path, bearer)["processingStatus"] == "PENDING":
        assert time.monotonic() < deadline, "the demo card was never digested"
        time.sleep(0.5)
    return knowledge_id


def test_every_tool_answers_what_rest_answers_for_the_same_tenant(stack: dict[str, Any]) -> None:
    data, admin = facts(stack), token(stack)
    knowledge_id = digested_card(stack, admin)
    incident_id, event_id = data["incidentIds"][0], data["eventIds"][0]
    cases: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = [
        (
            "get_incident",
            {"incident_id": incident_id},
            f"/mcp/resources/incidents/{incident_id}",
            {},
        ),
        ("get_event", {"event_id": event_id}, f"/mcp/resources/events/{event_id}", {}),
        (
            "get_knowledge_card",
            {"knowledge_id": knowledge_id},
            f"/mcp/resources/knowledge/{knowledge_id}/card",
            {},
        ),
        (
            "list_knowledge",
            {"provider": "NENA-Standards", "size": 3},
            "/knowledge",
            {"provider": "NENA-Standards", "size": 3},
        ),
        (
            "list_user_evaluations",
            {"user_id": data["evaluatedUserId"], "size": 2},
            f"/qa/user/{data['evaluatedUserId']}/evaluations",
            {"size": 2},
        ),
        (
            "list_user_enrollments",
            {"user_id": data["traineeId"]},
            f"/train/user/{data['traineeId']}/enrollments",
            {},
        ),
        (
            "search_resource_center",
            {"query": "cardiac arrest compressions", "page_size": 5},
            "/mcp/resources/resource-center/search",
            {"q": "cardiac arrest compressions", "pageSize": 5},
        ),
    ]

    async def work(client: Client) -> list[Any]:
        return [await client.call_tool(name, arguments) for name, arguments, _, _ in cases]

    results = connect(stack, admin, work)
    for (name, _, path, params), result in zip(cases, results, strict=True):
        expected = rest(stack, path, admin, **params)
        assert not result.is_error, (name, result.content)
        assert result.structured_content == expected, name
        assert json.loads(result.content[0].text) == expected, name
    assert results[-1].structured_content["results"], "the demo catalog answers the search"


def test_templates_read_the_rest_body(stack: dict[str, Any]) -> None:
    data, admin = facts(stack), token(stack)
    knowledge_id = digested_card(stack, admin)
    paths = {
        f"psap://incidents/{data['incidentIds'][1]}": (
            f"/mcp/resources/incidents/{data['incidentIds'][1]}"
        ),
        f"psap://events/{data['eventIds'][1]}": f"/mcp/resources/events/{data['eventIds'][1]}",
        f"psap://knowledge/{knowledge_id}/card": f"/mcp/resources/knowledge/{knowledge_id}/card",
    }

    async def work(client: Client) -> dict[str, Any]:
        read = {}
        for uri in paths:
            contents = (await client.read_resource(uri)).contents
            read[uri] = json.loads(contents[0].text)  # type: ignore[union-attr]
        return read

    read = connect(stack, admin, work, mode="legacy")
    assert read == {uri: rest(stack, path, admin) for uri, path in paths.items()}


@pytest.mark.spec("data-auth-rule-2")
def test_permissions_come_from_the_rest_table(stack: dict[str, Any]) -> None:
    data = facts(stack)

    async def work(client: Client) -> tuple[Any, Any, Any]:
        card = await client.call_tool("list_knowledge", {})
        enrollments = await client.call_tool(
            "list_user_enrollments", {"user_id": data["traineeId"]}
        )
        incident = await client.call_tool("get_incident", {"incident_id": data["incidentIds"][0]})
        return card, enrollments, incident

    # readOnly: VIEW_KNOWLEDGE, BROWSE_EVENTS, VIEW_QA; no MANAGE_PHASES.
    knowledge, enrollments, incident = connect(stack, token(stack, "readOnly"), work)
    assert not knowledge.is_error and not incident.is_error
    assert enrollments.is_error
    assert json.loads(enrollments.content[0].text) == {
        "info": "Access denied — Manage Phases permission required",
        "reason": "FORBIDDEN",
    }
    # noKnowledge: the knowledge list is refused with the REST 403 text.
    knowledge, _, _ = connect(stack, token(stack, "noKnowledge"), work)
    assert json.loads(knowledge.content[0].text)["info"] == (
        "Access denied — View Knowledge or Manage Knowledge permission required"
    )


@pytest.mark.spec("service-tenant-from-credential")
def test_a_tenant_reads_its_own_data_only(stack: dict[str, Any]) -> None:
    theirs = facts(stack, tenant=1)
    their_incident, their_event = theirs["incidentIds"][0], theirs["eventIds"][0]

    async def work(client: Client) -> tuple[Any, Any, MCPError]:
        incident = await client.call_tool("get_incident", {"incident_id": their_incident})
        enrollments = await client.call_tool(
            "list_user_enrollments", {"user_id": theirs["traineeId"]}
        )
        with pytest.raises(MCPError) as refused:
            await client.read_resource(f"psap://events/{their_event}")
        return incident, enrollments, refused.value

    incident, enrollments, refused = connect(stack, token(stack, tenant=0), work)
    assert json.loads(incident.content[0].text)["reason"] == "NOT_FOUND"
    assert json.loads(enrollments.content[0].text)["reason"] == "NOT_FOUND"
    assert refused.error.message == "Resource not found"
    # The owner reads it.
    own = connect(
        stack,
        token(stack, tenant=1),
        lambda client: client.call_tool("get_incident", {"incident_id": their_incident}),
    )
    assert not own.is_error and own.structured_content["id"] == their_incident


def test_the_gateway_serves_mcp_behind_the_partner_authorizer(stack: dict[str, Any]) -> None:
    url = stack["baseUrl"] + "/mcp"
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    unauthenticated = {"info": "Authentication required", "reason": "UNAUTHENTICATED"}
    for headers in (
        {},
        {"Authorization": "Bearer psap_partner_not-a-real-token"},
        {"Authorization": f"Bearer {token(stack, 'cad')}"},
    ):
        answer = httpx.post(url, json=message, headers=headers, timeout=30)
        assert (answer.status_code, answer.json()) == (401, unauthenticated), headers
    admin = {"Authorization": f"Bearer {token(stack)}"}
    for method in ("GET", "DELETE"):
        answer = httpx.request(method, url, headers=admin, timeout=30)
        assert (answer.status_code, answer.headers["Allow"]) == (405, "POST")
        assert answer.json()["reason"] == "METHOD_NOT_ALLOWED"
    batch = httpx.post(url, json=[message, message], headers=admin, timeout=30)
    assert (batch.status_code, batch.json()["error"]["code"]) == (400, -32600)
    garbage = httpx.post(
        url, content=b"\xff{", headers={**admin, "Content-Type": "application/json"}, timeout=30
    )
    assert (garbage.status_code, garbage.json()["error"]["code"]) == (400, -32700)
    fine = httpx.post(url, json=message, headers=admin, timeout=30)
    assert fine.status_code == 200 and len(fine.json()["result"]["tools"]) == 7
