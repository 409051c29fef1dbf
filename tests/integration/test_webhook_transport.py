"""The webhook HTTP client against real loopback servers of every kind a CAD may run
(DESIGN section 6: receivers we did not write). A 2xx answer is a delivered update whatever
the connection does after it; only what came before the status line can fail an attempt."""

import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer
from typing import Any

import pytest

from psap.webhooks.retry_policy import ErrorClass
from psap.webhooks.transport import OutboundClient
from tests.support.sockets import SocketEndpoint

BODY = b'{"type":"connector.test"}'
HEADERS = {"Content-Type": "application/json", "X-SVC-Delivery-Id": "dlv-1"}


# ---------------------------------------------------------------- servers built on http.server


class _Handler(BaseHTTPRequestHandler):
    answer: Callable[["_Handler", bytes], None]
    requests: list[bytes]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.requests.append(body)
        self.answer(self, body)

    def log_message(self, format: str, *args: Any) -> None:
        return


def _http_server(protocol: str, answer: Callable[[_Handler, bytes], None]) -> HTTPServer:
    handler = type(
        "Handler",
        (_Handler,),
        {"protocol_version": protocol, "answer": staticmethod(answer), "requests": []},
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _url(server: HTTPServer | socket.socket) -> str:
    address = server.server_address if isinstance(server, HTTPServer) else server.getsockname()
    return f"http://127.0.0.1:{address[1]}/cad/webhooks"


def _ok(handler: _Handler, body: bytes) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", "15")
    handler.end_headers()
    handler.wfile.write(b'{"verdict":"ok"}'[:15])


def _ok_until_close(handler: _Handler, body: bytes) -> None:
    """HTTP/1.0 without Content-Length: the answer ends when the connection does."""
    handler.send_response(200)
    handler.end_headers()
    handler.wfile.write(b'{"verdict":"ok"')


@pytest.fixture
def client() -> Iterator[OutboundClient]:
    outbound = OutboundClient()
    yield outbound
    outbound.close()


def post(client: OutboundClient, url: str) -> Any:
    return client.post(url, HEADERS, BODY, local_dev=True)


@pytest.mark.parametrize("answer", [_ok, _ok_until_close], ids=["content-length", "until-close"])
def test_an_http_1_0_receiver_that_answers_200_and_closes_has_the_delivery(
    client: OutboundClient, answer: Callable[[_Handler, bytes], None]
) -> None:
    # Given an HTTP/1.0 server: it closes the connection after every answer
    server = _http_server("HTTP/1.0", answer)
    try:
        # When two deliveries go there one after the other
        first, second = post(client, _url(server)), post(client, _url(server))
    finally:
        server.shutdown()
    # Then both are successes, with the answer kept
    for outcome in (first, second):
        assert (outcome.status_code, outcome.error_class) == (200, None), outcome.error_detail
        assert outcome.succeeded
        assert outcome.response_excerpt == '{"verdict":"ok"'
    assert len(server.RequestHandlerClass.requests) == 2  # type: ignore[attr-defined]


def test_an_http_1_1_receiver_answering_connection_close_has_the_delivery(
    client: OutboundClient,
) -> None:
    def close_after(handler: _Handler, body: bytes) -> None:
        handler.send_response(200)
        handler.send_header("Connection", "close")
        handler.send_header("Content-Length", "2")
        handler.end_headers()
        handler.wfile.write(b"ok")
        handler.close_connection = True

    server = _http_server("HTTP/1.1", close_after)
    try:
        outcomes = [post(client, _url(server)) for _ in range(3)]
    finally:
        server.shutdown()
    assert [(o.status_code, o.error_class) for o in outcomes] == [(200, None)] * 3
    assert len(server.RequestHandlerClass.requests) == 3  # type: ignore[attr-defined]


def test_a_keep_alive_receiver_gets_every_delivery_over_one_connection(
    client: OutboundClient,
) -> None:
    connections: list[object] = []

    def count(handler: _Handler, body: bytes) -> None:
        if handler.connection not in connections:
            connections.append(handler.connection)
        _ok(handler, body)

    server = _http_server("HTTP/1.1", count)
    try:
        outcomes = [post(client, _url(server)) for _ in range(5)]
    finally:
        server.shutdown()
    assert [o.status_code for o in outcomes] == [200] * 5
    assert len(connections) == 1


# ---------------------------------------------------------------- raw socket servers


class RawServer(SocketEndpoint):
    """One listening socket; `respond(connection)` runs for each accepted connection after
    the request (head and Content-Length body) has been read."""

    path = "/cad/webhooks"

    def __init__(self, respond: Callable[[socket.socket], None]) -> None:
        self.respond = respond
        self.requests = 0
        super().__init__()

    def handle(self, connection: socket.socket) -> None:
        try:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, rest = data.partition(b"\r\n\r\n")
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            while len(rest) < length:
                rest += connection.recv(65536)
            self.requests += 1
            self.respond(connection)
        except OSError:
            pass
        finally:
            connection.close()


@pytest.fixture
def raw_server() -> Iterator[Callable[[Callable[[socket.socket], None]], RawServer]]:
    servers: list[RawServer] = []

    def start(respond: Callable[[socket.socket], None]) -> RawServer:
        servers.append(RawServer(respond))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def _reset(connection: socket.socket) -> None:
    """Closes with RST instead of FIN (SO_LINGER 0)."""
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def test_an_idle_connection_the_receiver_closed_is_replaced_without_a_failure(
    client: OutboundClient, raw_server: Any
) -> None:
    # Given a receiver that answers as keep-alive, then drops idle connections after 50 ms
    def answer_then_idle_close(connection: socket.socket) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        time.sleep(0.05)

    server = raw_server(answer_then_idle_close)
    assert post(client, server.url).status_code == 200
    time.sleep(0.2)
    # When the next delivery finds the pooled connection closed
    outcome = post(client, server.url)
    # Then it goes over a fresh connection
    assert (outcome.status_code, outcome.error_class) == (200, None), outcome.error_detail
    assert server.requests == 2


def test_a_chunked_answer_is_read_to_its_end(client: OutboundClient, raw_server: Any) -> None:
    def chunked(connection: socket.socket) -> None:
        connection.sendall(
            b"HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
        )
        time.sleep(0.05)
        connection.sendall(b"6\r\n world\r\n0\r\n\r\n")
        time.sleep(0.2)

    server = raw_server(chunked)
    outcome = post(client, server.url)
    assert (outcome.status_code, outcome.error_class) == (202, None), outcome.error_detail
    assert outcome.response_excerpt == "hello world"


def test_a_slow_answer_within_the_time_limit_is_a_success(
    client: OutboundClient, raw_server: Any
) -> None:
    def slow(connection: socket.socket) -> None:
        time.sleep(1.0)
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n")
        for byte in b"done":
            time.sleep(0.1)
            connection.sendall(bytes([byte]))

    server = raw_server(slow)
    outcome = post(client, server.url)
    assert (outcome.status_code, outcome.error_class) == (200, None), outcome.error_detail
    assert outcome.response_excerpt == "done"


def test_a_2xx_whose_body_never_finishes_is_still_delivered(raw_server: Any) -> None:
    # The status line is the receiver's verdict: a body still trickling when time runs out
    # does not turn an accepted update into a retry (the CAD would get it twice).
    client = OutboundClient(total_timeout=1.0)

    def stalls(connection: socket.socket) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
        time.sleep(3)

    server = raw_server(stalls)
    outcome = post(client, server.url)
    client.close()
    assert (outcome.status_code, outcome.error_class) == (200, None), outcome.error_detail
    assert outcome.response_excerpt == "partial"


def test_a_reset_right_after_a_200_is_still_a_delivery(
    client: OutboundClient, raw_server: Any
) -> None:
    def answer_then_reset(connection: socket.socket) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        _reset(connection)

    server = raw_server(answer_then_reset)
    outcomes = [post(client, server.url) for _ in range(3)]
    assert [(o.status_code, o.error_class) for o in outcomes] == [(200, None)] * 3, [
        o.error_detail for o in outcomes
    ]
    assert server.requests == 3


def test_a_reset_in_the_middle_of_a_200_body_is_still_a_delivery(
    client: OutboundClient, raw_server: Any
) -> None:
    def reset_mid_body(connection: socket.socket) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nhalf")
        time.sleep(0.05)
        _reset(connection)

    server = raw_server(reset_mid_body)
    outcome = post(client, server.url)
    assert (outcome.status_code, outcome.error_class) == (200, None), outcome.error_detail


def test_a_reset_before_any_answer_is_a_protocol_failure(
    client: OutboundClient, raw_server: Any
) -> None:
    server = raw_server(_reset)
    outcome = post(client, server.url)
    assert outcome.status_code is None
    assert outcome.error_class is ErrorClass.PROTOCOL


def test_a_receiver_that_never_answers_is_a_timeout(raw_server: Any) -> None:
    client = OutboundClient(total_timeout=0.5)
    server = raw_server(lambda connection: time.sleep(2))
    outcome = post(client, server.url)
    client.close()
    assert outcome.status_code is None
    assert outcome.error_class is ErrorClass.TIMEOUT


def test_a_500_that_closes_is_an_http_failure_with_its_excerpt(
    client: OutboundClient,
) -> None:
    def fails(handler: _Handler, body: bytes) -> None:
        handler.send_response(500)
        handler.end_headers()
        handler.wfile.write(b"database down")

    server = _http_server("HTTP/1.0", fails)
    try:
        outcome = post(client, _url(server))
    finally:
        server.shutdown()
    assert (outcome.status_code, outcome.error_class) == (500, ErrorClass.HTTP)
    assert outcome.response_excerpt == "database down"


# ---------------------------------------------------------------- the request as written


def test_the_request_is_well_formed_http_1_1_for_a_strict_parser(client: OutboundClient) -> None:
    # Given a receiver built on http.server that keeps each request's head and body
    heads: list[dict[str, str]] = []

    def keep(handler: _Handler, body: bytes) -> None:
        heads.append({"line": handler.requestline, **dict(handler.headers.items())})
        _ok(handler, body)

    server = _http_server("HTTP/1.1", keep)
    try:
        outcome = client.post(_url(server) + "?tenant=1", HEADERS, BODY, local_dev=True)
    finally:
        server.shutdown()
    # Then it parsed one POST to the URL's path and query, Host with the port, the exact
    # body and length, and each of our headers once
    assert outcome.status_code == 200
    (head,) = heads
    port = server.server_address[1]
    assert head["line"] == "POST /cad/webhooks?tenant=1 HTTP/1.1"
    assert head["Host"] == f"127.0.0.1:{port}"
    assert head["Content-Length"] == str(len(BODY))
    assert head["X-SVC-Delivery-Id"] == "dlv-1"
    assert head["User-Agent"].startswith("psap-webhooks/")
    assert server.RequestHandlerClass.requests == [BODY]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "value", ["Bearer a\r\nX-Injected: 1", "Bearer a\nX-Injected: 1", "a\x00b", "Bearer é€"]
)
def test_a_header_value_that_could_split_the_request_is_never_sent(
    client: OutboundClient, raw_server: Any, value: str
) -> None:
    # Given a receiver, and a header value holding a line break, NUL or a non-Latin-1 character
    server = raw_server(lambda connection: connection.sendall(b"HTTP/1.1 200 OK\r\n\r\n"))
    # When it is posted
    outcome = client.post(server.url, {**HEADERS, "Authorization": value}, BODY, local_dev=True)
    # Then the attempt fails as a protocol error and nothing reached the receiver
    assert (outcome.status_code, outcome.error_class) == (None, ErrorClass.PROTOCOL)
    assert "Authorization" in (outcome.error_detail or "") or "Latin-1" in (
        outcome.error_detail or ""
    )
    time.sleep(0.05)
    assert server.requests == 0
