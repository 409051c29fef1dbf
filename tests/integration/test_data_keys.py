"""The embedded AWS refuses a role that may not use a store's customer-managed key, as AWS
does: the tables, buckets and queues are created encrypted with the template's keys, each
role acts with its policies from the translated template, and the key's policy decides
(naming the role, or delegating to the account's IAM policies)."""

import json
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from local import iam, iam_enforcement
from local.template import ACCOUNT_ID
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
