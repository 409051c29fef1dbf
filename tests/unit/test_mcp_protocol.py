"""The MCP endpoint's protocol answers, checked against the official SDK's own per-version
result schemas (mcp_types.methods), without data: negotiation, listings, refusals."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_types.methods import validate_server_result

from psap.auth.permissions import Permission
from psap.http.principal import Principal
from psap.knowledge import listing as knowledge_listing
from psap.mcp import catalog
from psap.mcp.protocol import HANDSHAKE_VERSIONS, MODERN_VERSIONS
from psap.mcp.server import handle_post
from psap.qa import listing as evaluation_listing

ROOT = Path(__file__).resolve().parents[2]
PRINCIPAL = Principal(1, "cred-unit", frozenset(Permission))
MODERN = MODERN_VERSIONS[0]


def post(message: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    reply = handle_post(PRINCIPAL, headers or {}, frozenset(), body=json.dumps(message).encode())
    return reply.status, reply.body


def modern(method: str, params: dict[str, Any] | None = None) -> tuple[int, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    headers = {"mcp-protocol-version": MODERN, "mcp-method": method}
    if method == "resources/read":
        headers["mcp-name"] = (params or {})["uri"]
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {**(params or {}), "_meta": meta},
    }
    return post(message, headers)


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_handshake_results_conform_to_the_sdk_schemas_of_each_version(version: str) -> None:
    status, body = post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {}},
        }
    )
    assert status == 200 and body["result"]["protocolVersion"] == version
    validate_server_result("initialize", version, body["result"])
    for method in ("tools/list", "resources/templates/list", "resources/list", "ping"):
        status, body = post(
            {"jsonrpc": "2.0", "id": 2, "method": method}, {"mcp-protocol-version": version}
        )
        assert status == 200, body
        validate_server_result(method, version, body["result"])
    tools = post(
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, {"mcp-protocol-version": version}
    )[1]["result"]["tools"]
    structured = HANDSHAKE_VERSIONS.index(version) >= HANDSHAKE_VERSIONS.index("2025-06-18")
    assert all(("outputSchema" in tool) == structured for tool in tools)
    # Before 2026-07-28 structured content is an object: every output schema says so.
    assert all(tool["outputSchema"]["type"] == "object" for tool in tools if structured)


def test_an_unknown_client_version_gets_our_newest_handshake_version() -> None:
    _, body = post(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "1999"}}
    )
    assert body["result"]["protocolVersion"] == HANDSHAKE_VERSIONS[-1]


def test_modern_results_conform_and_carry_result_type_and_cache_hints() -> None:
    for method in ("server/discover", "tools/list", "resources/templates/list", "resources/list"):
        status, body = modern(method)
        assert status == 200, body
        validate_server_result(method, MODERN, body["result"])
        assert body["result"]["resultType"] == "complete"
        assert body["result"]["cacheScope"] == "private"
    assert MODERN in modern("server/discover")[1]["result"]["supportedVersions"]


def test_modern_requests_that_disagree_with_their_headers_are_400() -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
    status, body = post(message, {"mcp-protocol-version": MODERN, "mcp-method": "tools/call"})
    assert (status, body["error"]["code"]) == (400, -32020)
    status, body = post(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {"mcp-protocol-version": "2031-01-01"}
    )
    assert (status, body["error"]["code"]) == (400, -32602)  # no _meta envelope
    unknown = {**meta, "io.modelcontextprotocol/protocolVersion": "2031-01-01"}
    status, body = post(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": unknown}},
        {"mcp-protocol-version": "2031-01-01", "mcp-method": "tools/list"},
    )
    assert (status, body["error"]["code"]) == (400, -32022)
    # Every version we speak is named, so an SDK client falls back to the handshake.
    assert set(HANDSHAKE_VERSIONS) <= set(body["error"]["data"]["supported"])


def test_methods_of_the_other_era_are_not_found() -> None:
    status, body = modern("ping")
    assert (status, body["error"]["code"]) == (404, -32601)
    status, body = post({"jsonrpc": "2.0", "id": 1, "method": "server/discover"})
    assert (status, body["error"]["code"]) == (200, -32601)


def test_notifications_are_accepted_without_a_body() -> None:
    reply = handle_post(
        PRINCIPAL,
        {},
        frozenset(),
        body=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(),
    )
    assert (reply.status, reply.body) == (202, None)


def test_the_catalogs_paging_is_the_rest_lists() -> None:
    assert catalog.KNOWLEDGE_PAGE_SIZE == knowledge_listing.DEFAULT_PAGE_SIZE
    assert catalog.KNOWLEDGE_MAX_PAGE_SIZE == knowledge_listing.MAX_PAGE_SIZE
    assert catalog.EVALUATION_PAGE_SIZE == evaluation_listing.DEFAULT_PAGE_SIZE
    assert catalog.EVALUATION_MAX_PAGE_SIZE == evaluation_listing.MAX_PAGE_SIZE


def test_every_tool_needs_the_permission_of_its_rest_operation() -> None:
    operations = {tool.name: tool.operation.operation_id for tool in catalog.TOOLS}
    assert operations == {
        "search_resource_center": "searchResourceCenter",
        "get_incident": "getIncident",
        "get_event": "getEvent",
        "get_knowledge_card": "getKnowledgeCard",
        "list_knowledge": "listKnowledge",
        "list_user_evaluations": "listEvaluations",
        "list_user_enrollments": "listEnrollments",
    }


def test_starting_the_function_imports_no_areas_logic_or_search_engine() -> None:
    # Each tool imports its area when first used: the QA and training models, the stores
    # and the search engine are not the cold start of a container that never needs them.
    heavy = (
        "psap.qa",
        "psap.training",
        "psap.incidents.models",
        "psap.incidents.store",
        "psap.events",
        "psap.knowledge.card",
        "psap.knowledge.store",
        "psap.resource_center.search",
        "onnxruntime",
        "numpy",
    )
    probe = (
        "import sys; sys.path.insert(0, 'functions/mcp'); import app; "
        f"print(sorted(m for m in sys.modules if m.startswith({heavy!r})))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "layers" / "shared"), "AWS_DEFAULT_REGION": "us-east-1"},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert completed.stdout.strip() == "[]"
