"""The local stack's log over real HTTP: one line per request, nothing per dropped connection,
the functions' metric lines and routine queue batches in files of their own
(docs/local-stack.md, local.stack_log)."""

import json
import time
from typing import Any

import httpx
import pytest

from local.stack_log import CONNECTIONS_PATH
from local.stack_process import RunningStack
from tests.support.sockets import reset_after

pytestmark = pytest.mark.e2e

PATHS = ("/api/v1/external/knowledge", "/api/v1/external/user", "/api/v1/external/openapi.json")


def _dropped(stack: dict[str, Any]) -> int:
    report = httpx.get(stack["awsEndpointUrl"] + CONNECTIONS_PATH, timeout=30).json()
    return int(report.get("gateway", {}).get("client disconnected", 0))


def test_each_request_is_one_line_and_a_dropped_connection_none(
    stack: dict[str, Any], stack_process: RunningStack
) -> None:
    log_file = stack_process.log_file
    before = len(log_file.read_text(errors="replace").splitlines())
    dropped = _dropped(stack)
    token = stack["tenants"][0]["credentials"]["admin"]
    port = int(stack["baseUrl"].rsplit(":", 1)[1])
    # When six requests are answered (each leaves an audit record and a metric) and two
    # clients hang up mid-request
    request_ids = []
    with httpx.Client(base_url=stack["baseUrl"], timeout=30) as client:
        for number in range(6):
            answer = client.get(
                PATHS[number % len(PATHS)], headers={"Authorization": f"Bearer {token}"}
            )
            assert answer.status_code == 200
            request_ids.append(answer.headers["x-amzn-RequestId"])
    reset_after(b"GET /api/v1/external/knowledge HTTP/1.1\r\nHost: x\r\n", port)
    reset_after(b"POST /api/v1/external/knowledge HTTP/1.1\r\nContent-Length: 9\r\n\r\n{", port)
    deadline = time.monotonic() + 10
    while _dropped(stack) < dropped + 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(2)  # the audit queue's poller takes the records meanwhile
    lines = log_file.read_text(errors="replace").splitlines()[before:]
    # Then each request has exactly one line, and the drops are counted, not traced
    for request_id in request_ids:
        assert len([line for line in lines if f"requestId={request_id}" in line]) == 1
    assert _dropped(stack) == dropped + 2
    assert not [line for line in lines if "Traceback" in line or "Exception occurred" in line]
    # And no metric document or routine batch line is among them: they have their own files
    assert not [line for line in lines if '"_aws"' in line]
    assert not [line for line in lines if line.endswith("0 left for retry (ok)")]
    metrics = log_file.with_name(log_file.stem + ".metrics.log").read_text().splitlines()
    assert any(json.loads(line.partition("] ")[2]).get("Requests") for line in metrics)
    batches = log_file.with_name(log_file.stem + ".batches.log").read_text()
    assert "SQS AuditQueue -> AuditWriterFunction" in batches


def test_the_log_has_no_idle_timeout_or_empty_metrics_chatter(
    stack: dict[str, Any], stack_process: RunningStack
) -> None:
    log = stack_process.log_file.read_text(errors="replace")
    assert "Request timed out" not in log
    assert "No application metrics to publish" not in log
