"""The embedded AWS refuses a role that may not use a store's customer-managed key, as AWS
does: the tables, buckets and queues are created encrypted with the template's keys, each
role acts with its policies from the translated template, and the key's policy decides
(naming the role, or delegating to the account's IAM policies)."""

import fnmatch
import json
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from local import iam, iam_enforcement, key_enforcement
from local.aws import alarm_arn, create_log_groups, create_topics
from local.template import ACCOUNT_ID, TemplateError
from psap.webhooks.secrets import ConnectorSecrets, create_secret, secret_name
from tests.conftest import TEMPLATE

ROLES = iam.default_function_roles()
NAMES = TEMPLATE.physical_resources()
ITEM = {"pk": {"S": "T#1#PROBE"}, "sk": {"S": "probe"}}
KEY_USE = ("kms:Decrypt", "kms:GenerateDataKey")


def _client(service: str, credentials: iam.RoleCredentials) -> Any:
    return boto3.client(  # type: ignore[call-overload]
        service,
        region_name="us-east-1",
        aws_access_key_id=credentials.access_key_id,
        aws_secret_access_key=credentials.secret_access_key,
        aws_session_token=credentials.session_token,
    )


def _role(function_id: str, *, without: tuple[str, ...] = (), suffix: str = "") -> Any:
    role = ROLES[function_id]
    if without or suffix:
        role = iam.FunctionRole(
            function_id=role.function_id,
            role_name=f"{role.role_name[:48]}-{suffix or 'nokey'}",
            trust_policy=role.trust_policy,
            policies=role.policies,
            managed_policy_arns=role.managed_policy_arns,
        )
    with iam_enforcement.paused():
        return iam.create_role(role, None, without=without)


def _refusal(error: pytest.ExceptionInfo[ClientError]) -> tuple[str, str]:
    return str(error.value.response["Error"]["Code"]), str(error.value)


def test_the_stores_are_encrypted_with_the_templates_keys(aws: None) -> None:
    with iam_enforcement.paused():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        sqs = boto3.client("sqs", region_name="us-east-1")
        s3 = boto3.client("s3", region_name="us-east-1")
        table = dynamodb.describe_table(TableName=NAMES["TenantDataTable"])["Table"]
        queue = sqs.get_queue_attributes(QueueUrl=NAMES["WebhookQueue"], AttributeNames=["All"])
        bucket = s3.get_bucket_encryption(Bucket=NAMES["MediaBucket"])
    tenant_data_key = TEMPLATE.keys["TenantDataKey"].arn
    assert table["SSEDescription"]["KMSMasterKeyArn"] == tenant_data_key
    assert queue["Attributes"]["KmsMasterKeyId"] == tenant_data_key
    (rule,) = bucket["ServerSideEncryptionConfiguration"]["Rules"]
    assert rule["ApplyServerSideEncryptionByDefault"]["KMSMasterKeyID"] == tenant_data_key
    assert rule["BucketKeyEnabled"] is True


def test_a_role_without_the_tables_key_is_refused_on_the_table(aws: None) -> None:
    # Given the incident reader's role, and the same role without the key's users policy
    whole = _client("dynamodb", _role("IncidentGetFunction"))
    lacking = _client("dynamodb", _role("IncidentGetFunction", without=KEY_USE))
    # When each reads an incident
    whole.get_item(TableName=NAMES["TenantDataTable"], Key=ITEM)
    with pytest.raises(ClientError) as refused:
        lacking.get_item(TableName=NAMES["TenantDataTable"], Key=ITEM)
    # Then the one that may not decrypt with the table's key is refused, naming the key
    code, message = _refusal(refused)
    assert code == "AccessDeniedException"
    assert f"kms:Decrypt on resource: {TEMPLATE.keys['TenantDataKey'].arn}" in message


def test_a_role_without_the_queues_key_cannot_send(aws: None) -> None:
    whole = _client("sqs", _role("CadIntakeFunction"))
    lacking = _client("sqs", _role("CadIntakeFunction", without=KEY_USE))
    whole.send_message(QueueUrl=NAMES["CadIntakeQueue"], MessageBody="{}")
    with pytest.raises(ClientError) as refused:
        lacking.send_message(QueueUrl=NAMES["CadIntakeQueue"], MessageBody="{}")
    code, message = _refusal(refused)
    assert code == "KmsAccessDenied"
    assert "kms:GenerateDataKey" in message


def test_a_role_without_the_buckets_key_cannot_put_or_get(aws: None) -> None:
    whole = _client("s3", _role("MediaRadioTrafficUploadFunction"))
    lacking = _client("s3", _role("MediaRadioTrafficUploadFunction", without=KEY_USE))
    whole.put_object(Bucket=NAMES["MediaBucket"], Key="probe.srt", Body=b"1")
    with pytest.raises(ClientError) as refused_put:
        lacking.put_object(Bucket=NAMES["MediaBucket"], Key="probe.srt", Body=b"2")
    with pytest.raises(ClientError) as refused_get:
        lacking.get_object(Bucket=NAMES["MediaBucket"], Key="probe.srt")
    assert _refusal(refused_put)[0] == _refusal(refused_get)[0] == "AccessDenied"
    assert whole.get_object(Bucket=NAMES["MediaBucket"], Key="probe.srt")["Body"].read() == b"1"


def test_a_role_missing_from_a_key_policy_that_delegates_nothing_is_refused(aws: None) -> None:
    # Given the tenant data key's policy narrowed to name one role, with no delegation to
    # the account's IAM policies
    reader = _role("IncidentGetFunction", suffix="named")
    other = _role("IncidentGetFunction", suffix="other")
    named_arn = (
        f"arn:aws:iam::{ACCOUNT_ID}:role/{ROLES['IncidentGetFunction'].role_name[:48]}-named"
    )
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"AWS": [named_arn]},
                "Action": list(KEY_USE),
                "Resource": "*",
            }
        ],
    }
    with iam_enforcement.paused():
        boto3.client("kms", region_name="us-east-1").put_key_policy(
            KeyId=TEMPLATE.keys["TenantDataKey"].key_id,
            PolicyName="default",
            Policy=json.dumps(policy),
        )
    # When the named role and a copy of it, whose IAM policy allows the key, read the table
    _client("dynamodb", reader).get_item(TableName=NAMES["TenantDataTable"], Key=ITEM)
    with pytest.raises(ClientError) as refused:
        _client("dynamodb", other).get_item(TableName=NAMES["TenantDataTable"], Key=ITEM)
    # Then only the role the key policy names gets in: IAM alone grants nothing on a key
    code, message = _refusal(refused)
    assert code == "AccessDeniedException" and "kms:Decrypt" in message


def test_a_connector_secret_is_created_under_the_secrets_key(aws: None) -> None:
    # Given the connector secrets' prefix and key from the template's Globals
    name = secret_name(7, "probe")
    # When a connector's secrets are stored
    create_secret(name, ConnectorSecrets(signing=()), tenant_id=7)
    # Then Secrets Manager encrypts them with our key, not its AWS-managed one
    with iam_enforcement.paused():
        described = boto3.client("secretsmanager", region_name="us-east-1").describe_secret(
            SecretId=name
        )
    assert described["KmsKeyId"] == TEMPLATE.keys["SecretsKey"].arn


# ---------------------------------------------------------------- Secrets Manager, SNS, Logs

SECRETS_KEY = TEMPLATE.keys["SecretsKey"]
OPERATIONS_KEY = TEMPLATE.keys["OperationsKey"]
SECRET_ACTIONS = ("CreateSecret", "GetSecretValue", "PutSecretValue")


def _operator(service: str) -> Any:
    return boto3.client(service, region_name="us-east-1")  # type: ignore[call-overload]


def _key_policy_without(key: Any, sid: str) -> None:
    """The key's template policy less one statement, put on the embedded AWS's key."""
    statements = [s for s in key.properties["KeyPolicy"]["Statement"] if s.get("Sid") != sid]
    assert len(statements) < len(key.properties["KeyPolicy"]["Statement"]), sid
    with iam_enforcement.paused():
        _operator("kms").put_key_policy(
            KeyId=key.key_id,
            PolicyName="default",
            Policy=json.dumps({"Version": "2012-10-17", "Statement": statements}),
        )


def test_a_role_the_secrets_key_does_not_name_cannot_store_or_read_a_secret(aws: None) -> None:
    # Given the connector roles, and copies of them (same IAM policies) that the secrets
    # key's policy does not name
    name = secret_name(7, "probe")
    creator = _client("secretsmanager", _role("AdminConnectorCreateFunction"))
    reader = _client("secretsmanager", _role("WebhookDispatcherFunction"))
    stranger = _client("secretsmanager", _role("AdminConnectorCreateFunction", suffix="unnamed"))
    strange_reader = _client("secretsmanager", _role("WebhookDispatcherFunction", suffix="unnamed"))
    # When each stores and reads a connector secret under the secrets key
    with pytest.raises(ClientError) as refused_create:
        stranger.create_secret(Name=name, SecretString="{}", KmsKeyId=SECRETS_KEY.arn)
    creator.create_secret(Name=name, SecretString="{}", KmsKeyId=SECRETS_KEY.arn)
    with pytest.raises(ClientError) as refused_read:
        strange_reader.get_secret_value(SecretId=name)
    # Then only the named roles get in, refused as Secrets Manager refuses (400)
    assert reader.get_secret_value(SecretId=name)["SecretString"] == "{}"
    for refused in (refused_create, refused_read):
        code, message = _refusal(refused)
        assert code == "AccessDeniedException"
        assert "Access to KMS is not allowed" in message
        assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert len(_operator("secretsmanager").list_secrets()["SecretList"]) == 1


def test_a_secret_on_an_aws_managed_key_needs_nothing_from_kms(aws: None) -> None:
    # Given a copy of the creator's role that no key policy names
    stranger = _client("secretsmanager", _role("AdminConnectorCreateFunction", suffix="unnamed"))
    # When it stores a secret without naming a key (Secrets Manager's own aws/secretsmanager)
    stranger.create_secret(Name=secret_name(7, "plain"), SecretString="{}")
    # Then nothing is asked of it: AWS-managed keys are the service's business
    assert _operator("secretsmanager").list_secrets()["SecretList"]


def test_every_function_that_uses_connector_secrets_may_use_the_secrets_key(aws: None) -> None:
    # Given every role the translated template lets store, read or change a connector secret
    users = {
        function_id: {
            action
            for action in SECRET_ACTIONS
            if any(
                _allows(statement, f"secretsmanager:{action}") for statement in role.statements()
            )
        }
        for function_id, role in ROLES.items()
    }
    users = {function_id: actions for function_id, actions in users.items() if actions}
    assert {"WebhookDispatcherFunction", "AdminConnectorCreateFunction"} <= set(users)
    # When each does what its role allows, under its own role, on a secret under the key
    for number, (function_id, actions) in enumerate(sorted(users.items())):
        name = secret_name(7, f"user-{number}")
        client = _client("secretsmanager", _role(function_id))
        if "CreateSecret" in actions:
            client.create_secret(Name=name, SecretString="{}", KmsKeyId=SECRETS_KEY.arn)
        else:
            _operator("secretsmanager").create_secret(
                Name=name, SecretString="{}", KmsKeyId=SECRETS_KEY.arn
            )
        if "PutSecretValue" in actions:
            client.put_secret_value(SecretId=name, SecretString='{"v": 2}')
        # Then the key policy the template writes lets it (a refusal raises here)
        if "GetSecretValue" in actions:
            assert client.get_secret_value(SecretId=name)["SecretString"]


def test_a_role_dropped_from_the_secrets_key_policy_is_refused(aws: None) -> None:
    # Given the secrets key's policy without its users' statement (the account root stays)
    name = secret_name(7, "probe")
    _operator("secretsmanager").create_secret(
        Name=name, SecretString="{}", KmsKeyId=SECRETS_KEY.arn
    )
    _key_policy_without(SECRETS_KEY, "ConnectorSecretUsers")
    # When the dispatcher reads a connector secret
    with pytest.raises(ClientError) as refused:
        _client("secretsmanager", _role("WebhookDispatcherFunction")).get_secret_value(
            SecretId=name
        )
    # Then it is refused: its IAM policies do not grant the key either
    assert _refusal(refused)[0] == "AccessDeniedException"


def _publisher(suffix: str, statements: list[dict[str, Any]]) -> Any:
    role = iam.FunctionRole(
        function_id="AlarmProbe",
        role_name=f"psap-probe-publisher-{suffix}",
        trust_policy=ROLES["IncidentGetFunction"].trust_policy,
        policies={"publish": {"Version": "2012-10-17", "Statement": statements}},
        managed_policy_arns=(),
    )
    with iam_enforcement.paused():
        return _client("sns", iam.create_role(role, None))


def test_a_publisher_without_the_topics_key_is_refused(aws: None) -> None:
    # Given the operators' topic encrypted with the operations key, a role that may publish
    # to it, and one that may also use the key (the key policy delegates to IAM)
    with iam_enforcement.paused():
        topic = _operator("sns").create_topic(
            Name="psap-probe-alarms", Attributes={"KmsMasterKeyId": OPERATIONS_KEY.arn}
        )["TopicArn"]
    publish = {"Effect": "Allow", "Action": "sns:Publish", "Resource": topic}
    use_key = {
        "Effect": "Allow",
        "Action": ["kms:GenerateDataKey*", "kms:Decrypt"],
        "Resource": OPERATIONS_KEY.arn,
    }
    lacking = _publisher("nokey", [publish])
    whole = _publisher("key", [publish, use_key])
    # When each publishes
    whole.publish(TopicArn=topic, Message="probe")
    with pytest.raises(ClientError) as refused:
        lacking.publish(TopicArn=topic, Message="probe")
    # Then the one that may not make a data key with the topic's key is refused as SNS does
    code, message = _refusal(refused)
    assert code == "KMSAccessDenied"
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert OPERATIONS_KEY.arn in message


def test_a_log_group_is_created_only_under_a_key_that_lets_cloudwatch_logs_use_it(
    aws: None,
) -> None:
    # Given a key whose policy only lets the account administer it, and the operations key,
    # which lets CloudWatch Logs use it for this stack's log groups
    logs = _operator("logs")
    with iam_enforcement.paused():
        bare_key = _operator("kms").create_key(
            Policy=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT_ID}:root"},
                            "Action": "kms:*",
                            "Resource": "*",
                        }
                    ],
                }
            )
        )["KeyMetadata"]["Arn"]
    ours = f"/psap/{TEMPLATE.stack_name}/probe"
    # When the operator (who may do anything) creates log groups under each
    with pytest.raises(ClientError) as refused_bare:
        logs.create_log_group(logGroupName=ours, kmsKeyId=bare_key)
    with pytest.raises(ClientError) as refused_elsewhere:
        logs.create_log_group(logGroupName="/other/probe", kmsKeyId=OPERATIONS_KEY.arn)
    logs.create_log_group(logGroupName=ours, kmsKeyId=OPERATIONS_KEY.arn)
    # Then only the key policy decides: CloudWatch Logs may use the operations key for the
    # stack's own groups (its encryption context condition), and nothing else
    for refused, name in ((refused_bare, ours), (refused_elsewhere, "/other/probe")):
        code, message = _refusal(refused)
        assert code == "AccessDeniedException"
        assert (
            "The specified KMS key does not exist or is not allowed to be used with Arn"
            f" 'arn:aws:logs:us-east-1:{ACCOUNT_ID}:log-group:{name}'" in message
        )
    (group,) = logs.describe_log_groups(logGroupNamePrefix="/psap/")["logGroups"]
    assert group["kmsKeyId"] == OPERATIONS_KEY.arn


def test_log_events_are_refused_once_the_groups_key_no_longer_lets_cloudwatch_logs_in(
    aws: None,
) -> None:
    # Given the functions' log group under the operations key, and a function's role, which
    # holds no right to that key (CloudWatch Logs, not the writer, uses it)
    group = f"/psap/{TEMPLATE.stack_name}/functions"
    _operator("logs").create_log_group(logGroupName=group, kmsKeyId=OPERATIONS_KEY.arn)
    writer = _client("logs", _role("IncidentGetFunction"))
    writer.create_log_stream(logGroupName=group, logStreamName="probe")
    event = [{"timestamp": 1_700_000_000_000, "message": "probe"}]
    writer.put_log_events(logGroupName=group, logStreamName="probe", logEvents=event)
    # When the key's policy loses its CloudWatch Logs statement
    _key_policy_without(OPERATIONS_KEY, "LogsEncryptThisStacksLogGroups")
    # Then the group takes no more events
    with pytest.raises(ClientError) as refused:
        writer.put_log_events(logGroupName=group, logStreamName="probe", logEvents=event)
    assert _refusal(refused)[0] == "AccessDeniedException"


def test_every_functions_log_group_is_made_under_a_key_that_takes_its_logs(aws: None) -> None:
    # Given the template's log groups, made in the embedded AWS as the local stack makes them
    create_log_groups(TEMPLATE, None)
    logs = _operator("logs")
    made = {group["logGroupName"]: group for group in logs.describe_log_groups()["logGroups"]}
    # When each function's log lines go to its group (LoggingConfig.LogGroup)
    for function in TEMPLATE.functions.values():
        group = made[function.log_group]
        stream = function.logical_id
        logs.create_log_stream(logGroupName=function.log_group, logStreamName=stream)
        logs.put_log_events(
            logGroupName=function.log_group,
            logStreamName=stream,
            logEvents=[{"timestamp": 1_700_000_000_000, "message": "probe"}],
        )
        # Then every group is encrypted with the operations key, which takes its lines
        assert group["kmsKeyId"] == OPERATIONS_KEY.arn, function.logical_id


def test_a_key_policy_without_its_logs_statement_stops_the_stack_making_the_groups(
    aws: None,
) -> None:
    # Given the operations key's policy without the statement for CloudWatch Logs
    _key_policy_without(OPERATIONS_KEY, "LogsEncryptThisStacksLogGroups")
    # When the local stack makes the template's log groups, then it stops, naming the group
    with pytest.raises(TemplateError, match=r"FunctionLogGroup: .*not allowed to be used"):
        create_log_groups(TEMPLATE, None)


def test_every_alarm_may_publish_to_the_encrypted_operator_topic(aws: None) -> None:
    # Given the operators' topic, made under its key as the local stack makes it
    create_topics(TEMPLATE, None)
    topic = TEMPLATE.topics["OperatorAlarmTopic"]
    attributes = _operator("sns").get_topic_attributes(TopicArn=topic.arn)["Attributes"]
    assert attributes["KmsMasterKeyId"] == OPERATIONS_KEY.arn
    # When each alarm that names it publishes, as cloudwatch.amazonaws.com
    assert len(topic.alarms) >= 10
    for alarm in topic.alarms:
        # Then the key policy lets it (a refusal raises here)
        key_enforcement.authorize_alarm_publish(topic.arn, alarm_arn(alarm))


def test_a_topic_key_that_does_not_let_alarms_publish_stops_the_stack(aws: None) -> None:
    # Given the operations key's policy without the statement for CloudWatch alarms
    _key_policy_without(OPERATIONS_KEY, "AlarmsPublishToTheEncryptedTopic")
    # When the local stack makes the topic, then it stops, naming an alarm that would be lost
    with pytest.raises(TemplateError, match="publishes to OperatorAlarmTopic, whose key"):
        create_topics(TEMPLATE, None)
    # And the decision itself names the service and the action refused
    with pytest.raises(key_enforcement.KeyRefusal) as refused:
        key_enforcement.authorize_alarm_publish(
            TEMPLATE.topics["OperatorAlarmTopic"].arn, alarm_arn("probe")
        )
    assert refused.value.caller == "cloudwatch.amazonaws.com"
    assert refused.value.action == "kms:GenerateDataKey"


def _allows(statement: Any, action: str) -> bool:
    actions = statement.get("Action", [])
    listed = actions if isinstance(actions, list) else [actions]
    return statement.get("Effect") == "Allow" and any(
        fnmatch.fnmatchcase(action, pattern) for pattern in listed
    )
