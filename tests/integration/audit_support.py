"""Calls functions in-process with an audit trail: their audit lines are captured from stdout
and delivered to the audit writer as the log subscription would deliver them."""

import base64
import gzip
import json
import uuid
from typing import Any

import pytest

from local.template import load_template
from tests.integration.handler_harness import HandlerHarness, json_body

TEMPLATE = load_template()
# What the audit functions see beyond the Globals (their own Environment in the template).
AUDIT_FUNCTIONS = {
    "audit_export_create": "AuditExportCreateFunction",
    "audit_export_get": "AuditExportGetFunction",
    "audit_export_worker": "AuditExportWorkerFunction",
    "audit_writer": "AuditWriterFunction",
}


def set_function_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for logical_id in AUDIT_FUNCTIONS.values():
        for name, value in TEMPLATE.functions[logical_id].environment.items():
            monkeypatch.setenv(name, value)


def audit_lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith('{"auditVersion"')]


def awslogs_event(messages: list[str], message_type: str = "DATA_MESSAGE") -> dict[str, Any]:
    payload = {
        "messageType": message_type,
        "owner": "123456789012",
        "logGroup": "/psap/psap-platform/functions",
        "logStream": "2026/11/23/[$LATEST]test",
        "subscriptionFilters": ["audit"],
        "logEvents": [
            {"id": str(index), "timestamp": 1795401135000, "message": message + "\n"}
            for index, message in enumerate(messages)
        ],
    }
    data = base64.b64encode(gzip.compress(json.dumps(payload).encode())).decode()
    return {"awslogs": {"data": data}}


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
