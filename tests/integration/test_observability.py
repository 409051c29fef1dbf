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
from psap.auth.tokens import token_hash
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
        label="t",
        expires_at=utc_now() + timedelta(days=30),
        issued_by=OPERATOR,
    ).token
    monkeypatch.setenv("CREDENTIAL_KIND", "partner")
    authorizer = import_function("authorizer")
    event = load_event("partner_authorizer")
    event["headers"]["Authorization"] = f"Bearer {token}"
    authorizer.handler(event, lambda_context)
    typo = token[:-1] + ("x" if token[-1] != "x" else "y")
    event["headers"]["Authorization"] = f"Bearer {typo}"
    with pytest.raises(Exception, match="Unauthorized"):
        authorizer.handler(event, lambda_context)
    output = info_logs.getvalue()
    lines = log_lines(output)
    assert [line["message"] for line in lines] == ["credential accepted", "credential refused"]
    assert lines[0]["tenant_id"] == tenant
    assert lines[1]["why"] == "token checksum mismatch"
    assert token not in output and token[:-1] not in output


def test_each_refusal_is_logged_once_with_its_reason_and_metric_never_the_token(
    aws_server: str,
    info_logs: io.StringIO,
    import_function: Any,
    load_event: Any,
    lambda_context: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a revoked credential and an authorizer that refused it before
    tenant = store.create_tenant("Riverside County 911").tenant_id
    issued = store.issue_credential(
        tenant,
        CredentialKind.PARTNER,
        frozenset({Permission.ADMIN}),
        label="t",
        expires_at=utc_now() + timedelta(days=30),
        issued_by=OPERATOR,
    )
    store.revoke_credential(tenant, issued.credential.credential_id)
    monkeypatch.setenv("CREDENTIAL_KIND", "partner")
    authorizer = import_function("authorizer")
    event = load_event("partner_authorizer")
    # When it is presented twice, then a malformed token once
    for authorization in (issued.token, issued.token, "psap_partner_example-token"):
        event["headers"]["Authorization"] = f"Bearer {authorization}"
        with pytest.raises(Exception, match="Unauthorized"):
            authorizer.handler(event, lambda_context)
    # Then each refusal is one line: its reason, the credential when known, and its metric
    output = info_logs.getvalue()
    lines = [line for line in log_lines(output) if line["message"] == "credential refused"]
    logged = [(ln["reason"], ln.get("credential_id"), ln["CredentialReads"]) for ln in lines]
    assert logged == [
        ("revoked", issued.credential.credential_id, 1),
        ("remembered", issued.credential.credential_id, 0),
        ("malformed", None, 0),
    ]
    (emf,) = lines[0]["_aws"]["CloudWatchMetrics"]
    assert emf["Namespace"] == "Psap" and emf["Dimensions"] == [["interface", "reason"]]
    assert {metric["Name"] for metric in emf["Metrics"]} == {"CredentialRefused", "CredentialReads"}
    assert all(line["CredentialRefused"] == 1 for line in lines)
    assert issued.token not in output and token_hash(issued.token) not in output
