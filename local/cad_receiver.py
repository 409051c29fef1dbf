"""A sample CAD webhook receiver, as a CAD vendor would write one with receiver_kit.

It listens on its own loopback port. Each demo connector posts to its own path
(`/cad/<tenant>/webhooks`) with its own signing secret and bearer credential. Every delivery
is checked: the bearer credential, then the signature and timestamp with
receiver_kit/psap_webhooks.py (nothing is parsed before that), then deduplicated by delivery
id. Each verdict is logged as one line (ACCEPT, REJECT, DUPLICATE) and kept in memory, so
`GET /received` shows the latest deliveries (for people and for the e2e tests).

    python -m local.cad_receiver --port 8099 --secret psapsec_... --bearer token

During a secret rotation give `--secret` twice (new, then old): a delivery signed with
either is accepted, as docs/webhooks.md's rotation procedure asks of every receiver.
"""

from __future__ import annotations

import argparse
import hmac
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

from local.stack_log import CLIENT_DISCONNECTED, CONNECTIONS, is_dropped_connection
from receiver_kit.psap_webhooks import Deduplicator, VerificationError, verify_delivery

KEPT_DELIVERIES: Final = 500
_MAX_BODY: Final = 1 << 20


@dataclass(frozen=True)
class Endpoint:
    """What one connector's deliveries are checked with."""

    # One secret, or every secret accepted during a rotation (new and old). None: deliveries
    # are taken unverified, the benchmark's unsigned baseline only (--unsigned-path).
    signing_secret: str | tuple[str, ...] | None
    bearer_credential: str


@dataclass(frozen=True)
class Verdict:
    verdict: str  # ACCEPT, REJECT or DUPLICATE
    path: str
    delivery_id: str | None
    reason: str | None
    event: dict[str, Any] | None

    def as_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "path": self.path,
            "deliveryId": self.delivery_id,
            "reason": self.reason,
            "event": self.event,
        }


class _ReceiverServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A sender that hung up mid-delivery is counted, not traced (local.stack_log).
        if is_dropped_connection(sys.exc_info()[1]):
            CONNECTIONS.count("sample CAD receiver", CLIENT_DISCONNECTED)
            return
        super().handle_error(request, client_address)


class CadReceiver:
    """The receiver: register an endpoint per connector path, then start()."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        log: Callable[[str], None] | None = print,
    ) -> None:
        self.endpoints: dict[str, Endpoint] = {}
        self.seen = Deduplicator()
        self.received: deque[Verdict] = deque(maxlen=KEPT_DELIVERIES)
        self.log = log
        self._lock = threading.Lock()
        self.server = _ReceiverServer((host, port), self._handler_class())
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        return f"http://{name}:{port}"

    def register(self, path: str, endpoint: Endpoint) -> str:
        """Checks deliveries to `path` with `endpoint`; returns the URL to give the service."""
        with self._lock:
            self.endpoints[path] = endpoint
        return self.base_url + path

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self.server.serve_forever, name="cad-receiver", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        # shutdown() waits for serve_forever to end: it would wait forever if never started.
        if self._thread is not None:
            self.server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self.server.server_close()

    def judge(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Verdict]:
        with self._lock:
            endpoint = self.endpoints.get(path)
        if endpoint is None:
            return 404, Verdict("REJECT", path, None, "no connector at this path", None)
        authorization = headers.get("authorization", "")
        expected = f"Bearer {endpoint.bearer_credential}"
        if not hmac.compare_digest(authorization.encode(), expected.encode()):
            return 401, Verdict("REJECT", path, None, "wrong bearer credential", None)
        if endpoint.signing_secret is None:
            # The same work as an accepted delivery, verification aside: what signing costs
            # is what the benchmark compares against this.
            return 200, Verdict("ACCEPT", path, None, "unverified", json.loads(body))
        try:
            delivery = verify_delivery(endpoint.signing_secret, headers, body)
        except VerificationError as error:
            return 401, Verdict("REJECT", path, None, error.reason, None)
        if not self.seen.first_time(delivery.delivery_id):
            return 200, Verdict("DUPLICATE", path, delivery.delivery_id, None, None)
        event = json.loads(delivery.body)  # only now: the body is verified
        return 200, Verdict("ACCEPT", path, delivery.delivery_id, None, event)

    def record(self, verdict: Verdict) -> None:
        self.received.append(verdict)
        if self.log is None:  # quiet: no line to build
            return
        event = verdict.event or {}
        data = event.get("data") or {}
        details = " ".join(
            f"{name}={value}"
            for name, value in (
                ("delivery", verdict.delivery_id),
                ("type", event.get("type")),
                ("receipt", data.get("receiptId")),
                ("incident", data.get("incidentId")),
                ("outcome", data.get("outcome")),
                ("reason", verdict.reason),
            )
            if value is not None
        )
        self.log(f"cad-receiver {verdict.path}: {verdict.verdict} {details}")

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # An answer is one write, but a kept-alive connection must never wait for the
            # client's delayed ACK (40 ms) because of Nagle's algorithm.
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length > _MAX_BODY:
                    self._answer(413, {"error": "too large"})
                    self.close_connection = True
                    return
                body = self.rfile.read(length)  # the raw bytes, before anything else
                headers = {name.lower(): value for name, value in self.headers.items()}
                status, verdict = receiver.judge(self.path, headers, body)
                receiver.record(verdict)
                self._answer(status, {"verdict": verdict.verdict, "reason": verdict.reason})

            def do_GET(self) -> None:
                if self.path.split("?")[0] != "/received":
                    self._answer(404, {"error": "not found"})
                    return
                self._answer(200, [verdict.as_json() for verdict in list(receiver.received)])

            def _answer(self, status: int, document: Any) -> None:
                payload = json.dumps(document).encode()
                reason = self.responses.get(status, ("",))[0]
                head = (
                    f"{self.protocol_version} {status} {reason}\r\n"
                    "Content-Type: application/json\r\n"
                    f"Content-Length: {len(payload)}\r\n\r\n"
                )
                # Head and body in one write (one segment): the sender wakes once per answer,
                # not once for the head and again for the body.
                self.wfile.write(head.encode("latin-1") + payload)

            def log_message(self, format: str, *args: Any) -> None:
                return  # one line per verdict is logged by record()

        return Handler


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=8099)
    parser.add_argument("--path", default="/cad/webhooks")
    parser.add_argument(
        "--secret",
        required=True,
        action="append",
        help="the connector's signing secret (twice during a rotation: new, then old)",
    )
    parser.add_argument("--bearer", required=True, help="the credential you gave the service")
    parser.add_argument("--quiet", action="store_true", help="no line per delivery")
    parser.add_argument(
        "--unsigned-path",
        help="also take unsigned POSTs here, unverified: a benchmark's baseline, never a "
        "URL to give the service",
    )
    arguments = parser.parse_args()
    receiver = CadReceiver(port=arguments.port, log=None if arguments.quiet else print)
    url = receiver.register(arguments.path, Endpoint(tuple(arguments.secret), arguments.bearer))
    if arguments.unsigned_path:
        receiver.register(arguments.unsigned_path, Endpoint(None, arguments.bearer))
    receiver.start()
    print(f"cad-receiver listening: {url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        receiver.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
