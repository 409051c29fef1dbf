"""The embedded AWS keeps HTTP/1.1 connections alive, as AWS does for botocore: one connection
serves request after request, a body the service does not read is skipped exactly, and a
client that asks to close gets its connection closed."""

import http.client
import json
import logging
import socket
from urllib.parse import urlsplit

import pytest

from local.aws import dynamodb_client

# Unsigned, moto routes these to S3's ListBuckets, which never reads the body: what is left
# of it must be skipped before the next request line is read.
BODY = json.dumps({"TableName": "no-such-table", "Key": {"pk": {"S": "x"}}})
HEADERS = {
    "Content-Type": "application/x-amz-json-1.0",
    "X-Amz-Target": "DynamoDB_20120810.GetItem",
}


def _connection(endpoint: str) -> http.client.HTTPConnection:
    parts = urlsplit(endpoint)
    return http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)


def test_one_connection_serves_many_requests(moto_endpoint: str) -> None:
    # Given one HTTP/1.1 connection to the embedded AWS
    connection = _connection(moto_endpoint)
    connection.connect()
    first_socket = connection.sock
    # When it sends five requests with bodies
    for _ in range(5):
        connection.request("POST", "/", body=BODY, headers=HEADERS)
        answer = connection.getresponse()
        answer.read()
        # Then each is answered, none says it closes, and the socket stays the same
        assert answer.status == 200
        assert answer.getheader("Connection", "").lower() != "close"
        assert connection.sock is first_socket
    connection.close()


def _answers(raw: socket.socket, count: int) -> list[bytes]:
    """Reads `count` answers delimited by their Content-Length from one socket."""
    data, answers = b"", list[bytes]()
    while len(answers) < count:
        head_end = data.find(b"\r\n\r\n")
        if head_end >= 0:
            head = data[:head_end].decode("latin-1")
            length = next(
                int(line.split(":", 1)[1])
                for line in head.split("\r\n")
                if line.lower().startswith("content-length:")
            )
            if len(data) >= head_end + 4 + length:
                answers.append(data[: head_end + 4 + length])
                data = data[head_end + 4 + length :]
                continue
        chunk = raw.recv(65536)
        if not chunk:
            break
        data += chunk
    return answers


def test_pipelined_requests_are_each_answered(moto_endpoint: str) -> None:
    # Given two requests sent back to back before any answer is read (the first body must be
    # skipped exactly, or the second request line would be misread)
    parts = urlsplit(moto_endpoint)
    request = (
        f"POST / HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/x-amz-json-1.0\r\n"
        f"X-Amz-Target: DynamoDB_20120810.GetItem\r\nContent-Length: {len(BODY)}\r\n\r\n{BODY}"
    ).encode()
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as raw:
        raw.sendall(request + request)
        # When the answers are read from the one connection
        answers = _answers(raw, 2)
    # Then both requests were answered
    assert len(answers) == 2
    assert all(answer.startswith(b"HTTP/1.1 200 ") for answer in answers)


def test_a_client_that_asks_to_close_is_closed(moto_endpoint: str) -> None:
    connection = _connection(moto_endpoint)
    connection.request("POST", "/", body=BODY, headers={**HEADERS, "Connection": "close"})
    answer = connection.getresponse()
    answer.read()
    assert answer.getheader("Connection", "").lower() == "close"
    connection.close()


def test_botocore_calls_reuse_one_connection(
    moto_endpoint: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a client of the embedded AWS that has made one call, as a warm local function has
    client = dynamodb_client(moto_endpoint)
    client.list_tables()
    # When it makes twenty more calls
    with caplog.at_level(logging.DEBUG, logger="urllib3.connectionpool"):
        for _ in range(20):
            client.list_tables()
    # Then no connection was opened or re-opened for them
    opened = [r.message for r in caplog.records if "connection" in r.message.lower()]
    assert opened == []
