"""One POST to the MCP endpoint: decode, route by era, call the method, shape the answer.

Stateless by design: nothing is kept between POSTs, so any container answers any message
and `initialize` creates no session. The methods are the tools and resource templates of
psap.mcp.catalog; a tool call checks the permission of its REST operation, calls the same
logic, and answers the REST body as structured content plus the same JSON as text.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Final

from pydantic import ValidationError

from psap.errors import DomainError, InvalidInput, NotFound, PermissionDenied, StoreUnavailable
from psap.http.principal import Principal
from psap.mcp.catalog import RESOURCE_TEMPLATES, TOOLS, TOOLS_BY_NAME, Tool, resource_for
from psap.mcp.protocol import (
    HANDSHAKE_VERSIONS,
    HEADER_MISMATCH,
    HEADERLESS_VERSION,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MODERN_ERROR_STATUS,
    MODERN_VERSIONS,
    PERMISSION_DENIED,
    ROUTING_HEADERS,
    SERVER_INFO_META,
    SUPPORTED_VERSIONS,
    Message,
    RequestId,
    RpcError,
    decode_body,
    is_structured,
    modern_envelope,
    negotiate,
    parse_message,
    unsupported_version,
)
from psap.observability import logger

SERVER_INFO: Final = {
    "name": "psap-mcp",
    "title": "PSAP incidents, events, knowledge, QA, training and resource center",
    "version": "1.0.0",
}
INSTRUCTIONS: Final = (
    "Read-only access to one emergency-communications center's (911 PSAP) data, scoped to "
    "the credential's center: incidents and their events, knowledge cards (guide and "
    "instruction cards), QA evaluations and training enrollments of users, and the resource "
    "center. Ids are integers. A tool answers the same JSON as the center's REST API. A "
    "missing permission or an unknown id is reported in the tool result."
)
CAPABILITIES: Final = {
    "tools": {"listChanged": False},
    "resources": {"subscribe": False, "listChanged": False},
}
# 2026-07-28 cache hints: the catalog changes only with a deployment; tenant data at any time.
CATALOG_TTL_MS: Final = 300_000
LEGACY_METHODS: Final = frozenset(
    {"initialize", "ping", "tools/list", "tools/call", "resources/list"}
    | {"resources/templates/list", "resources/read"}
)
MODERN_METHODS: Final = (LEGACY_METHODS - {"initialize", "ping"}) | {"server/discover"}
READ_ANNOTATIONS: Final = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}
UNAVAILABLE: Final = "The service is temporarily unavailable; retry later"


@dataclass
class Audit:
    """What the audit record of the POST says: the REST operation a tool call or resource
    read reached (None for protocol messages), its status as REST would have answered, and
    the ids it named."""

    operation_id: str | None = None
    status: int = 200
    resource_ids: dict[str, str] = field(default_factory=dict)


@dataclass
class Reply:
    status: int
    body: dict[str, Any] | None  # None: 202 Accepted, no body
    audit: Audit


@dataclass(frozen=True)
class Call:
    """The parts of a request every method may need."""

    message: Message
    version: str
    modern: bool
    principal: Principal
    audit: Audit


def handle_post(
    principal: Principal, headers: Mapping[str, str], repeated: frozenset[str], *, body: bytes
) -> Reply:
    """`headers`: lowercase names, one value each; `repeated`: names sent more than once."""
    audit = Audit()
    request_id: RequestId | None = None
    header_version = headers.get("mcp-protocol-version")
    # As the SDK's server routes: a handshake version or none is the handshake era.
    modern = header_version is not None and header_version not in HANDSHAKE_VERSIONS
    try:
        message = parse_message(decode_body(body))
        request_id = message.request_id
        if modern and repeated & ROUTING_HEADERS:
            raise RpcError(HEADER_MISMATCH, "A routing header appears more than once")
        if message.is_notification:
            # Nothing to act on without a session (cancellation is closing the stream).
            if modern and header_version not in MODERN_VERSIONS:
                raise unsupported_version(str(header_version))
            return Reply(202, None, audit)
        version = (
            modern_envelope(message, headers).protocol_version
            if modern
            else header_version or HEADERLESS_VERSION
        )
        call = Call(message, version, modern, principal, audit)
        result = _dispatch(call)
        if modern:
            result = _modern_result(message.method, result)
        return Reply(200, {"jsonrpc": "2.0", "id": request_id, "result": result}, audit)
    except RpcError as error:
        if audit.operation_id is not None and audit.status == 200:
            audit.status = 403 if error.code == PERMISSION_DENIED else 400
        if error.status is not None:
            status = error.status
        else:
            status = MODERN_ERROR_STATUS.get(error.code, 200) if modern else 200
        return Reply(status, error.body(request_id), audit)


def _dispatch(call: Call) -> dict[str, Any]:
    method = call.message.method
    if method not in (MODERN_METHODS if call.modern else LEGACY_METHODS):
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
    params = call.message.params
    match method:
        case "initialize":
            return {
                "protocolVersion": negotiate(params.get("protocolVersion")),
                "capabilities": CAPABILITIES,
                "serverInfo": SERVER_INFO,
                "instructions": INSTRUCTIONS,
            }
        case "server/discover":
            return {
                "supportedVersions": list(SUPPORTED_VERSIONS),
                "capabilities": CAPABILITIES,
                "instructions": INSTRUCTIONS,
            }
        case "ping":
            return {}
        case "tools/list":
            return {"tools": [tool_listing(tool, call.version, call.modern) for tool in TOOLS]}
        case "tools/call":
            return _call_tool(call)
        case "resources/list":
            # Every resource is a template instance: nothing to enumerate without an id.
            return {"resources": []}
        case "resources/templates/list":
            return {"resourceTemplates": [_template_listing(t) for t in RESOURCE_TEMPLATES]}
        case _:
            return _read_resource(call)


def _modern_result(method: str, result: dict[str, Any]) -> dict[str, Any]:
    shaped = {**result, "resultType": "complete", "_meta": {SERVER_INFO_META: SERVER_INFO}}
    if method == "resources/read":
        shaped.update(ttlMs=0, cacheScope="private")
    elif method in {"server/discover", "tools/list", "resources/list", "resources/templates/list"}:
        shaped.update(ttlMs=CATALOG_TTL_MS, cacheScope="private")
    return shaped


# ---------------------------------------------------------------------------- listings


@cache
def input_schema(tool: Tool) -> dict[str, Any]:
    return tool.arguments.model_json_schema()


@cache
def output_schema(tool: Tool, wrapped: bool) -> dict[str, Any]:
    schema: dict[str, Any] = tool.output.json_schema(by_alias=True, mode="serialization")
    if not wrapped or tool.wrap_as is None:
        return schema
    definitions = schema.pop("$defs", None)
    wrapper: dict[str, Any] = {
        "type": "object",
        "properties": {tool.wrap_as: schema},
        "required": [tool.wrap_as],
        "additionalProperties": False,
    }
    if definitions is not None:
        wrapper["$defs"] = definitions
    return wrapper


def tool_listing(tool: Tool, version: str, modern: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": input_schema(tool),
    }
    if version != HANDSHAKE_VERSIONS[0]:
        entry["annotations"] = {"title": tool.title, **READ_ANNOTATIONS}
    if is_structured(version):
        entry["title"] = tool.title
        # Before 2026-07-28 structured content must be an object: an array is wrapped.
        entry["outputSchema"] = output_schema(tool, not modern)
    return entry


def _template_listing(template: Any) -> dict[str, Any]:
    return {
        "uriTemplate": template.uri_template,
        "name": template.name,
        "title": template.title,
        "description": template.description,
        "mimeType": "application/json",
    }


# ---------------------------------------------------------------------------- tool calls


def _call_tool(call: Call) -> dict[str, Any]:
    name = call.message.params.get("name")
    if not isinstance(name, str):
        raise RpcError(INVALID_PARAMS, "params.name must be the tool's name")
    tool = TOOLS_BY_NAME.get(name)
    if tool is None:
        raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
    raw = call.message.params.get("arguments")
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise RpcError(INVALID_PARAMS, "params.arguments must be an object")
    try:
        body = _read(call, tool, raw)
    except _ReadRefused as refusal:
        return {
            "content": [{"type": "text", "text": _json(refusal.error_info)}],
            "isError": True,
        }
    answer: dict[str, Any] = {"content": [{"type": "text", "text": _json(body)}], "isError": False}
    if is_structured(call.version):
        wrap = tool.wrap_as is not None and not call.modern
        answer["structuredContent"] = {tool.wrap_as: body} if wrap and tool.wrap_as else body
    return answer


class _ReadRefused(Exception):
    """The REST operation would have answered 403, 404 or 503: a result the model can read."""

    def __init__(self, status: int, info: str, reason: str) -> None:
        super().__init__(info)
        self.status = status
        self.error_info = {"info": info, "reason": reason}


def _read(call: Call, tool: Tool, raw: dict[str, Any]) -> Any:
    """The REST body of the tool's operation, checked and audited as REST checks it:
    permission first, then the arguments, then the logic."""
    operation = tool.operation
    call.audit.operation_id = operation.operation_id
    if not call.principal.has_any(operation.any_of):
        call.audit.status = 403
        raise _ReadRefused(403, operation.denial, "FORBIDDEN")
    try:
        # JSON mode: strict types as JSON has them (enums from strings, no "5" for 5).
        arguments = tool.arguments.model_validate_json(json.dumps(raw))
    except ValidationError as error:
        raise RpcError(INVALID_PARAMS, describe(error), {"tool": tool.name}) from None
    call.audit.resource_ids = tool.resource_ids(arguments)
    try:
        result = tool.run(call.principal, arguments)
    except NotFound as error:
        call.audit.status = 404
        raise _ReadRefused(404, error.info, error.reason) from None
    except PermissionDenied as error:
        call.audit.status = 403
        raise _ReadRefused(403, error.info, error.reason) from None
    except InvalidInput as error:
        raise RpcError(INVALID_PARAMS, error.info, {"tool": tool.name}) from None
    except DomainError as error:
        call.audit.status = 400
        raise _ReadRefused(400, error.info, error.reason) from None
    except StoreUnavailable:
        logger.exception("data store unavailable", extra={"tool": tool.name})
        call.audit.status = 503
        raise _ReadRefused(503, UNAVAILABLE, "SERVICE_UNAVAILABLE") from None
    return tool.output.dump_python(result, mode="json", by_alias=True)


def describe(error: ValidationError) -> str:
    """`Invalid argument 'incident_id': Input should be a valid integer`, per problem."""
    problems = []
    for detail in error.errors():
        location = ".".join(str(part) for part in detail.get("loc", ())) or "arguments"
        problems.append(f"Invalid argument '{location}': {detail.get('msg', 'is not valid')}")
    return "; ".join(problems)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------------------- resources


def _read_resource(call: Call) -> dict[str, Any]:
    uri = call.message.params.get("uri")
    if not isinstance(uri, str):
        raise RpcError(INVALID_PARAMS, "params.uri must be a string")
    found = resource_for(uri)
    if found is None:
        raise RpcError(INVALID_PARAMS, "Resource not found", {"uri": uri})
    template, resource_id = found
    try:
        body = _read(call, template.tool, {template.argument: resource_id})
    except _ReadRefused as refusal:
        if refusal.status == 404:
            raise RpcError(
                INVALID_PARAMS, "Resource not found", {"uri": uri, **refusal.error_info}
            ) from None
        code = PERMISSION_DENIED if refusal.status == 403 else -32603
        raise RpcError(code, refusal.error_info["info"], refusal.error_info) from None
    return {"contents": [{"uri": uri, "mimeType": "application/json", "text": _json(body)}]}
