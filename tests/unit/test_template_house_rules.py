"""The house rules tools/lint_template.py adds to cfn-lint, on the real template and on a
template that breaks each of them."""

import copy
from typing import Any

from local.template import Resolver, load_yaml
from tools.lint_template import (
    CAPPED_CONCURRENCY,
    GUARANTEED_CONCURRENCY,
    TEMPLATE,
    concurrency_plan_violations,
    dead_letter_queues_without_alarm,
    fault_injection_enabled,
    functions_without_sample_event,
    resources_without_any_method,
    visibility_timeout_violations,
)

CAPACITY_PLAN = TEMPLATE.parent / "docs" / "capacity.md"


def _template() -> dict[str, Any]:
    return copy.deepcopy(load_yaml(TEMPLATE))


def test_the_real_template_keeps_every_house_rule() -> None:
    document = _template()
    assert dead_letter_queues_without_alarm(document) == []
    assert resources_without_any_method(document) == []
    assert functions_without_sample_event(document) == []


def test_a_function_without_a_sample_event_breaks_the_rule() -> None:
    # Given a new function with no events/ file of its own
    document = _template()
    document["Resources"]["ShiftReportFunction"] = copy.deepcopy(
        document["Resources"]["KnowledgeGetFunction"]
    )
    # Then the rule names it and the file it needs
    assert functions_without_sample_event(document) == [
        "ShiftReportFunction: no sample event events/shift_report.json"
        " (`psap-local invoke ShiftReportFunction` runs it; docs/local-development.md)"
    ]


def test_a_sample_event_that_is_not_json_breaks_the_rule(tmp_path) -> None:
    # Given the events folder with a broken copy of one event
    (tmp_path / "knowledge_get.json").write_text('{"httpMethod": ')
    document = {
        "Resources": {"KnowledgeGetFunction": _template()["Resources"]["KnowledgeGetFunction"]}
    }
    # Then the rule says the file is not JSON
    (problem,) = functions_without_sample_event(document, tmp_path)
    assert problem.startswith("KnowledgeGetFunction: events/knowledge_get.json is not JSON")


def test_a_new_path_without_an_any_method_breaks_the_rule() -> None:
    # Given a function that gains a route on a path no ANY method covers
    document = _template()
    events = document["Resources"]["KnowledgeGetFunction"]["Properties"]["Events"]
    events["Extra"] = {
        "Type": "Api",
        "Properties": {"Path": "/api/v1/external/new-thing", "Method": "GET"},
    }
    # Then the rule names that path
    assert resources_without_any_method(document) == [
        "/api/v1/external/new-thing: no ANY method (Auth: NONE) served by MethodNotAllowedFunction"
    ]


def test_an_any_method_behind_the_authorizer_does_not_count() -> None:
    # Given the knowledge list's ANY method made to require a credential
    document = _template()
    events = document["Resources"]["MethodNotAllowedFunction"]["Properties"]["Events"]
    (name,) = [
        key
        for key, event in events.items()
        if event["Properties"]["Path"] == "/api/v1/external/knowledge"
    ]
    del events[name]["Properties"]["Auth"]
    # Then the list path breaks the rule (a credential-less caller would get 401, not 405)
    assert resources_without_any_method(document) == [
        "/api/v1/external/knowledge: no ANY method (Auth: NONE) served by MethodNotAllowedFunction"
    ]


def test_a_dead_letter_queue_without_its_alarm_breaks_the_rule() -> None:
    document = _template()
    alarms = [
        key
        for key, resource in document["Resources"].items()
        if resource["Type"] == "AWS::CloudWatch::Alarm"
        and resource["Properties"].get("Namespace") == "AWS/SQS"
    ]
    del document["Resources"][alarms[0]]
    assert len(dead_letter_queues_without_alarm(document)) == 1


# ---------------------------------------------------------------- concurrency (docs/capacity.md)


def _function(document: dict[str, Any], logical_id: str) -> dict[str, Any]:
    properties: dict[str, Any] = document["Resources"][logical_id]["Properties"]
    return properties


def test_every_guaranteed_and_capped_function_is_in_the_template() -> None:
    # A renamed function must not silently drop out of the capacity plan.
    resources = _template()["Resources"]
    for logical_id in GUARANTEED_CONCURRENCY + CAPPED_CONCURRENCY:
        assert resources[logical_id]["Type"] == "AWS::Serverless::Function"


def test_the_real_template_keeps_the_concurrency_plan() -> None:
    assert concurrency_plan_violations(_template()) == []


def test_an_sqs_event_without_maximum_concurrency_breaks_the_rule() -> None:
    # Given the knowledge digest's queue consumer without its cap
    document = _template()
    event = _function(document, "KnowledgeDigestFunction")["Events"]["DigestRequests"]
    del event["Properties"]["ScalingConfig"]
    # Then the rule names the function and its event
    assert concurrency_plan_violations(document) == [
        "KnowledgeDigestFunction.DigestRequests: an SQS event source without "
        "ScalingConfig.MaximumConcurrency"
    ]


def test_a_capped_function_without_reserved_concurrency_breaks_the_rule() -> None:
    # Given the search function without its cap
    document = _template()
    del _function(document, "ResourceCenterSearchFunction")["ReservedConcurrentExecutions"]
    # Then the rule names it
    assert concurrency_plan_violations(document) == [
        "ResourceCenterSearchFunction: a tenant can drive it in bulk, but it has no "
        "ReservedConcurrentExecutions (its cap)"
    ]


def test_a_guaranteed_function_without_reserved_concurrency_breaks_the_rule() -> None:
    document = _template()
    del _function(document, "CadAuthorizerFunction")["ReservedConcurrentExecutions"]
    assert concurrency_plan_violations(document) == [
        "CadAuthorizerFunction: guaranteed capacity in the plan, but it has no "
        "ReservedConcurrentExecutions"
    ]


def test_a_reserved_sum_that_leaves_less_than_100_unreserved_breaks_the_rule() -> None:
    # Given the search cap allowed up to 500 (every other parameter at its largest too)
    document = _template()
    document["Parameters"]["SearchConcurrency"]["MaxValue"] = 500
    # Then the sum is refused, with the figures
    (problem,) = concurrency_plan_violations(document)
    assert problem.startswith("reserved concurrency: up to ")
    assert "of the account's 1000" in problem
    assert "AWS keeps at least 100 unreserved" in problem


def test_a_concurrency_parameter_without_bounds_breaks_the_rule() -> None:
    # Given a cap parameter that would accept 0 or 100000 at deploy time
    document = _template()
    del document["Parameters"]["McpConcurrency"]["MaxValue"]
    # Then the rule names the parameter and where it is used
    assert concurrency_plan_violations(document) == [
        "McpFunction: parameter McpConcurrency has no MinValue/MaxValue or AllowedValues, "
        "so sam deploy would accept any number"
    ]


def test_lanes_that_can_ask_for_more_than_the_reservation_break_the_rule() -> None:
    # Given the CAD worker's queue allowed more pollers than the function's reservation
    document = _template()
    event = _function(document, "CadWorkerFunction")["Events"]["Submissions"]
    event["Properties"]["ScalingConfig"]["MaximumConcurrency"] = 1000
    # Then the rule names the function (Lambda would throttle the surplus, and a throttled
    # message counts a receive toward the dead-letter queue)
    (problem,) = concurrency_plan_violations(document)
    assert problem.startswith("CadWorkerFunction: its SQS event sources may run up to 1000")


def test_the_capacity_plan_page_shows_the_template_s_reservations() -> None:
    # Given each reservation as the template deploys it by default
    document = _template()
    defaults = Resolver(document, stack_name="psap", sqs_endpoint="", parameter_overrides={})
    reserved = {
        logical_id: int(defaults.resolve(resource["Properties"]["ReservedConcurrentExecutions"]))
        for logical_id, resource in document["Resources"].items()
        if "ReservedConcurrentExecutions" in (resource.get("Properties") or {})
    }
    # Then docs/capacity.md's table has a row for each, with that figure, and their total
    rows = {
        cells[0]: cells[1]
        for line in CAPACITY_PLAN.read_text(encoding="utf-8").splitlines()
        if line.startswith("| ")
        and len(cells := [c.strip() for c in line.strip("|").split("|")]) > 1
    }
    for logical_id, figure in reserved.items():
        assert rows[logical_id].split()[0] == str(figure), logical_id
    assert rows["**Reserved in all**"] == f"**{sum(reserved.values())}**"


def test_the_real_template_never_enables_the_fault_injector() -> None:
    assert fault_injection_enabled(_template()) == []


def test_a_function_with_fault_rules_breaks_the_rule() -> None:
    # Given a deployed function that would carry fault rules
    document = _template()
    properties = document["Resources"]["CadWorkerFunction"]["Properties"]
    properties["Environment"]["Variables"]["PSAP_LOCAL_FAULT_RULES"] = "{}"
    # Then the rule names it
    assert fault_injection_enabled(document) == [
        "CadWorkerFunction: sets PSAP_LOCAL_FAULT_RULES: the fault injector is for the local"
        " stack only"
    ]


def test_the_real_template_sizes_visibility_timeouts_from_timeouts() -> None:
    assert visibility_timeout_violations(_template()) == []


def test_an_update_path_queue_slower_than_a_minute_breaks_the_rule() -> None:
    document = _template()
    document["Resources"]["WebhookQueue"]["Properties"]["VisibilityTimeout"] = 720
    assert visibility_timeout_violations(document) == [
        "WebhookQueue: VisibilityTimeout 720 on the update path; at most 60 (docs/faults.md)"
    ]


def test_a_visibility_timeout_shorter_than_the_timeout_breaks_the_rule() -> None:
    document = _template()
    document["Resources"]["CadWorkerFunction"]["Properties"]["Timeout"] = 90
    assert visibility_timeout_violations(document) == [
        "CadIntakeQueue: VisibilityTimeout 60 is less than the Timeout 90 of CadWorkerFunction"
    ]
