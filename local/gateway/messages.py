"""HTTP requests and responses as the gateway sees them, its body limit, and the invoke."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from local.runtime import InvokeResult

MAX_REQUEST_BODY_BYTES: Final = 10 * 1024 * 1024
# How the gateway calls a function: (logical id, event) -> the invoke's result.
Invoke = Callable[[str, Any], InvokeResult]


@dataclass(frozen=True)
class HttpRequest:
    method: str
    # The request target as received: path and query string, still percent-encoded.
    target: str
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""
    source_ip: str = "127.0.0.1"
    # Set when the server stopped reading a body over the 10 MB limit.
    body_too_large: bool = False
    # Set when the body's framing cannot be read (a negative or malformed Content-Length).
    malformed_framing: str | None = None


@dataclass
class HttpResponse:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None


def header_value(headers: Sequence[tuple[str, str]], name: str) -> str | None:
    """The last value of a header, matched case-insensitively (as API Gateway's headers map)."""
    found = None
    for key, value in headers:
        if key.lower() == name.lower():
            found = value
    return found
