"""The HTTP client of webhook deliveries.

It connects only to an address that psap.webhooks.addresses has just vetted (no second DNS
lookup by the HTTP library, so no rebinding gap), verifies TLS against the URL's host name,
never follows redirects (http.client has no such feature), bounds connect time and the
whole attempt (main lane 2 s / 5 s, slow lane 3 s / 10 s), and keeps at most 4 KB of the
answer. Connections are kept alive per warm container, keyed by where they lead and by the
safety mode they were vetted under.

The status line is the receiver's verdict: once a 2xx has arrived, a connection that then
closes, resets or stalls mid-body does not undo it (the CAD would get the update again).
"""

import http.client
import re
import socket
import ssl
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cache, lru_cache

from psap import clock
from psap.webhooks.addresses import (
    Destination,
    IPAddress,
    NameNotResolved,
    UnsafeDestination,
    parse_destination,
    resolve,
)
from psap.webhooks.models import Lane
from psap.webhooks.retry_policy import AttemptOutcome, ErrorClass, parse_retry_after

CONNECT_TIMEOUT_SECONDS = 3.0
TOTAL_TIMEOUT_SECONDS = 10.0
# (connect, whole attempt) per lane: the main lane gives up sooner, so a hanging endpoint
# holds it at most 5 s before its connector moves to the slow lane (docs/webhooks.md).
LANE_TIMEOUTS: dict[Lane, tuple[float, float]] = {
    Lane.MAIN: (2.0, 5.0),
    Lane.SLOW: (CONNECT_TIMEOUT_SECONDS, TOTAL_TIMEOUT_SECONDS),
}
RESPONSE_EXCERPT_BYTES = 4096
# Answers up to this size are read to the end so the connection can be reused.
_DRAIN_LIMIT_BYTES = 64 * 1024
_USER_AGENT = "psap-webhooks/1.0"

type _PoolKey = tuple[str, str, int, bool]


class _AttemptFailed(Exception):
    def __init__(self, error_class: ErrorClass, detail: str) -> None:
        super().__init__(detail)
        self.error_class = error_class
        self.detail = detail


@dataclass
class _Connection:
    sock: socket.socket
    address: IPAddress

    def close(self) -> None:
        self.sock.close()


# RFC 9110 field names (tokens) and values without CR, LF or NUL: a request is written in
# one piece here, so these are checked here rather than by http.client's putheader.
_FIELD_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_SET_HERE = frozenset({"host", "user-agent", "content-length", "accept-encoding"})
_UNSAFE_VALUE = re.compile(r"[\r\n\x00]|^[ \t]|[ \t]$")


class OutboundClient:
    """POSTs one delivery attempt; every failure becomes an AttemptOutcome, never raises."""

    def __init__(
        self,
        connect_timeout: float = CONNECT_TIMEOUT_SECONDS,
        total_timeout: float = TOTAL_TIMEOUT_SECONDS,
    ) -> None:
        self.connect_timeout = connect_timeout
        self.total_timeout = total_timeout
        self._idle: dict[_PoolKey, list[_Connection]] = {}
        self._lock = threading.Lock()
        self._tls = ssl.create_default_context()

    def post(
        self, url: str, headers: Mapping[str, str], body: bytes, *, local_dev: bool
    ) -> AttemptOutcome:
        started = time.monotonic()
        deadline = started + self.total_timeout
        try:
            destination = _destination(url, local_dev)
            status, answer_headers, excerpt = self._exchange(
                destination, headers, body, local_dev=local_dev, deadline=deadline
            )
        except _AttemptFailed as failure:
            return AttemptOutcome(
                status_code=None,
                error_class=failure.error_class,
                latency_ms=_elapsed_ms(started),
                error_detail=failure.detail[:500],
            )
        except UnsafeDestination as refusal:
            return AttemptOutcome(
                status_code=None,
                error_class=ErrorClass.BLOCKED,
                latency_ms=_elapsed_ms(started),
                error_detail=str(refusal)[:500],
            )
        now: datetime = clock.utc_now()
        return AttemptOutcome(
            status_code=status,
            error_class=None if 200 <= status < 300 else ErrorClass.HTTP,
            latency_ms=_elapsed_ms(started),
            response_excerpt=excerpt,
            retry_after_seconds=parse_retry_after(answer_headers.get("retry-after"), now),
        )

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                connection.close()

    def _exchange(
        self,
        destination: Destination,
        headers: Mapping[str, str],
        body: bytes,
        *,
        local_dev: bool,
        deadline: float,
    ) -> tuple[int, dict[str, str], str]:
        key: _PoolKey = (destination.scheme, destination.host, destination.port, local_dev)
        request = _request_bytes(destination, headers, body)
        pooled = self._take(key)
        if pooled is not None:
            try:
                return self._send(pooled, key, request, deadline=deadline, reused=True)
            except _StaleConnection:
                pass  # the peer closed a kept-alive connection: one fresh try, as browsers do
        connection = self._open(destination, local_dev=local_dev, deadline=deadline)
        try:
            return self._send(connection, key, request, deadline=deadline, reused=False)
        except _StaleConnection as error:
            raise _AttemptFailed(ErrorClass.PROTOCOL, str(error)) from error

    def _take(self, key: _PoolKey) -> _Connection | None:
        with self._lock:
            connections = self._idle.get(key)
            return connections.pop() if connections else None

    def _give_back(self, key: _PoolKey, connection: _Connection) -> None:
        with self._lock:
            self._idle.setdefault(key, []).append(connection)

    def _open(self, destination: Destination, *, local_dev: bool, deadline: float) -> _Connection:
        try:
            addresses = resolve(destination, local_dev=local_dev)
        except NameNotResolved as error:
            raise _AttemptFailed(ErrorClass.DNS, str(error)) from error
        problem = _AttemptFailed(ErrorClass.CONNECT, "no address answered")
        for address in addresses:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _AttemptFailed(ErrorClass.TIMEOUT, "the attempt ran out of time")
            try:
                raw = socket.create_connection(
                    (str(address), destination.port),
                    timeout=min(self.connect_timeout, remaining),
                )
            except TimeoutError:
                problem = _AttemptFailed(ErrorClass.TIMEOUT, f"connect to {address} timed out")
                continue
            except OSError as error:
                problem = _AttemptFailed(ErrorClass.CONNECT, f"connect to {address}: {error}")
                continue
            # A request is one write; no reason to let Nagle hold back its tail.
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return self._wrap(raw, address, destination, deadline=deadline)
        raise problem

    def _wrap(
        self, raw: socket.socket, address: IPAddress, destination: Destination, *, deadline: float
    ) -> _Connection:
        sock: socket.socket = raw
        if destination.scheme == "https":
            try:
                raw.settimeout(max(0.01, deadline - time.monotonic()))
                sock = self._tls.wrap_socket(raw, server_hostname=destination.host)
            except TimeoutError as error:
                raw.close()
                raise _AttemptFailed(ErrorClass.TIMEOUT, "TLS handshake timed out") from error
            except (ssl.SSLError, ssl.CertificateError, OSError) as error:
                raw.close()
                raise _AttemptFailed(ErrorClass.TLS, f"TLS: {error}") from error
        # The vetted socket is the connection: nothing resolves the name a second time.
        return _Connection(sock, address)

    def _send(
        self,
        connection: _Connection,
        key: _PoolKey,
        request: bytes,
        *,
        deadline: float,
        reused: bool,
    ) -> tuple[int, dict[str, str], str]:
        sock = connection.sock
        response = http.client.HTTPResponse(sock, method="POST")
        try:
            _set_timeout(sock, deadline)
            sock.sendall(request)  # head and body in one write: one system call, one segment
            response.begin()  # the status line and headers, as http.client reads them
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as error:
            _discard(response, connection)
            if reused:
                raise _StaleConnection(str(error)) from error
            raise _AttemptFailed(ErrorClass.PROTOCOL, str(error)) from error
        except TimeoutError as error:
            _discard(response, connection)
            raise _AttemptFailed(ErrorClass.TIMEOUT, "no answer in time") from error
        except ssl.SSLError as error:
            _discard(response, connection)
            raise _AttemptFailed(ErrorClass.TLS, f"TLS: {error}") from error
        except (http.client.HTTPException, OSError) as error:
            _discard(response, connection)
            raise _AttemptFailed(ErrorClass.PROTOCOL, f"{type(error).__name__}: {error}") from error
        # The status line is the receiver's verdict. Whatever the connection does after it
        # (closes, as HTTP/1.0 and `Connection: close` servers do; resets; stalls mid-body)
        # changes neither the status nor the outcome: a 2xx stays a delivered update.
        answer_headers = {name.lower(): value for name, value in response.getheaders()}
        excerpt, complete = _read_answer(response, sock, deadline)
        if complete and not response.will_close:
            response.close()  # its file object only; the socket carries the next request
            self._give_back(key, connection)
        else:
            _discard(response, connection)
        return response.status, answer_headers, excerpt


def _request_bytes(destination: Destination, headers: Mapping[str, str], body: bytes) -> bytes:
    """The whole POST, head and body. A header that could split the request is refused."""
    host = f"[{destination.host}]" if ":" in destination.host else destination.host
    default_port = 443 if destination.scheme == "https" else 80
    lines = [
        f"POST {destination.target} HTTP/1.1",
        f"Host: {host}" if destination.port == default_port else f"Host: {host}:{destination.port}",
        f"User-Agent: {_USER_AGENT}",
        f"Content-Length: {len(body)}",
        "Accept-Encoding: identity",
    ]
    for name, value in headers.items():
        if name.lower() in _SET_HERE:
            continue
        if not _FIELD_NAME.fullmatch(name) or _UNSAFE_VALUE.search(value):
            raise _AttemptFailed(ErrorClass.PROTOCOL, f"header {name!r} cannot be sent as is")
        lines.append(f"{name}: {value}")
    lines.append("\r\n")
    try:
        return "\r\n".join(lines).encode("latin-1") + body
    except UnicodeEncodeError as error:
        raise _AttemptFailed(ErrorClass.PROTOCOL, "a header value is not Latin-1") from error


def _discard(response: http.client.HTTPResponse, connection: _Connection) -> None:
    response.close()
    connection.close()


class _StaleConnection(Exception):
    """A kept-alive connection was closed by the peer before it answered."""


def _set_timeout(sock: socket.socket | None, deadline: float) -> None:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError
    if sock is not None:
        sock.settimeout(remaining)


def _read_answer(
    response: http.client.HTTPResponse, sock: socket.socket, deadline: float
) -> tuple[str, bool]:
    """The first 4 KB of the answer as text, and whether the whole answer was read (so the
    connection may carry the next request). Never raises: the answer's status is known."""
    kept = bytearray()
    total = 0
    while True:
        try:
            _set_timeout(sock, deadline)
            chunk = response.read1(16 * 1024)
        except (TimeoutError, http.client.HTTPException, OSError, ValueError):
            return kept.decode("utf-8", errors="replace"), False
        if not chunk:
            return kept.decode("utf-8", errors="replace"), True
        total += len(chunk)
        if len(kept) < RESPONSE_EXCERPT_BYTES:
            kept.extend(chunk[: RESPONSE_EXCERPT_BYTES - len(kept)])
        if response.isclosed():
            # The declared length (or the last chunk) has arrived: the answer is whole, and
            # one more read would cost a system call and a timeout change per delivery.
            return kept.decode("utf-8", errors="replace"), True
        if total > _DRAIN_LIMIT_BYTES:
            return kept.decode("utf-8", errors="replace"), False


def _elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


@lru_cache(maxsize=1024)
def _destination(url: str, local_dev: bool) -> Destination:
    """A URL's checked form, once per warm container (its addresses are checked at every
    connect, in _open); a refused URL raises every time, as it is not cached."""
    return parse_destination(url, local_dev=local_dev)


@cache
def outbound_client(lane: Lane = Lane.MAIN) -> OutboundClient:
    """One client (and its kept-alive connections) per lane per warm container."""
    connect, total = LANE_TIMEOUTS[lane]
    return OutboundClient(connect_timeout=connect, total_timeout=total)
