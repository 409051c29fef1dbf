"""Kept-alive connections to the embedded AWS, as AWS keeps them.

botocore keeps its HTTPS connections to AWS open between calls. werkzeug's development server,
which moto's server runs on, closes every connection after one answer ("Connection: close")
and then waits up to 10 ms for stray request bytes to discard. So every AWS call of a local
function paid a TCP connect, a new server thread and that wait: about 3 ms that no deployed
function pays (a GetItem took 3.3 ms locally; a page of search results makes two such calls).

This handler keeps an HTTP/1.1 connection open when the request body is delimited by its
Content-Length: after the answer it reads exactly what is left of that body, so the next
request line starts where it should. A chunked request body, an HTTP/1.0 client or a client's
own `Connection: close` still close the connection, as before.
"""

from __future__ import annotations

import selectors
import socket
import types
import weakref
from typing import IO, TYPE_CHECKING, Any, cast

import werkzeug.serving
from moto.moto_server.werkzeug_app import MotoRequestHandler
from werkzeug.wsgi import LimitedStream

from local.stack_log import CONNECTIONS, IDLE_TIMEOUT

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment

IDLE_SECONDS = 60  # an idle kept-alive connection's server thread ends after this


# The connections KeepAliveRequestHandler serves: werkzeug's drain skips them, and only them.
_KEPT_ALIVE: weakref.WeakSet[socket.socket] = weakref.WeakSet()


class _DrainOthersOnly:
    """werkzeug's post-answer drain reads every byte the socket has within 10 ms: on a kept-alive
    connection that is the client's next request, and its read(10 MB) then blocks until the
    client closes. KeepAliveRequestHandler reads the rest of each body itself, so for its
    connections the drain finds nothing pending; any other werkzeug server in the process (a
    test's plain moto server) drains as before."""

    def __init__(self) -> None:
        self._selector = selectors.DefaultSelector()
        self._kept_alive = False

    def register(self, connection: Any, events: int, data: Any = None) -> None:
        self._kept_alive = connection in _KEPT_ALIVE
        if not self._kept_alive:
            self._selector.register(connection, events, data)

    def select(self, timeout: float | None = None) -> list[Any]:
        return [] if self._kept_alive else self._selector.select(timeout)

    def close(self) -> None:
        self._selector.close()


def install() -> None:
    """Makes werkzeug's drain skip the kept-alive connections (see _DrainOthersOnly)."""
    werkzeug.serving.selectors = types.SimpleNamespace(  # type: ignore[assignment,attr-defined]
        DefaultSelector=_DrainOthersOnly, EVENT_READ=selectors.EVENT_READ
    )


class KeepAliveRequestHandler(MotoRequestHandler):
    # HTTP/1.1 whatever werkzeug's server would pick: keep-alive is the point.
    protocol_version = "HTTP/1.1"
    timeout = IDLE_SECONDS
    # werkzeug writes an answer's head and body separately: on a kept-alive connection
    # Nagle's algorithm would hold the body until the client's delayed ACK (40 ms).
    disable_nagle_algorithm = True
    _body: LimitedStream | None = None

    def setup(self) -> None:
        super().setup()
        _KEPT_ALIVE.add(self.connection)

    def log_error(self, format: str, *args: Any) -> None:
        # A kept-alive connection nobody used for IDLE_SECONDS ends, as it should: counted,
        # not logged (local.stack_log). werkzeug logs every other error as before.
        if format.startswith("Request timed out"):
            CONNECTIONS.count("embedded AWS", IDLE_TIMEOUT)
            return
        super().log_error(format, *args)

    def make_environ(self) -> WSGIEnvironment:
        environ = super().make_environ()
        self._body = None
        if not environ.get("wsgi.input_terminated"):  # not chunked: the length delimits it
            try:
                length = max(0, int(environ.get("CONTENT_LENGTH") or 0))
            except ValueError:
                return environ  # no body to delimit: the answer closes the connection
            self._body = LimitedStream(cast(IO[bytes], self.rfile), length)
            environ["wsgi.input"] = self._body
        return environ

    def send_header(self, keyword: str, value: str) -> None:
        # werkzeug sends "Connection: close" on every answer; keep the connection instead
        # when the request's body can be read to its end.
        if (
            keyword.lower() == "connection"
            and value.lower() == "close"
            and self._body is not None
            and not self.close_connection  # the client asked to close (or spoke HTTP/1.0)
        ):
            return
        super().send_header(keyword, value)

    def run_wsgi(self) -> None:
        super().run_wsgi()
        if self._body is not None and not self.close_connection:
            self._body.exhaust()  # what the service did not read of this body
        self._body = None
