"""The Model Context Protocol's wire rules that the endpoint needs: versions, error codes,
the JSON-RPC envelope and the request envelope of the stateless 2026-07-28 revision.

Two eras are served, as the official Python SDK client negotiates them:
- the handshake era (2024-11-05 .. 2025-11-25): `initialize` negotiates a version, later
  POSTs carry it in the `MCP-Protocol-Version` header (absent means 2025-03-26). We keep no
  session: `initialize` answers without `Mcp-Session-Id`, so every POST stands alone;
- the stateless era (2026-07-28): no handshake; every request carries its version, client
  info and capabilities in `params._meta`, mirrored in the `MCP-Protocol-Version`,
  `Mcp-Method` and `Mcp-Name` headers. `server/discover` advertises what we support.
The SDK client probes `server/discover` first and falls back to `initialize`.
"""

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

HANDSHAKE_VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS: Final = ("2026-07-28",)
SUPPORTED_VERSIONS: Final = (*HANDSHAKE_VERSIONS, *MODERN_VERSIONS)
LATEST_HANDSHAKE_VERSION: Final = HANDSHAKE_VERSIONS[-1]
# What a handshake-era POST without the version header is taken to speak (spec 2025-06-18).
HEADERLESS_VERSION: Final = "2025-03-26"
# structuredContent and outputSchema exist from this revision on.
STRUCTURED_SINCE: Final = "2025-06-18"

PROTOCOL_VERSION_META: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_META: Final = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_META: Final = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_META: Final = "io.modelcontextprotocol/serverInfo"

VERSION_HEADER: Final = "mcp-protocol-version"
METHOD_HEADER: Final = "mcp-method"
NAME_HEADER: Final = "mcp-name"
ROUTING_HEADERS: Final = frozenset({VERSION_HEADER, METHOD_HEADER, NAME_HEADER})
# The params key each name-bearing method mirrors in the Mcp-Name header.
NAME_BEARING: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
HEADER_MISMATCH: Final = -32020
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
# Ours, in the implementation-defined band: the credential lacks the resource's permission.
PERMISSION_DENIED: Final = -32010

# The 2026-07-28 transport's status per error code; unlisted codes answer 200.
MODERN_ERROR_STATUS: Final = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}

# A JSON-RPC message of this endpoint is a method call with a few small arguments.
MAX_BODY_BYTES: Final = 64 * 1024
MAX_NESTING: Final = 32

type RequestId = str | int


@dataclass
class RpcError(Exception):
    """A JSON-RPC error answer. `status` is the HTTP status when the transport, not the
    method, refuses the message (parse errors, oversized bodies, wrong headers)."""

    code: int
    message: str
    data: Any = None
    status: int | None = None

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def body(self, request_id: RequestId | None) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return {"jsonrpc": "2.0", "id": request_id, "error": error}


@dataclass(frozen=True)
class Message:
    """One JSON-RPC request (with an id) or notification (without)."""

    method: str
    params: dict[str, Any]
    request_id: RequestId | None
    is_notification: bool
    raw: dict[str, Any] = field(repr=False)


def decode_body(body: bytes) -> Any:
    """The POSTed JSON; a parse error for anything that is not UTF-8 JSON of sane depth."""
    if len(body) > MAX_BODY_BYTES:
        raise RpcError(
            INVALID_REQUEST, f"The message is larger than {MAX_BODY_BYTES} bytes", status=413
        )
    try:
        text = body.decode("utf-8")
        document = json.loads(text, parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        problem = "Parse error: the body is not UTF-8 JSON"
        raise RpcError(PARSE_ERROR, problem, status=400) from error
    if _depth(document) > MAX_NESTING:
        raise RpcError(PARSE_ERROR, f"Parse error: nested deeper than {MAX_NESTING}", status=400)
    return document


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _depth(value: Any) -> int:
    """Nesting depth, iteratively (a deep document must not exhaust the stack here)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(node, dict):
            stack.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node)
    return deepest


def parse_message(document: Any) -> Message:
    """One request or notification. Batches are refused: the SDK clients never send them and
    the protocol dropped them in 2025-06-18; one message per POST keeps one audit record per
    call and bounds the work of a request."""
    if isinstance(document, list):
        raise RpcError(INVALID_REQUEST, "Batches are not accepted: POST one message", status=400)
    if not isinstance(document, dict) or document.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, "Not a JSON-RPC 2.0 message", status=400)
    method = document.get("method")
    if not isinstance(method, str) or not method:
        # A response or error posted by the client: this server never asks it anything.
        raise RpcError(INVALID_REQUEST, "Only requests and notifications are accepted", status=400)
    params = document.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params must be an object", status=400)
    if "id" not in document:
        return Message(method, params, None, True, document)
    request_id = document["id"]
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        raise RpcError(INVALID_REQUEST, "id must be a string or an integer", status=400)
    return Message(method, params, request_id, False, document)


@dataclass(frozen=True)
class ModernEnvelope:
    protocol_version: str
    client_info: Any


def modern_envelope(message: Message, headers: Mapping[str, str]) -> ModernEnvelope:
    """The 2026-07-28 request ladder: the `_meta` envelope, then the routing headers against
    the body, then the version. The first rung that fails is the answer."""
    meta = message.params.get("_meta")
    if not isinstance(meta, dict):
        raise RpcError(
            INVALID_PARAMS,
            f"params._meta must be an object carrying {PROTOCOL_VERSION_META!r} and "
            f"{CLIENT_CAPABILITIES_META!r}",
        )
    missing = [key for key in (PROTOCOL_VERSION_META, CLIENT_CAPABILITIES_META) if key not in meta]
    if missing:
        raise RpcError(INVALID_PARAMS, f"params._meta lacks {', '.join(missing)}")
    version = meta[PROTOCOL_VERSION_META]
    if headers.get(VERSION_HEADER) != version:
        raise RpcError(HEADER_MISMATCH, "MCP-Protocol-Version does not match params._meta")
    if headers.get(METHOD_HEADER) != message.method:
        raise RpcError(HEADER_MISMATCH, "Mcp-Method does not match the request's method")
    name_key = NAME_BEARING.get(message.method)
    named = message.params.get(name_key) if name_key is not None else None
    if named is not None and decode_header_value(headers.get(NAME_HEADER)) != named:
        raise RpcError(HEADER_MISMATCH, f"Mcp-Name does not match params.{name_key}")
    if not isinstance(version, str):
        raise RpcError(INVALID_PARAMS, "The protocol version must be a string")
    if version not in MODERN_VERSIONS:
        raise unsupported_version(version)
    return ModernEnvelope(version, meta.get(CLIENT_INFO_META))


def unsupported_version(requested: str) -> RpcError:
    # Every version we speak, handshake ones included: a client that sees them falls back
    # to `initialize` instead of giving up.
    return RpcError(
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        {"supported": list(SUPPORTED_VERSIONS), "requested": requested},
        status=400,
    )


_SENTINEL = re.compile(r"^=\?base64\?(?P<payload>.*)\?=$")


def decode_header_value(value: str | None) -> str | None:
    """Header values that are not plain printable ASCII travel as `=?base64?...?=`."""
    if value is None:
        return None
    match = _SENTINEL.fullmatch(value)
    if match is None:
        return value
    try:
        decoded = base64.b64decode(match["payload"], validate=True)
        return decoded.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def is_structured(version: str) -> bool:
    """Whether the revision knows outputSchema and structuredContent."""
    return SUPPORTED_VERSIONS.index(version) >= SUPPORTED_VERSIONS.index(STRUCTURED_SINCE)


def negotiate(requested: Any) -> str:
    """The `initialize` answer: the client's version if we speak it, else our newest."""
    return requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE_VERSION
