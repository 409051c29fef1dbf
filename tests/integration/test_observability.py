"""Logs say what happened, with tenant and request ids, and never carry a token."""

import io
import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from psap.auth import store
from psap.auth.credentials import OPERATOR, CredentialKind
from psap.auth.permissions import Permission
from psap.clock import utc_now
from psap.observability import logger


@pytest.fixture
def info_logs() -> Iterator[io.StringIO]:
    """The Powertools log output of the test, at INFO level."""
    buffer = io.StringIO()
    level = logger.log_level
    logger.setLevel("INFO")
    previous = logger.registered_handler.setStream(buffer)  # type: ignore[attr-defined]
    yield buffer
    logger.registered_handler.setStream(previous)  # type: ignore[attr-defined]
    logger.setLevel(level)


def log_lines(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def test_request_logs_carry_tenant_and_request_ids(
    aws: None,
    info_logs: io.StringIO,
    import_function: Any,
    load_event: Any,
    lambda_context: Any,
) -> None:
    handler = import_function("knowledge_list").handler
    event = load_event("knowledge_list")
    event["requestContext"]["authorizer"]["permissions"] = "MANAGE_USERS"  # logs a denial
    handler(event, lambda_context)
    output = info_logs.getvalue()
    (denial,) = [line for line in log_lines(output) if line["message"] == "permission denied"]
    assert denial["tenant_id"] == 1
    assert denial["request_id"] == event["requestContext"]["requestId"]
    assert denial["operation"] == "listKnowledge"
    assert "example-token" not in output


def test_authorizer_logs_never_contain_the_token(
    aws_server: str,
    info_logs: io.StringIO,
    import_function: Any,
    load_event: Any,
    lambda_context: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tenant = store.create_tenant("Riverside County 911").tenant_id
    token = store.issue_credential(
        tenant,
        CredentialKind.PARTNER,
        frozenset({Permission.ADMIN}),
        "t",
        expires_at=utc_now() + timedelta(days=30),
        issued_by=OPERATOR,
    ).token
    monkeypatch.setenv("CREDENTIAL_KIND", "partner")
    authorizer = import_function("authorizer")
    event = load_event("authorizer_request")
    event["headers"]["Authorization"] = f"Bearer {token}"
    authorizer.handler(event, lambda_context)
    event["headers"]["Authorization"] = "Bearer " + token[:-1] + "x"
    with pytest.raises(Exception, match="Unauthorized"):
        authorizer.handler(event, lambda_context)
    output = info_logs.getvalue()
    lines = log_lines(output)
    assert [line["message"] for line in lines] == ["credential accepted", "credential refused"]
    assert lines[0]["tenant_id"] == tenant
    assert lines[1]["why"] == "unknown token"
    assert token not in output and token[:-1] not in output
