"""Calls functions in-process with an audit trail: their records are read back from the
audit queue and delivered to the audit writer as the SQS event source would deliver them."""

import json
import uuid
from datetime import datetime
from typing import Any

import pytest

from local.template import load_template
from psap.audit.recording import AuditRecord
from psap.config import audit_queue_url
from psap.storage.sqs import sqs
from tests.support.harness import HandlerHarness, json_body

TEMPLATE = load_template()
# What the audit functions see beyond the Globals (their own Environment in the template).
AUDIT_FUNCTIONS = {
    "audit_export_create": "AuditExportCreateFunction",
    "audit_export_get": "AuditExportGetFunction",
    "audit_export_worker": "AuditExportWorkerFunction",
    "audit_writer": "AuditWriterFunction",
    "audit_sealer": "AuditSealerFunction",
    "audit_archiver": "AuditArchiverFunction",
}


def set_function_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for logical_id in AUDIT_FUNCTIONS.values():
        for name, value in TEMPLATE.functions[logical_id].environment.items():
            monkeypatch.setenv(name, value)


def queued_messages() -> list[str]:
    """Every message waiting in the audit queue (received and deleted), oldest first."""
    bodies: list[str] = []
    while True:
        answer = sqs().receive_message(QueueUrl=audit_queue_url(), MaxNumberOfMessages=10)
        messages = answer.get("Messages", [])
        if not messages:
            return bodies
        for message in messages:
            bodies.append(message["Body"])
            sqs().delete_message(QueueUrl=audit_queue_url(), ReceiptHandle=message["ReceiptHandle"])


def queued_records() -> list[dict[str, Any]]:
    """The audit records the calls so far sent, oldest first."""
    return [json.loads(body) for body in queued_messages()]


def audit_queue_event(bodies: list[str]) -> dict[str, Any]:
    """An SQS event of the audit queue, as the writer's event source mapping builds it."""
    return {
        "Records": [
            {
                "messageId": str(uuid.uuid4()),
                "receiptHandle": f"handle-{index}",
                "body": body,
                "attributes": {
                    "ApproximateReceiveCount": "1",
                    "SentTimestamp": "1795401135000",
                    "SenderId": "AROAEXAMPLE:IncidentGetFunction",
                    "ApproximateFirstReceiveTimestamp": "1795401135010",
                },
                "messageAttributes": {},
                "md5OfBody": "",
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:psap-platform-AuditQueue",
                "awsRegion": "us-east-1",
            }
            for index, body in enumerate(bodies)
        ]
    }


def audit_record(tenant: int, when: datetime, request_id: str, **fields: Any) -> AuditRecord:
    """The record of a partner's read of incident 1, with `fields` changed."""
    values: dict[str, Any] = {
        "time": when,
        "tenant_id": tenant,
        "credential_id": "cred-reader",
        "principal": "reader",
        "credential_kind": "partner",
        "operation": "getIncident",
        "method": "GET",
        "path": "/api/v1/external/mcp/resources/incidents/1",
        "resource_ids": {"incidentId": "1"},
        "status": 200,
        "request_id": request_id,
        "source_ip": "203.0.113.10",
        "user_agent": "partner-sync/1.0",
        "duration_ms": 5,
    }
    values.update(fields)
    return AuditRecord(**values)


class ApiCaller(HandlerHarness):
    """Calls a function's handler with one of the sample events, as the gateway would."""

    def call(
        self,
        function: str,
        *,
        tenant: int,
        permissions: str = "ADMIN",
        credential_id: str = "cred-admin",
        path: dict[str, str] | None = None,
        body: Any = None,
        event_name: str | None = None,
    ) -> tuple[int, Any, dict[str, Any]]:
        event = self.proxy_event(
            event_name or function,
            tenant=tenant,
            permissions=permissions,
            credential_id=credential_id,
            path=path,
            body=body if isinstance(body, str) else json_body(body),
        )
        event["requestContext"]["requestId"] = str(uuid.uuid4())
        return self.answer(function, event)
