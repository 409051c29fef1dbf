"""The local stack's CloudWatch Logs subscriptions: a `Type: CloudWatchLogs` event delivers
the matching lines of a log group to its function, in CloudWatch's envelope. The template
declares none today (audit records travel through AuditQueue, docs/security.md): these tests
subscribe a function to the shared log group themselves."""

import base64
import dataclasses
import gzip
import json
from typing import Any

import pytest

from local.log_subscriptions import ATTEMPTS, FilterPattern, LogSubscriptions
from local.runtime import InvokeResult
from local.template import LogSubscription, StackTemplate, TemplateError, load_template
from tests.unit.local.conftest import ConsoleLines, FakeFunctions

REAL_TEMPLATE = load_template()
AUDIT_LINE = '{"auditVersion":1,"tenantId":3,"operation":"getIncident"}'


def _subscribed(template: StackTemplate, subscriber: str) -> StackTemplate:
    """The template with `subscriber` subscribed to the API functions' log group."""
    functions = dict(template.functions)
    subscription = LogSubscription(
        name="AuditLines",
        log_group=template.functions["IncidentGetFunction"].log_group,
        filter_pattern="{ $.auditVersion = 1 }",
    )
    functions[subscriber] = dataclasses.replace(
        functions[subscriber], log_subscriptions=(subscription,)
    )
    return dataclasses.replace(template, functions=functions)


TEMPLATE = _subscribed(REAL_TEMPLATE, "AuditWriterFunction")


def test_no_function_takes_audit_records_from_a_log_group() -> None:
    # Every role may write the log group: it carries no authority (docs/security.md).
    assert LogSubscriptions(REAL_TEMPLATE, FakeFunctions(), print).count == 0


def _decoded(event: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(event["awslogs"]["data"])))
    return result


def test_audit_lines_of_any_api_function_reach_the_writer_in_cloudwatch_envelope(
    console: ConsoleLines,
) -> None:
    # Given the template's subscriptions and a writer that succeeds
    functions = FakeFunctions()
    functions.behaviours["AuditWriterFunction"] = lambda _event: InvokeResult(status="ok")
    subscriptions = LogSubscriptions(TEMPLATE, functions, console)
    incident_get = TEMPLATE.functions["IncidentGetFunction"]
    sink = subscriptions.sink_for(incident_get, console)
    # When the function logs an audit line, a Powertools line and plain text
    sink(f"[IncidentGetFunction] {AUDIT_LINE}")
    sink('[IncidentGetFunction] {"level":"INFO","message":"auditVersion 1"}')
    sink("[IncidentGetFunction] START RequestId: 1")
    subscriptions.flush()
    # Then the console shows all three, and the writer got the audit line alone
    assert len(console.lines) == 3
    (event,) = functions.calls_to("AuditWriterFunction")
    payload = _decoded(event)
    assert payload["messageType"] == "DATA_MESSAGE"
    assert payload["logGroup"] == incident_get.log_group
    assert [entry["message"] for entry in payload["logEvents"]] == [AUDIT_LINE]


def test_the_writers_own_log_is_not_subscribed(console: ConsoleLines) -> None:
    # Given the audit writer's function
    functions = FakeFunctions()
    subscriptions = LogSubscriptions(TEMPLATE, functions, console)
    writer = TEMPLATE.functions["AuditWriterFunction"]
    # Then its log group differs from the API functions', and its lines go to the console only
    assert writer.log_group != TEMPLATE.functions["IncidentGetFunction"].log_group
    assert subscriptions.sink_for(writer, console) is console


def test_a_failing_writer_is_retried_then_the_loss_is_reported(console: ConsoleLines) -> None:
    # Given a writer that always fails
    functions = FakeFunctions()
    functions.behaviours["AuditWriterFunction"] = lambda _event: InvokeResult(
        status="error", error_type="StoreUnavailable", error_message="down"
    )
    subscriptions = LogSubscriptions(TEMPLATE, functions, console)
    sink = subscriptions.sink_for(TEMPLATE.functions["IncidentGetFunction"], console)
    # When a line is delivered
    sink(f"[IncidentGetFunction] {AUDIT_LINE}")
    subscriptions.flush()
    # Then it was tried as often as Lambda tries an asynchronous invoke, and the loss is said
    assert len(functions.calls_to("AuditWriterFunction")) == ATTEMPTS
    assert "lost after" in console.text()


@pytest.mark.parametrize(
    ("pattern", "line", "matches"),
    [
        ("{ $.auditVersion = 1 }", '{"auditVersion": 1}', True),
        ("{ $.auditVersion = 1 }", '{"auditVersion": 2}', False),
        ('{ $.a.b = "x" && $.c = 2 }', '{"a": {"b": "x"}, "c": 2.0}', True),
        ('{ $.a.b = "x" && $.c = 2 }', '{"a": {"b": "y"}, "c": 2}', False),
        ("{ $.auditVersion = 1 }", "not json", False),
    ],
)
def test_json_filter_patterns_match_as_cloudwatch_does(
    pattern: str, line: str, matches: bool
) -> None:
    assert FilterPattern(pattern).matches(line) is matches


def test_a_pattern_outside_the_supported_subset_stops_the_stack() -> None:
    with pytest.raises(TemplateError):
        FilterPattern("ERROR")
    with pytest.raises(TemplateError):
        FilterPattern("{ $.latency > 100 }")
