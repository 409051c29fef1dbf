"""Calls functions in-process with an audit trail: their audit lines are captured from stdout
and delivered to the audit writer as the log subscription would deliver them."""

import base64
import gzip
import json
import uuid
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from local.template import load_template
from tests.integration.proxy_events import answer_of, with_caller, with_path

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


class ApiCaller:
    """Calls a function's handler with one of the sample events, as the gateway would."""

    def __init__(
        self,
        import_function: Callable[[str], ModuleType],
        load_event: Callable[[str], dict[str, Any]],
        lambda_context: Any,
    ) -> None:
        self._import = import_function
        self._load_event = load_event
        self._context = lambda_context
        self._handlers: dict[str, Any] = {}

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
        if function not in self._handlers:
            self._handlers[function] = self._import(function).handler
        event = self._load_event(event_name or function)
        event["requestContext"]["requestId"] = str(uuid.uuid4())
        with_caller(event, tenant, permissions, credential_id)
        if path is not None:
            with_path(event, path)
        if body is not None:
            event["body"] = body if isinstance(body, str) else json.dumps(body)
        return answer_of(self._handlers[function](event, self._context))
