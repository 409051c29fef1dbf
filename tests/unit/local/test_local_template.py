"""template.yaml -> the model the local stack runs: tags, intrinsics, Globals, events."""

from pathlib import Path
from typing import Any

import pytest

from local.template import (
    DEFAULT_TEMPLATE,
    TemplateError,
    load_template,
    load_yaml,
    local_api_id,
    merge_globals,
)

FIXTURES = Path(__file__).parent / "fixtures"


def _raw_events(document: dict[str, Any], kind: str) -> set[tuple[str, str]]:
    """(function, event) pairs of one event type, read from the YAML without the model."""
    found = set()
    for logical_id, resource in document["Resources"].items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        for name, event in (resource["Properties"].get("Events") or {}).items():
            if event["Type"] == kind:
                found.add((logical_id, name))
    return found


def test_short_tags_load_as_their_long_form(tmp_path):
    # Given a template written with CloudFormation short tags
    path = tmp_path / "template.yaml"
    path.write_text(
        "A: !Ref Thing\n"
        "B: !GetAtt Queue.Arn\n"
        "C: !Sub 'x-${Y}'\n"
        "D: !If [Cond, 1, 2]\n"
        "E: !Select [0, !Split [',', 'a,b']]\n"
        "F: !Equals [a, b]\n"
    )
    # When it is loaded
    document = load_yaml(path)
    # Then each tag is the plain dict CloudFormation's JSON form uses
    assert document == {
        "A": {"Ref": "Thing"},
        "B": {"Fn::GetAtt": ["Queue", "Arn"]},
        "C": {"Fn::Sub": "x-${Y}"},
        "D": {"Fn::If": ["Cond", 1, 2]},
        "E": {"Fn::Select": [0, {"Fn::Split": [",", "a,b"]}]},
        "F": {"Fn::Equals": ["a", "b"]},
    }


def test_every_api_event_of_the_real_template_becomes_a_route():
    # Given the project's template.yaml, read as plain YAML
    document = load_yaml(DEFAULT_TEMPLATE)
    # When the local stack loads it
    template = load_template(DEFAULT_TEMPLATE)
    # Then every Api and SQS event in the file is in the model, none missing, none invented
    routes = {(function.logical_id, event.name) for function, event in template.api_events()}
    sources = {(function.logical_id, event.name) for function, event in template.sqs_events()}
    assert routes == _raw_events(document, "Api")
    assert sources == _raw_events(document, "SQS")
    assert set(template.tables) == {
        key
        for key, value in document["Resources"].items()
        if value["Type"] == "AWS::DynamoDB::Table"
    }


def test_real_template_guards_data_routes_and_leaves_the_docs_open():
    # Given the project's template with a default authorizer and an Auth: NONE docs route
    template = load_template(DEFAULT_TEMPLATE)
    routes = {event.path: event for _, event in template.api_events()}
    # Then the data route uses the default authorizer and the OpenAPI document none
    assert routes["/api/v1/external/knowledge"].authorizer == "PartnerAuthorizer"
    assert routes["/api/v1/external/openapi.json"].authorizer is None


def test_globals_environment_merges_key_by_key_with_the_function_winning(fixture_template):
    # Given Globals with SHARED/OVERRIDDEN and a function that overrides OVERRIDDEN only
    echo = fixture_template.functions["EchoFunction"]
    # Then the function sees both, the global value where it said nothing
    assert echo.environment["SHARED"] == "from-globals"
    assert echo.environment["OVERRIDDEN"] == "from-function"
    assert echo.environment["TABLE_NAME"] == "psap-local-EntryTable"
    # And a function without its own environment gets the globals as they are
    assert fixture_template.functions["SlowFunction"].environment["OVERRIDDEN"] == "from-globals"


def test_globals_lists_are_appended_and_scalars_replaced(fixture_template):
    # Given a global layer, a global Timeout 5 and MemorySize 256
    echo = fixture_template.functions["EchoFunction"]
    slow = fixture_template.functions["SlowFunction"]
    # Then the function's own layer follows the global one
    assert echo.layers == (
        "arn:aws:lambda:us-east-1:123456789012:layer:GlobalLayer:1",
        "arn:aws:lambda:us-east-1:123456789012:layer:psap-local-ProbeLayer:1",
    )
    # And a function's own Timeout/MemorySize replace the global ones
    assert slow.timeout == 1
    assert echo.timeout == 5
    assert echo.memory_size == 384
    assert slow.memory_size == 256


def test_merge_globals_treats_intrinsics_as_single_values():
    # Given a global !Ref and a local !Sub for the same variable
    merged = merge_globals(
        {"Variables": {"A": {"Ref": "X"}, "B": "b"}}, {"Variables": {"A": {"Fn::Sub": "y"}}}
    )
    # Then the local intrinsic replaces the global one instead of merging into it
    assert merged == {"Variables": {"A": {"Fn::Sub": "y"}, "B": "b"}}


def test_intrinsics_resolve_against_the_local_naming_scheme():
    # Given the fixture template and a local SQS endpoint
    template = load_template(
        FIXTURES / "template.yaml", stack_name="demo", sqs_endpoint="http://127.0.0.1:4566"
    )
    environment = template.functions["EchoFunction"].environment
    # Then Ref/GetAtt/Sub/Join/Select/If/FindInMap give what CloudFormation would locally
    assert environment["QUEUE_URL"] == "http://127.0.0.1:4566/123456789012/demo-WorkQueue"
    assert environment["QUEUE_ARN"] == "arn:aws:sqs:us-east-1:123456789012:demo-WorkQueue"
    assert environment["QUEUE_NAME"] == "demo-WorkQueue"
    assert (
        environment["TABLE_ARN"] == "arn:aws:dynamodb:us-east-1:123456789012:table/demo-EntryTable"
    )
    assert environment["STREAM_ARN"].startswith(environment["TABLE_ARN"] + "/stream/")
    assert environment["BUCKET"] == "demo-uploadbucket"
    assert environment["SUBSTITUTED"] == "demo/demo-WorkQueue/us-east-1/${Literal}"
    assert environment["SUBSTITUTED_WITH_VARIABLES"] == "hello-test-123456789012"
    assert environment["SELECTED"] == "b"
    assert environment["CONDITIONAL"] == "vanilla-only"
    assert environment["ENABLED"] == "true"
    assert environment["URL"] == (
        f"https://{local_api_id('ProbeApi')}.execute-api.us-east-1.amazonaws.com/test"
    )


def test_no_value_removes_the_variable():
    # Given !If [IsChocolate, ..., !Ref AWS::NoValue] with the vanilla default
    template = load_template(FIXTURES / "template.yaml")
    # Then the variable does not exist at all
    assert "DROPPED" not in template.functions["EchoFunction"].environment


def test_parameter_overrides_flip_conditions_and_resources():
    # Given the chocolate flavour instead of the default
    template = load_template(
        FIXTURES / "template.yaml", parameter_overrides={"Flavour": "chocolate"}
    )
    # Then the conditional table exists and the vanilla-only variable is gone
    assert "ChocolateTable" in template.tables
    assert template.functions["EchoFunction"].environment["DROPPED"] == "chocolate-only"
    assert "CONDITIONAL" not in template.functions["EchoFunction"].environment


def test_api_events_carry_path_method_and_effective_authorizer(fixture_template):
    # Given the probe API: default authorizer, an Auth NONE route, an explicit override
    events = {event.name: event for _, event in fixture_template.api_events()}
    # Then methods are upper case and each route knows the authorizer that guards it
    assert (events["GetItem"].path, events["GetItem"].method) == ("/items/{itemId}", "GET")
    assert events["GetItem"].authorizer == "HeaderAuthorizer"
    assert events["AnyFile"].method == "ANY"
    assert events["Open"].authorizer is None
    assert events["Uncached"].authorizer == "UncachedAuthorizer"
    # And event types the stack does not drive are recorded, not silently dropped
    assert fixture_template.functions["EchoFunction"].ignored_events == {"Nightly": "Schedule"}


def test_authorizers_and_gateway_responses_are_read_from_the_api(fixture_template):
    api = fixture_template.apis["ProbeApi"]
    # Then authorizers point at their function's logical id, with identity and cache TTL
    header = api.authorizers["HeaderAuthorizer"]
    assert header.function_id == "AuthorizerFunction"
    assert header.payload_type == "REQUEST"
    assert header.identity_headers == ("Authorization", "X-Tenant")
    assert header.reauthorize_every == 60
    assert api.authorizers["UncachedAuthorizer"].reauthorize_every == 0
    assert api.default_authorizer == "HeaderAuthorizer"
    assert api.stage_name == "test"
    assert api.binary_media_types == ("image/png",)
    # And gateway responses keep status, templates and header expressions
    unauthorized = api.gateway_responses["UNAUTHORIZED"]
    assert unauthorized.status_code == 401
    assert unauthorized.headers["WWW-Authenticate"] == "'Bearer'"
    assert api.gateway_responses["DEFAULT_5XX"].status_code is None


def test_sqs_events_carry_the_event_source_mapping_settings(fixture_template):
    sources = {event.name: event for _, event in fixture_template.sqs_events()}
    # Then queue, batch size, response types, window and Enabled come from the template
    assert sources["Work"].queue_id == "WorkQueue"
    assert sources["Work"].batch_size == 5
    assert sources["Work"].reports_batch_item_failures
    assert sources["Plain"].batch_size == 20
    assert sources["Plain"].maximum_batching_window == 1
    assert not sources["Plain"].reports_batch_item_failures
    assert sources["Retry"].batch_size == 10  # SAM's default
    assert not sources["Paused"].enabled


def test_queues_carry_redrive_fifo_and_timeouts(fixture_template):
    queues = fixture_template.queues
    # Then the redrive policy names the DLQ by resolved ARN and by logical id
    redrive = queues["RetryQueue"].redrive
    assert redrive is not None
    assert redrive.dead_letter_queue_id == "RetryDeadLetterQueue"
    assert redrive.dead_letter_target_arn == queues["RetryDeadLetterQueue"].arn
    assert redrive.max_receive_count == 2
    assert queues["RetryQueue"].visibility_timeout == 0
    assert queues["WorkQueue"].visibility_timeout == 30
    assert queues["PlainQueue"].redrive is None
    assert queues["RetryDeadLetterQueue"].message_retention_period == 1209600
    # And a FIFO queue without a name gets one ending in .fifo, as CloudFormation does
    assert queues["OrderQueue"].fifo
    assert queues["OrderQueue"].name == "psap-local-OrderQueue.fifo"


def test_resource_names_follow_the_stack_name_unless_the_template_names_them(fixture_template):
    resources = fixture_template.physical_resources()
    assert resources["EntryTable"] == "psap-local-EntryTable"
    assert resources["NamedTable"] == "psap-local-named"
    assert resources["UploadBucket"] == "psap-local-uploadbucket"
    assert "ChocolateTable" not in resources


def test_code_folder_and_handler_come_from_the_template(fixture_template):
    echo = fixture_template.functions["EchoFunction"]
    assert echo.code_dir == (FIXTURES / "functions" / "probe").resolve()
    assert echo.handler == "probe_fn.echo"


def test_an_unresolvable_attribute_is_a_clear_error(tmp_path):
    # Given a function environment that asks for an attribute the stack cannot know
    path = tmp_path / "template.yaml"
    path.write_text(
        "Resources:\n"
        "  Q:\n    Type: AWS::SQS::Queue\n"
        "  F:\n    Type: AWS::Serverless::Function\n    Properties:\n"
        "      CodeUri: f/\n      Handler: app.handler\n"
        "      Environment: {Variables: {X: !GetAtt Q.Colour}}\n"
    )
    # Then loading fails naming the attribute
    with pytest.raises(TemplateError, match=r"Q\.Colour"):
        load_template(path)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("0", "Parameter 'CadIntakeConcurrency' must be a number not less than 10"),
        ("-5", "Parameter 'CadIntakeConcurrency' must be a number not less than 10"),
        ("100000", "Parameter 'CadIntakeConcurrency' must be a number not greater than 100"),
        ("fifty", "Parameter 'CadIntakeConcurrency' must be a number"),
    ],
)
def test_a_parameter_outside_its_bounds_stops_the_stack_as_cloudformation_does(
    override: str, message: str
) -> None:
    # Given the real template and a concurrency override `sam deploy` would refuse
    # Then the local stack refuses it too, naming the parameter as CloudFormation does
    with pytest.raises(TemplateError, match=f"^{message}$"):
        load_template(DEFAULT_TEMPLATE, parameter_overrides={"CadIntakeConcurrency": override})


def test_a_parameter_outside_its_allowed_values_stops_the_stack() -> None:
    # Given a dispatcher reservation the lane mapping has no row for
    refusal = r"^Parameter 'WebhookDispatcherConcurrency' must be one of AllowedValues$"
    with pytest.raises(TemplateError, match=refusal):
        load_template(DEFAULT_TEMPLATE, parameter_overrides={"WebhookDispatcherConcurrency": "120"})


def test_a_parameter_within_its_bounds_is_accepted() -> None:
    template = load_template(DEFAULT_TEMPLATE, parameter_overrides={"CadIntakeConcurrency": "100"})
    assert "CadIntakeFunction" in template.functions


def test_log_groups_and_topics_carry_their_keys_and_the_alarms_that_publish() -> None:
    # Given the project's template.yaml, read as plain YAML
    resources = load_yaml(DEFAULT_TEMPLATE)["Resources"]
    # When the local stack loads it
    template = load_template(DEFAULT_TEMPLATE)
    # Then every log group and topic is in the model with its key, and a topic knows every
    # alarm that names it (!Ref of a topic is its ARN, as in CloudFormation)
    groups = {key for key, value in resources.items() if value["Type"] == "AWS::Logs::LogGroup"}
    assert set(template.log_groups) == groups
    functions_group = template.log_groups["FunctionLogGroup"]
    assert functions_group.arn == (
        f"arn:aws:logs:us-east-1:123456789012:log-group:{functions_group.name}"
    )
    assert functions_group.properties["KmsKeyId"] == template.keys["OperationsKey"].arn
    topic = template.topics["OperatorAlarmTopic"]
    assert topic.arn == f"arn:aws:sns:us-east-1:123456789012:{topic.name}"
    assert topic.properties["KmsMasterKeyId"] == template.keys["OperationsKey"].arn
    alarms = {
        key
        for key, value in resources.items()
        if value["Type"] == "AWS::CloudWatch::Alarm"
        and {"Ref": "OperatorAlarmTopic"} in value["Properties"].get("AlarmActions", [])
    }
    assert alarms and set(topic.alarms) == alarms
