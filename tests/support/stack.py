"""Talking to the running local stack as its users do: the operator's CLI (`psap-admin`
against the stack's state file), JSON over real HTTP, and a CAD's webhook endpoint on
loopback for the stack to deliver to."""

import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PSAP_ADMIN = Path(sys.executable).parent / "psap-admin"
WAIT_SECONDS = 30  # for a delivery to reach the CAD endpoint


def run_psap_admin(state_file: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """`psap-admin --state-file <state_file> <arguments>`, as the operator types it."""
    return subprocess.run(
        [str(PSAP_ADMIN), "--state-file", str(state_file), *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def psap_admin(state_file: Path, *arguments: str) -> str:
    """What `psap-admin` prints, once it has succeeded."""
    done = run_psap_admin(state_file, *arguments)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def call_api(
    method: str, url: str, token: str | None = None, *, body: Any = None
) -> tuple[int, Any]:
    """Status and parsed JSON answer of one request, with a bearer token when given."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


class CadEndpoint:
    """A CAD's webhook endpoint on loopback: records every request and answers `status`
    (200 "ok" until the test sets another, e.g. 410 "gone")."""

    def __init__(self) -> None:
        self.status = 200
        self.requests: list[tuple[dict[str, str], bytes]] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            # Keep-alive HTTP/1.1, as CAD web servers answer (HTTP/1.0 receivers are
            # tests/integration/test_webhook_transport.py's).
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                endpoint.requests.append((dict(self.headers), body))
                answer = b"ok" if endpoint.status == 200 else b"gone"
                self.send_response(endpoint.status)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/psap/webhooks"

    def wait_for(self, delivery_id: str) -> tuple[dict[str, str], bytes]:
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            for headers, body in list(self.requests):
                if headers.get("X-SVC-Delivery-Id") == delivery_id:
                    return headers, body
            time.sleep(0.2)
        raise AssertionError(f"the CAD endpoint did not receive {delivery_id}")

    def wait_for_type(self, event_type: str, key: str, value: Any) -> tuple[dict[str, str], bytes]:
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            for headers, body in list(self.requests):
                event = json.loads(body)
                if event.get("type") == event_type and event["data"].get(key) == value:
                    return headers, body
            time.sleep(0.2)
        raise AssertionError(f"the CAD endpoint did not receive {event_type} {key}={value}")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
