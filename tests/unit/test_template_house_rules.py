"""The house rules tools/lint_template.py adds to cfn-lint, on the real template and on a
template that breaks each of them."""

import copy
from typing import Any

from local.template import load_yaml
from tools.lint_template import (
    TEMPLATE,
    dead_letter_queues_without_alarm,
    resources_without_any_method,
)


def _template() -> dict[str, Any]:
    return copy.deepcopy(load_yaml(TEMPLATE))


def test_the_real_template_keeps_every_house_rule() -> None:
    document = _template()
    assert dead_letter_queues_without_alarm(document) == []
    assert resources_without_any_method(document) == []


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
