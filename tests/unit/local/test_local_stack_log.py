"""The local stack's log stays readable: a dropped or idle connection is counted, not traced;
metric lines and routine queue batches go to files of their own (local.stack_log)."""

import http.client
import json
import logging
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from local import moto_keepalive
from local.aws import sqs_client
from local.cad_receiver import CadReceiver
from local.gateway.server import GatewayServer
from local.pollers import SqsPoller
from local.runtime import InvokeResult
from local.stack_log import (
    CLIENT_DISCONNECTED,
    CONNECTIONS,
    CONNECTIONS_PATH,
    IDLE_TIMEOUT,
    StackLog,
    is_metric_line,
)
from tests.support.sockets import reset_after

METRIC_LINE = (
    '[ListFunction] {"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"Psap",'
    '"Dimensions":[["service"]],"Metrics":[{"Name":"Requests","Unit":"Count"}]}]},'
    '"service":"psap-api","Requests":[1.0]}'
)


def _count(server: str, event: str) -> int:
    return CONNECTIONS.report().get(server, {}).get(event, 0)


def _wait_for_count(server: str, event: str, expected: int) -> int:
    deadline = time.monotonic() + 5
    while _count(server, event) < expected and time.monotonic() < deadline:
        time.sleep(0.02)
    return _count(server, event)


class _NoGateway:
    def handle(self, request: object) -> object:
        raise AssertionError("a request that never arrived whole reached the gateway")


@pytest.fixture
def gateway_server():
    server = GatewayServer("127.0.0.1", 0)
    server.start(_NoGateway())  # type: ignore[arg-type]
    yield server
    server.stop()


def test_a_client_that_hangs_up_mid_request_is_counted_not_traced(
    gateway_server: GatewayServer, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _count("gateway", CLIENT_DISCONNECTED)
    # When one client resets in the middle of its headers and another in the middle of its body
    reset_after(b"GET /open HTTP/1.1\r\nHost: x\r\n", gateway_server.port)
    reset_after(
        b"POST /open HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{", gateway_server.port
    )
    # Then both are counted, and nothing is printed about them
    assert _wait_for_count("gateway", CLIENT_DISCONNECTED, before + 2) == before + 2
    printed = capsys.readouterr()
    assert "Traceback" not in printed.err + printed.out
    assert "Connection reset" not in printed.err + printed.out


def test_an_idle_kept_alive_connection_to_the_embedded_aws_is_counted_not_logged(
    moto_endpoint: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Given kept-alive connections that time out after a fifth of a second idle
    monkeypatch.setattr(moto_keepalive.KeepAliveRequestHandler, "timeout", 0.2)
    before = _count("embedded AWS", IDLE_TIMEOUT)
    parts = urlsplit(moto_endpoint)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=5)
    # When a client makes a request and then leaves its connection idle
    with caplog.at_level(logging.INFO, logger="werkzeug"):
        connection.request("GET", CONNECTIONS_PATH)
        report = json.loads(connection.getresponse().read())
        counted = _wait_for_count("embedded AWS", IDLE_TIMEOUT, before + 1)
    connection.close()
    # Then the timeout is counted, werkzeug logs nothing about it, and the report serves counts
    assert counted == before + 1
    assert not [record for record in caplog.records if "timed out" in record.getMessage()]
    assert isinstance(report, dict)


def test_metric_lines_go_to_their_own_file_and_the_rest_to_the_log(tmp_path: Path) -> None:
    printed: list[str] = []
    log = StackLog(tmp_path / "stack.log", level="WARNING", console=printed.append)
    log.open()
    log.function_output(METRIC_LINE)
    log.function_output('[ListFunction] {"level":"ERROR","message":"boom"}')
    log.function_output("[ListFunction] Traceback (most recent call last):")
    log.batch("SQS AuditQueue -> AuditWriterFunction: 1 records, 1 deleted, 0 left for retry (ok)")
    log.close()
    assert printed == [
        '[ListFunction] {"level":"ERROR","message":"boom"}',
        "[ListFunction] Traceback (most recent call last):",
    ]
    assert (tmp_path / "stack.metrics.log").read_text().splitlines() == [METRIC_LINE]
    assert (tmp_path / "stack.batches.log").read_text().startswith("SQS AuditQueue ->")


def test_at_debug_the_log_shows_metric_and_batch_lines_too(tmp_path: Path) -> None:
    printed: list[str] = []
    log = StackLog(tmp_path / "stack.log", level="DEBUG", console=printed.append)
    log.open()
    log.function_output(METRIC_LINE)
    log.batch("SQS Q -> F: 1 records, 1 deleted, 0 left for retry (ok)")
    log.close()
    assert printed == [METRIC_LINE, "SQS Q -> F: 1 records, 1 deleted, 0 left for retry (ok)"]
    assert (tmp_path / "stack.metrics.log").read_text().splitlines() == [METRIC_LINE]


@pytest.mark.parametrize(
    "text",
    ['{"_aws": "not metrics"}', '{"_aws": {"Timestamp": 1}', "plain text with _aws", "{}"],
)
def test_only_an_emf_document_is_a_metric_line(text: str) -> None:
    assert not is_metric_line(text)


def test_a_batch_that_went_through_whole_goes_to_the_batch_sink_and_a_failure_to_the_log(
    deployed, moto_endpoint, fake_functions
) -> None:
    # Given the work queue's poller, with a batch line sink apart from the log
    function = deployed.functions["BatchFunction"]
    (event,) = [event for event in function.sqs_events if event.name == "Work"]
    queue = deployed.queues[event.queue_id]
    logged: list[str] = []
    batches: list[str] = []
    poller = SqsPoller(
        function,
        event,
        queue,
        endpoint_url=moto_endpoint,
        invoke=fake_functions,
        log=logged.append,
        batches=batches.append,
    )
    sqs = sqs_client(moto_endpoint)
    # When one batch goes through whole and the next has a failed record
    sqs.send_message(QueueUrl=queue.url, MessageBody="fine")
    fake_functions.behaviours["BatchFunction"] = lambda _event: InvokeResult(status="ok")
    poller.poll_once()
    sqs.send_message(QueueUrl=queue.url, MessageBody="broken")
    fake_functions.behaviours["BatchFunction"] = lambda event: InvokeResult(
        status="ok",
        payload={"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]},
    )
    poller.poll_once()
    # Then the routine batch is in the batch sink and the failed one in the log
    assert [line.endswith("0 left for retry (ok)") for line in batches] == [True]
    assert [line.endswith("1 left for retry (ok)") for line in logged] == [True]


def test_a_sender_that_hangs_up_on_the_sample_cad_receiver_is_counted_not_traced(
    capsys: pytest.CaptureFixture[str],
) -> None:
    receiver = CadReceiver("127.0.0.1", 0, log=None)
    receiver.start()
    try:
        port = int(receiver.base_url.rsplit(":", 1)[1])
        before = _count("sample CAD receiver", CLIENT_DISCONNECTED)
        reset_after(b"POST /cad/1/webhooks HTTP/1.1\r\nHost: x\r\n", port)
        counted = _wait_for_count("sample CAD receiver", CLIENT_DISCONNECTED, before + 1)
    finally:
        receiver.stop()
    assert counted == before + 1
    assert "Traceback" not in capsys.readouterr().err
