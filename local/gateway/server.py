"""The gateway's HTTP server on a loopback port (http.server, one thread per connection)."""

from __future__ import annotations

import contextlib
import errno
import json
import re
import socketserver
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from local.aws import PortInUseError
from local.gateway.api_gateway import ApiGateway
from local.gateway.messages import MAX_REQUEST_BODY_BYTES, HttpRequest, HttpResponse
from local.stack_log import CLIENT_DISCONNECTED, CONNECTIONS, is_dropped_connection


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's listen backlog is 5: a burst of clients would see connection resets.
    request_queue_size = 1024
    gateway: ApiGateway

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks the host name up in DNS; a loopback address needs no name.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hung up mid-request is counted, not traced (local.stack_log).
        if is_dropped_connection(sys.exc_info()[1]):
            CONNECTIONS.count("gateway", CLIENT_DISCONNECTED)
            return
        super().handle_error(request, client_address)


class _RequestTooLargeError(Exception):
    pass


class _MalformedFramingError(Exception):
    pass


_CONTENT_LENGTH = re.compile(r"[0-9]{1,19}")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body leave in separate writes; with Nagle's algorithm and the client's
    # delayed ACK, each keep-alive response would wait about 40 ms for nothing.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """The gateway logs one line per request itself."""

    def __getattr__(self, name: str) -> Any:
        # http.server looks up do_<METHOD>; every method reaches the gateway, which answers
        # one without a route as API Gateway does, never with http.server's 501 HTML page.
        if name.startswith("do_"):
            return self._serve
        raise AttributeError(name)

    def send_response(self, code: int, message: str | None = None) -> None:
        # As http.server's, without the Server header that names its software and version.
        self.log_request(code)
        self.send_response_only(code, message)
        self.send_header("Date", self.date_time_string())

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a malformed request line, headers too long) as
        ErrorInfo, like every other answer; the connection closes after them."""
        reason = "BAD_REQUEST" if 400 <= code < 500 else "INTERNAL_ERROR"
        info = message or self.responses.get(code, ("Error",))[0]
        body = json.dumps({"info": info, "reason": reason}).encode()
        self.close_connection = True
        # A request line it could not parse leaves HTTP/0.9, which would drop the headers.
        self.request_version = self.protocol_version
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD" and code >= 200 and code not in (204, 304):
                self.wfile.write(body)

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return self._read_chunked()
        declared = self.headers.get_all("Content-Length") or []
        if len(set(declared)) > 1 or not all(
            _CONTENT_LENGTH.fullmatch(v.strip()) for v in declared
        ):
            raise _MalformedFramingError(f"Invalid Content-Length header: {', '.join(declared)}")
        length = int(declared[0]) if declared else 0
        if length > MAX_REQUEST_BODY_BYTES:
            raise _RequestTooLargeError
        return self.rfile.read(length) if length else b""

    def _read_chunked(self) -> bytes:
        body = bytearray()
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline().strip():
                    pass  # trailers carry nothing the gateway forwards
                return bytes(body)
            body.extend(self.rfile.read(size))
            self.rfile.readline()
            if len(body) > MAX_REQUEST_BODY_BYTES:
                raise _RequestTooLargeError

    def _serve(self) -> None:
        headers = tuple(self.headers.items())
        too_large = False
        malformed: str | None = None
        try:
            body = self._read_body()
        except _RequestTooLargeError:
            # The rest of the body stays unread, so this connection cannot carry another request.
            self.close_connection = True
            body, too_large = b"", True
        except _MalformedFramingError as error:
            # Where this body ends is unknown, so nothing more can be read on this connection.
            self.close_connection = True
            body, malformed = b"", str(error)
        except ValueError:
            self.send_error(400, "Malformed request body")
            return
        request = HttpRequest(
            method=self.command,
            target=self.path,
            headers=headers,
            body=body,
            source_ip=self.client_address[0],
            body_too_large=too_large,
            malformed_framing=malformed,
        )
        self._send(self.server.gateway.handle(request))

    def _send(self, response: HttpResponse) -> None:
        # A client that hung up has nobody left to read the answer; the request is logged.
        try:
            self._write(response)
        except (BrokenPipeError, ConnectionResetError):
            CONNECTIONS.count("gateway", CLIENT_DISCONNECTED)

    def _write(self, response: HttpResponse) -> None:
        self.send_response(response.status)
        for name, value in response.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)


class GatewayServer:
    """The gateway's HTTP server on a loopback port.

    The port is bound on construction, before anything else starts, so a taken port fails
    at once; requests are served once start() hands it the gateway.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 3000) -> None:
        try:
            self._server = _Server((host, port), _Handler)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise PortInUseError(host, port, error) from error
            raise
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self, gateway: ApiGateway) -> None:
        self._server.gateway = gateway
        self._thread = threading.Thread(
            # A short poll interval keeps shutdown quick.
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.1},
            name="gateway",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()
