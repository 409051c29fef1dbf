"""Deploy rehearsal: the translated template's stateful resources, created by the
embedded AWS's CloudFormation, match what the local stack builds from the same template.

What CloudFormation would deploy (tables, queues, buckets, roles and their policies, log
groups, alarms and the operators' topic) is created with `CreateStack` in one moto; the local
stack's own builders (local.aws, local.iam) create theirs in another; the two are compared
resource by resource. Functions, the API and event source mappings are not stateful and are
covered by the gateway, runtime and poller tests instead.
"""

import ast
import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from local import iam, iam_enforcement
from local.aws import create_resources
from local.iam import translate
from local.template import DEFAULT_TEMPLATE, load_yaml
from tests.conftest import TEMPLATE

STATEFUL = {
    "AWS::DynamoDB::Table",
    "AWS::SQS::Queue",
    "AWS::S3::Bucket",
    "AWS::IAM::Role",
    "AWS::Logs::LogGroup",
    "AWS::CloudWatch::Alarm",
    "AWS::SNS::Topic",
    "AWS::SNS::Subscription",
    "AWS::KMS::Key",
    "AWS::IAM::Policy",
}
STACK = "psap-rehearsal"
REGION = "us-east-1"


def _client(service: str) -> Any:
    return boto3.client(  # type: ignore[call-overload]
        service,
        region_name=REGION,
        aws_access_key_id=iam.OPERATOR_ACCESS_KEY_ID,
        aws_secret_access_key=iam.OPERATOR_SECRET_ACCESS_KEY,
    )


def _stateful_template() -> dict[str, Any]:
    translated = translate(load_yaml(DEFAULT_TEMPLATE), stack_name=STACK)
    resources = {
        logical_id: resource
        for logical_id, resource in translated["Resources"].items()
        if resource["Type"] in STATEFUL
    }
    # A role's managed policies are AWS's, which this embedded AWS does not hold.
    for resource in resources.values():
        if resource["Type"] == "AWS::IAM::Role":
            resource["Properties"].pop("ManagedPolicyArns", None)
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Parameters": translated.get("Parameters", {}),
        "Conditions": translated.get("Conditions", {}),
        "Resources": resources,
    }


def _table(client: Any, name: str) -> dict[str, Any]:
    table = client.describe_table(TableName=name)["Table"]
    ttl = client.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
    return {
        "keys": table["KeySchema"],
        "attributes": sorted(table["AttributeDefinitions"], key=lambda a: a["AttributeName"]),
        "billing": table.get("BillingModeSummary", {}).get("BillingMode"),
        "ttl": ttl.get("AttributeName") if ttl.get("TimeToLiveStatus") == "ENABLED" else None,
        "stream": table.get("StreamSpecification", {}).get("StreamViewType"),
    }


def _queue(client: Any, url: str, names: dict[str, str]) -> dict[str, Any]:
    attributes = client.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    redrive = json.loads(attributes.get("RedrivePolicy", "null") or "null")
    return {
        "visibility": attributes["VisibilityTimeout"],
        "retention": attributes["MessageRetentionPeriod"],
        "redrive": None
        if redrive is None
        else (
            names[redrive["deadLetterTargetArn"].rsplit(":", 1)[1]],
            int(redrive["maxReceiveCount"]),
        ),
    }


def _role_policies(client: Any, role_name: str) -> dict[str, Any]:
    names = client.list_role_policies(RoleName=role_name)["PolicyNames"]
    documents = {}
    for name in names:
        document = client.get_role_policy(RoleName=role_name, PolicyName=name)["PolicyDocument"]
        if isinstance(document, str):
            # moto's CloudFormation stores the document as Python's repr of the dict.
            document = (
                ast.literal_eval(document) if document.startswith("{'") else json.loads(document)
            )
        document.pop("Version", None)
        documents[name] = _normalized(document)
    return documents


def _normalized(document: Any) -> Any:
    """Lists of one become the item, names of this stack become logical names."""
    if isinstance(document, dict):
        return {key: _normalized(value) for key, value in sorted(document.items())}
    if isinstance(document, list):
        items = [_normalized(item) for item in document]
        return items[0] if len(items) == 1 else items
    return document


@pytest.fixture
def deployed() -> Iterator[dict[str, Any]]:
    """The stateful resources as CloudFormation creates them, by logical id."""
    with mock_aws(), iam_enforcement.paused():
        cloudformation = _client("cloudformation")
        cloudformation.create_stack(
            StackName=STACK,
            TemplateBody=json.dumps(_stateful_template()),
            Capabilities=["CAPABILITY_IAM"],
        )
        status = cloudformation.describe_stacks(StackName=STACK)["Stacks"][0]["StackStatus"]
        physical = {
            resource["LogicalResourceId"]: resource["PhysicalResourceId"]
            for resource in cloudformation.describe_stack_resources(StackName=STACK)[
                "StackResources"
            ]
            if "LogicalResourceId" in resource
        }
        _put_alarms(physical)
        yield {"status": status, **_describe(physical)}


def _put_alarms(physical: dict[str, str]) -> None:
    """moto's CloudFormation cannot create AWS::CloudWatch::Alarm: each alarm of the
    translated template goes to CloudWatch's PutMetricAlarm instead, with the references
    resolved against what CloudFormation created. CloudWatch checks the properties."""
    template = _stateful_template()
    topic_arn = _client("sns").list_topics()["Topics"][0]["TopicArn"]
    parameters = {name: p.get("Default") for name, p in template["Parameters"].items()}

    def resolve(value: Any) -> Any:
        if isinstance(value, list):
            return [resolve(item) for item in value]
        if not isinstance(value, dict):
            return value
        if "Ref" in value:
            name = value["Ref"]
            return topic_arn if name == "OperatorAlarmTopic" else parameters.get(name, name)
        if "Fn::GetAtt" in value:
            logical_id, attribute = value["Fn::GetAtt"]
            assert attribute == "QueueName", value
            return physical[logical_id].rsplit("/", 1)[1]
        if "Fn::Sub" in value:
            return str(value["Fn::Sub"]).replace("${AWS::StackName}", STACK)
        return {key: resolve(item) for key, item in value.items()}

    cloudwatch = _client("cloudwatch")
    for logical_id, resource in template["Resources"].items():
        if resource["Type"] == "AWS::CloudWatch::Alarm":
            properties = resolve(resource["Properties"])
            cloudwatch.put_metric_alarm(AlarmName=f"{STACK}-{logical_id}", **properties)
            physical[logical_id] = f"{STACK}-{logical_id}"


def _describe(physical: dict[str, str]) -> dict[str, Any]:
    dynamodb, sqs, s3, iam_client = (_client(s) for s in ("dynamodb", "sqs", "s3", "iam"))
    queue_names = {
        url.rsplit("/", 1)[1]: logical_id
        for logical_id, url in physical.items()
        if logical_id in TEMPLATE.queues
    }
    return {
        "physical": physical,
        "tables": {i: _table(dynamodb, physical[i]) for i in TEMPLATE.tables},
        "queues": {i: _queue(sqs, physical[i], queue_names) for i in TEMPLATE.queues},
        "buckets": {
            i: s3.get_bucket_versioning(Bucket=physical[i]).get("Status") for i in TEMPLATE.buckets
        },
        "roles": {
            function_id: _role_policies(iam_client, physical[f"{function_id}Role"])
            for function_id in TEMPLATE.functions
        },
        "alarms": {
            alarm["AlarmName"]: alarm
            for alarm in _client("cloudwatch").describe_alarms()["MetricAlarms"]
        },
        "topics": _client("sns").list_topics()["Topics"],
    }


@pytest.fixture
def local() -> Iterator[dict[str, Any]]:
    """The same resources as the local stack builds them."""
    with mock_aws(), iam_enforcement.paused():
        create_resources(TEMPLATE, None)  # type: ignore[arg-type]
        iam.create_operator(None)
        roles = iam.default_function_roles()
        for role in roles.values():
            iam.create_role(role, None)
        physical = dict(TEMPLATE.physical_resources())
        physical.update({f"{i}Role": role.role_name for i, role in roles.items()})
        yield _describe(physical)


def test_cloudformation_creates_every_stateful_resource(deployed: dict[str, Any]) -> None:
    assert deployed["status"] == "CREATE_COMPLETE"
    expected = {
        logical_id
        for logical_id, r in _stateful_template()["Resources"].items()
        if "Condition" not in r
    }
    assert expected <= set(deployed["physical"])


def test_tables_queues_and_buckets_match_the_local_stack(
    deployed: dict[str, Any], local: dict[str, Any]
) -> None:
    # moto's CloudFormation does not apply TimeToLiveSpecification: the TTL the local stack
    # sets is compared with the template's declaration instead.
    declared_ttl = {
        table.logical_id: (table.properties.get("TimeToLiveSpecification") or {}).get(
            "AttributeName"
        )
        for table in TEMPLATE.tables.values()
    }
    assert {i: t["ttl"] for i, t in local["tables"].items()} == declared_ttl

    def without_ttl(tables: dict[str, Any]) -> dict[str, Any]:
        return {i: {k: v for k, v in t.items() if k != "ttl"} for i, t in tables.items()}

    assert without_ttl(deployed["tables"]) == without_ttl(local["tables"])
    assert deployed["queues"] == local["queues"]
    # Nor does it apply VersioningConfiguration: the buckets exist in both, and the local
    # stack's versioning is the template's declaration.
    assert set(deployed["buckets"]) == set(local["buckets"])
    declared_versioning = {
        bucket.logical_id: (bucket.properties.get("VersioningConfiguration") or {}).get("Status")
        for bucket in TEMPLATE.buckets.values()
    }
    assert local["buckets"] == declared_versioning


def test_every_function_role_has_the_policies_the_local_stack_enforces(
    deployed: dict[str, Any], local: dict[str, Any]
) -> None:
    for function_id in TEMPLATE.functions:
        deployed_policies = {
            name: document
            for name, document in deployed["roles"][function_id].items()
            if not name.startswith("AWS")  # the managed ones are AWS's, attached on deploy
        }
        local_policies = {
            name: document
            for name, document in local["roles"][function_id].items()
            if not name.startswith("AWS")
        }
        assert _with_logical_names(deployed_policies, deployed["physical"]) == _with_logical_names(
            local_policies, local["physical"]
        ), function_id


def _with_logical_names(policies: dict[str, Any], physical: dict[str, str]) -> Any:
    text = json.dumps(policies, sort_keys=True)
    for logical_id, name in sorted(physical.items(), key=lambda item: -len(item[1])):
        if (
            logical_id in TEMPLATE.tables
            or logical_id in TEMPLATE.buckets
            or (logical_id in TEMPLATE.keys)
        ):
            text = text.replace(name, f"<{logical_id}>")
        elif logical_id in TEMPLATE.queues:
            text = text.replace(name.rsplit("/", 1)[1], f"<{logical_id}>")
    return json.loads(text.replace(STACK, "<stack>").replace("psap-local", "<stack>"))


def test_every_dead_letter_queue_has_an_alarm_that_notifies_the_topic(
    deployed: dict[str, Any],
) -> None:
    topic_arns = {topic["TopicArn"] for topic in deployed["topics"]}
    watched = set()
    for alarm in deployed["alarms"].values():
        assert set(alarm["AlarmActions"]) <= topic_arns and alarm["AlarmActions"], alarm
        watched |= {d["Value"] for d in alarm.get("Dimensions", []) if d["Name"] == "QueueName"}
    dead_letter = {
        deployed["physical"][queue.logical_id].rsplit("/", 1)[1]
        for queue in TEMPLATE.queues.values()
        if queue.logical_id.endswith("DeadLetterQueue")
    }
    assert dead_letter and dead_letter <= watched
