"""Fault rules for AWS calls, run inside a worker process: DynamoDB answers a table's
operation with ProvisionedThroughputExceededException, InternalServerError or
TransactionCanceledException, and S3 answers 503 SlowDown.

The answer replaces the HTTP exchange (botocore's Endpoint._send), below botocore's retry
handler, so the function's own retry configuration meets it as it would meet the service's:
a throttle that a retry gets past is absorbed, one that persists reaches the code. This is
separate from the partition-capacity throttle of the embedded AWS: these rules are chosen by
a fault file, not by load.

Standard library at import (the worker loads this file by path, local/fault_worker.py);
botocore is imported when the rules are installed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

DYNAMODB_ERRORS: Final = (
    "ProvisionedThroughputExceededException",
    "InternalServerError",
    "TransactionCanceledException",
)
DYNAMODB_OPERATIONS: Final = frozenset(
    {
        "GetItem",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "Query",
        "BatchGetItem",
        "BatchWriteItem",
        "TransactWriteItems",
        "TransactGetItems",
    }
)
S3_OPERATIONS: Final = frozenset({"GET", "PUT", "HEAD", "DELETE", "POST"})
_STATUS: Final = {
    "ProvisionedThroughputExceededException": 400,
    "InternalServerError": 500,
    "TransactionCanceledException": 400,
}

_SLOW_DOWN: Final = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)

Fires = Callable[[Mapping[str, Any]], bool]


class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body


def _dynamodb_tables(operation: str, body: Mapping[str, Any]) -> set[str]:
    if "TableName" in body:
        return {str(body["TableName"])}
    if operation in ("BatchGetItem", "BatchWriteItem"):
        return set(body.get("RequestItems") or {})
    tables: set[str] = set()
    for item in body.get("TransactItems") or []:
        for action in item.values():
            if isinstance(action, dict) and "TableName" in action:
                tables.add(str(action["TableName"]))
    return tables


def dynamodb_error(rule: Mapping[str, Any], operation: str, body: Mapping[str, Any]) -> bytes:
    code = str(rule["error"])
    answer: dict[str, Any] = {
        "__type": f"com.amazonaws.dynamodb.v20120810#{code}",
        "message": f"injected by the local fault plan (rule {int(rule['index']) + 1})",
    }
    if code == "TransactionCanceledException":
        count = max(1, len(body.get("TransactItems") or []))
        answer["CancellationReasons"] = [{"Code": "TransactionConflict"}] * count
        answer["Message"] = "Transaction cancelled, please refer cancellation reasons for " + (
            f"specific reasons [{', '.join(['TransactionConflict'] * count)}]"
        )
    return json.dumps(answer).encode()


def _matches_dynamodb(rule: Mapping[str, Any], request: Any) -> tuple[str, dict[str, Any]] | None:
    target = str(request.headers.get("X-Amz-Target", b"") or "")
    if isinstance(request.headers.get("X-Amz-Target"), bytes):
        target = request.headers["X-Amz-Target"].decode()
    operation = target.rpartition(".")[2]
    if rule.get("operation") not in (None, operation):
        return None
    if rule["error"] == "TransactionCanceledException" and not operation.startswith("Transact"):
        return None
    body = json.loads(request.body or b"{}") if request.body else {}
    if rule.get("table") is not None and rule["table"] not in _dynamodb_tables(operation, body):
        return None
    return operation, body


def _matches_s3(rule: Mapping[str, Any], request: Any) -> bool:
    if rule.get("operation") not in (None, request.method):
        return False
    bucket = rule.get("bucket")
    if bucket is None:
        return True
    parts = urlsplit(str(request.url))
    return parts.path.lstrip("/").split("/", 1)[0] == bucket or parts.netloc.startswith(
        f"{bucket}."
    )


def install(rules: Sequence[Mapping[str, Any]], fires: Fires) -> None:
    """Answers the rules' AWS calls with their errors (when `fires` says so)."""
    # Imported here: the worker loads this file before it knows it has AWS call rules.
    from botocore.awsrequest import AWSResponse  # noqa: PLC0415
    from botocore.endpoint import Endpoint  # noqa: PLC0415

    dynamodb_rules = [rule for rule in rules if rule["fault"] == "dynamodb-error"]
    s3_rules = [rule for rule in rules if rule["fault"] == "s3-slowdown"]
    if not dynamodb_rules and not s3_rules:
        return
    send = Endpoint._send  # type: ignore[attr-defined]
    response: Any = AWSResponse  # its stubs want HTTPHeaders; botocore takes any mapping

    def faulty_send(endpoint: Any, request: Any) -> Any:
        service = endpoint._endpoint_prefix
        if service == "dynamodb":
            for rule in dynamodb_rules:
                matched = _matches_dynamodb(rule, request)
                if matched is not None and fires(rule):
                    operation, body = matched
                    return response(
                        request.url,
                        _STATUS[str(rule["error"])],
                        {"Content-Type": "application/x-amz-json-1.0"},
                        _Raw(dynamodb_error(rule, operation, body)),
                    )
        elif service == "s3":
            for rule in s3_rules:
                if _matches_s3(rule, request) and fires(rule):
                    return response(
                        request.url, 503, {"Content-Type": "application/xml"}, _Raw(_SLOW_DOWN)
                    )
        return send(endpoint, request)

    Endpoint._send = faulty_send  # type: ignore[attr-defined]
