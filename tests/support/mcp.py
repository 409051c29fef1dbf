"""The MCP function's handler in-process, spoken to by the official SDK client.

The SDK client's HTTP client gets a transport that turns each request into the REST proxy
event API Gateway would send after the partner authorizer, calls the function's handler
(moto tables), and turns the proxy answer back into an HTTP response. So the client, the
protocol and the function are real; only the network and the gateway are short-circuited.
"""

import asyncio
import copy
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from local.demo import DEMO_KNOWLEDGE
from local.demo_knowledge import seed_knowledge_cards
from local.demo_tenant_data import TenantDataset, generate, load
from psap.clock import utc_now
from psap.knowledge.store import NewEntry, create_entry
from tests.support.harness import HandlerHarness, with_caller

URL = "https://api.example.test/prod/mcp"
ALL_READS = "BROWSE_EVENTS,VIEW_KNOWLEDGE,VIEW_QA,MANAGE_PHASES"


class McpHarness(HandlerHarness):
    """The MCP endpoint's handler behind an httpx transport, so the SDK client talks to it;
    every exchange is kept."""

    def prepare(self) -> None:
        self.handler("mcp")  # imported here, before any test step, as it always was
        self.sample = self.load_event("mcp")
        self.exchanges: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def event(
        self,
        method: str,
        headers: list[tuple[str, str]],
        body: bytes,
        *,
        tenant: int,
        permissions: str,
        kind: str = "partner",
    ) -> dict[str, Any]:
        event = copy.deepcopy(self.sample)
        event["httpMethod"] = method
        event["requestContext"]["httpMethod"] = method
        single: dict[str, str] = {}
        multi: dict[str, list[str]] = {}
        for name, value in headers:
            single[name] = value
            multi.setdefault(name, []).append(value)
        event["headers"], event["multiValueHeaders"] = single, multi
        event["body"] = body.decode("utf-8") if body else None
        with_caller(event, tenant, permissions, kind=kind)
        return event

    def invoke(self, event: dict[str, Any]) -> dict[str, Any]:
        """The endpoint's answer to `event`, kept with it."""
        answer: dict[str, Any] = self.call_handler("mcp", event)
        self.exchanges.append((event, answer))
        return answer

    def post(
        self,
        body: bytes | dict[str, Any] | list[Any],
        tenant: int,
        permissions: str = ALL_READS,
        *,
        headers: dict[str, str] | None = None,
        method: str = "POST",
    ) -> tuple[int, Any, dict[str, str]]:
        """One raw HTTP exchange: status, parsed JSON body (None when empty), headers."""
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        sent = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **(headers or {}),
        }
        answer = self.invoke(
            self.event(method, list(sent.items()), raw, tenant=tenant, permissions=permissions)
        )
        text = answer.get("body") or ""
        return answer["statusCode"], json.loads(text) if text else None, answer["headers"]

    def transport(self, tenant: int, permissions: str) -> httpx2.MockTransport:
        def respond(request: httpx2.Request) -> httpx2.Response:
            event = self.event(
                request.method,
                list(request.headers.multi_items()),
                request.content,
                tenant=tenant,
                permissions=permissions,
            )
            answer = self.invoke(event)
            return httpx2.Response(
                answer["statusCode"],
                headers=answer.get("headers") or {},
                content=(answer.get("body") or "").encode(),
            )

        return httpx2.MockTransport(respond)

    def session[T](
        self,
        work: Callable[[Client], Awaitable[T]],
        tenant: int,
        permissions: str = ALL_READS,
        *,
        mode: str = "auto",
    ) -> T:
        """Runs `work` with a connected SDK client (mode 'auto' negotiates 2026-07-28 through
        server/discover; 'legacy' does the initialize handshake)."""

        async def run() -> T:
            http = httpx2.AsyncClient(transport=self.transport(tenant, permissions))
            async with http, Client(streamable_http_client(URL, http_client=http), mode=mode) as c:
                return await work(c)

        return asyncio.run(run())


def seed_tenant(tenant: int, seed: int = 4101) -> TenantDataset:
    """A small demo tenant (10 users, 12 evaluations, 4 incidents with their events)."""
    dataset = generate(
        seed,
        tenant,
        tenant * 1000,
        user_count=10,
        evaluation_count=12,
        incident_count=4,
        domain=f"t{tenant}.example",
    )
    load(dataset, tenant, datetime(2026, 1, 5, tzinfo=UTC))
    return dataset


def seed_cards(tenant: int) -> list[int]:
    """The demo's Lakeshore cards (with content and links) after their link targets."""
    name = "Lakeshore Emergency Communications"
    for title, provider, knowledge_type, external_id in DEMO_KNOWLEDGE[name]:
        entry = NewEntry(title, provider, knowledge_type, external_id=external_id)
        create_entry(tenant, entry, utc_now())
    return seed_knowledge_cards(tenant, name)
