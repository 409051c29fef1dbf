"""Data protection on the SAM-translated template (what CloudFormation deploys): every table,
bucket, queue, secret, log group and key is retained, encrypted with a key of ours that
rotates and whose users are named; buckets are versioned and refuse plain HTTP; a daily
35-day backup plan covers every table; no function records responses in X-Ray.

The rules list resources by type, so a resource added later without the protections fails
here by name. Each rule is also shown to catch a template that breaks it."""

import copy
import functools
from pathlib import Path
from typing import Any

import pytest

from local.iam import translate
from local.template import DEFAULT_TEMPLATE, load_yaml
from tools import data_protection
from tools.data_protection import (
    buckets_without_tls_policy,
    buckets_without_versioning,
    encryption_keys,
    functions_capturing_traces,
    key_grants,
    keys_without_rotation,
    not_retained,
    roles_without_key_grants,
    stores_without_our_keys,
    tables_without_backup,
    tables_without_deletion_protection,
)

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def _translated() -> dict[str, Any]:
    return translate(load_yaml(DEFAULT_TEMPLATE), stack_name="psap-protect")


@pytest.fixture
def translated() -> dict[str, Any]:
    return copy.deepcopy(_translated())


def _of_type(template: dict[str, Any], kind: str) -> list[str]:
    return [i for i, r in template["Resources"].items() if r["Type"] == kind]


def test_the_template_keeps_every_data_protection_rule(translated: dict[str, Any]) -> None:
    assert data_protection.problems(translated) == []


def test_every_store_is_encrypted_by_one_of_four_keys(translated: dict[str, Any]) -> None:
    # (A fifth key encrypts nothing: the audit seal key signs the audit digests.)
    # Given the stores of each kind the stack holds
    stores = {
        kind: _of_type(translated, kind)
        for kind in ("AWS::DynamoDB::Table", "AWS::S3::Bucket", "AWS::SQS::Queue")
    }
    assert all(stores.values())
    # Then each names a key of this template, and the keys are the data classes
    keys = encryption_keys(translated)
    assert {i for ids in stores.values() for i in ids} <= set(keys)
    assert set(_of_type(translated, "AWS::KMS::Key")) == {
        "TenantDataKey",
        "AuditKey",
        "SecretsKey",
        "OperationsKey",
        "AuditSealKey",
    }
    assert "AuditSealKey" not in keys.values()
    assert keys["IncidentUploadBucket"] == "TenantDataKey"
    assert keys["AuditTable"] == keys["AuditSealTable"] == "AuditKey"
    assert keys["FunctionLogGroup"] == keys["OperatorAlarmTopic"] == "OperationsKey"


def test_the_connector_secrets_key_policy_names_the_roles_that_use_secrets(
    translated: dict[str, Any],
) -> None:
    named = key_grants(translated)["SecretsKey"]
    assert {"WebhookDispatcherFunctionRole", "AdminConnectorCreateFunctionRole"} <= named
    assert "KnowledgeGetFunctionRole" not in named


def test_a_table_added_without_protection_breaks_the_rules(translated: dict[str, Any]) -> None:
    # Given a new table declared as the tables were before this rule
    translated["Resources"]["ScratchTable"] = {
        "Type": "AWS::DynamoDB::Table",
        "Properties": {
            "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "SSESpecification": {"SSEEnabled": True},
        },
    }
    # Then every rule that concerns tables names it
    assert not_retained(translated) == [
        "ScratchTable: a AWS::DynamoDB::Table without DeletionPolicy and UpdateReplacePolicy Retain"
    ]
    assert tables_without_deletion_protection(translated) == [
        "ScratchTable: a table without DeletionProtectionEnabled"
    ]
    assert [p.split(":")[0] for p in stores_without_our_keys(translated)] == ["ScratchTable"]
    assert tables_without_backup(translated) == [
        "ScratchTable: a table no daily 35-day backup plan selects"
    ]


def test_a_bucket_added_without_protection_breaks_the_rules(translated: dict[str, Any]) -> None:
    translated["Resources"]["ScratchBucket"] = {
        "Type": "AWS::S3::Bucket",
        "DeletionPolicy": "Retain",
        "UpdateReplacePolicy": "Retain",
        "Properties": {
            "BucketEncryption": {
                "ServerSideEncryptionConfiguration": [
                    {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}
                ]
            }
        },
    }
    assert buckets_without_versioning(translated) == ["ScratchBucket: a bucket without versioning"]
    assert buckets_without_tls_policy(translated) == [
        "ScratchBucket: no bucket policy denies requests without TLS (aws:SecureTransport)"
    ]
    assert [p.split(":")[0] for p in stores_without_our_keys(translated)] == ["ScratchBucket"]


def test_a_tls_policy_that_leaves_the_objects_out_does_not_count(
    translated: dict[str, Any],
) -> None:
    (policy_id,) = [
        i
        for i in _of_type(translated, "AWS::S3::BucketPolicy")
        if translated["Resources"][i]["Properties"]["Bucket"] == {"Ref": "MediaBucket"}
    ]
    statement = translated["Resources"][policy_id]["Properties"]["PolicyDocument"]["Statement"][0]
    statement["Resource"] = statement["Resource"][:1]
    assert buckets_without_tls_policy(translated) == [
        "MediaBucket: no bucket policy denies requests without TLS (aws:SecureTransport)"
    ]


def test_a_queue_or_log_group_on_an_aws_key_breaks_the_rule(translated: dict[str, Any]) -> None:
    queue = translated["Resources"]["WebhookQueue"]["Properties"]
    queue.pop("KmsMasterKeyId")
    queue["SqsManagedSseEnabled"] = True
    translated["Resources"]["FunctionLogGroup"]["Properties"].pop("KmsKeyId")
    assert sorted(p.split(":")[0] for p in stores_without_our_keys(translated)) == [
        "FunctionLogGroup",
        "WebhookQueue",
    ]


def test_a_key_without_rotation_breaks_the_rule(translated: dict[str, Any]) -> None:
    translated["Resources"]["AuditKey"]["Properties"]["EnableKeyRotation"] = False
    assert keys_without_rotation(translated) == ["AuditKey: a key without EnableKeyRotation"]


def test_an_asymmetric_signing_key_needs_no_rotation(translated: dict[str, Any]) -> None:
    # KMS cannot rotate an asymmetric key; the audit seal key's spec says it is one
    seal_key = translated["Resources"]["AuditSealKey"]["Properties"]
    assert seal_key["KeySpec"] == "ECC_NIST_P256"
    assert "EnableKeyRotation" not in seal_key
    assert keys_without_rotation(translated) == []
    seal_key["KeySpec"] = "SYMMETRIC_DEFAULT"
    assert keys_without_rotation(translated) == ["AuditSealKey: a key without EnableKeyRotation"]


def test_a_role_left_out_of_its_keys_users_breaks_the_rule(translated: dict[str, Any]) -> None:
    # Given the incident reader's role dropped from the tenant data key's users
    (users,) = [
        translated["Resources"][i]["Properties"]
        for i in _of_type(translated, "AWS::IAM::Policy")
        if i == "TenantDataKeyUsers"
    ]
    users["Roles"].remove({"Ref": "IncidentGetFunctionRole"})
    # And the dispatcher's role dropped from the secrets key's policy
    secrets_policy = translated["Resources"]["SecretsKey"]["Properties"]["KeyPolicy"]
    for statement in secrets_policy["Statement"]:
        principals = (statement.get("Principal") or {}).get("AWS")
        if isinstance(principals, list):
            principals.remove({"Fn::GetAtt": ["WebhookDispatcherFunctionRole", "Arn"]})
    # Then both roles are named, with the key they need
    assert roles_without_key_grants(translated) == [
        "IncidentGetFunctionRole: uses TenantDataKey but is not given kms:Decrypt and"
        " kms:GenerateDataKey on it (its key policy or the key's users policy)",
        "WebhookDispatcherFunctionRole: uses SecretsKey but is not given kms:Decrypt and"
        " kms:GenerateDataKey on it (its key policy or the key's users policy)",
    ]


def test_a_queue_consumer_needs_its_queues_key(translated: dict[str, Any]) -> None:
    # The audit export worker never names its queue in a statement (SAM's poller policy
    # covers it), yet it reads encrypted messages from it.
    users = translated["Resources"]["AuditKeyUsers"]["Properties"]
    users["Roles"].remove({"Ref": "AuditExportWorkerFunctionRole"})
    assert [p.split(":")[0] for p in roles_without_key_grants(translated)] == [
        "AuditExportWorkerFunctionRole"
    ]


def test_a_function_that_records_responses_in_traces_breaks_the_rule(
    translated: dict[str, Any],
) -> None:
    properties = translated["Resources"]["IncidentGetFunction"]["Properties"]
    # SAM shares one Globals environment among the functions: change this function's only.
    variables = properties["Environment"]["Variables"]
    properties["Environment"] = {
        "Variables": {**variables, "POWERTOOLS_TRACER_CAPTURE_RESPONSE": "true"}
    }
    assert functions_capturing_traces(translated) == [
        'IncidentGetFunction: POWERTOOLS_TRACER_CAPTURE_RESPONSE is not "false"'
    ]


def test_no_code_asks_the_tracer_to_capture_a_response() -> None:
    # The environment turns capture off; an explicit argument in code would turn it back on.
    sources = [*ROOT.glob("functions/*/app.py"), *ROOT.glob("layers/shared/psap/**/*.py")]
    offenders = [
        str(path.relative_to(ROOT))
        for path in sources
        if "capture_response=True" in path.read_text(encoding="utf-8")
        or "capture_error=True" in path.read_text(encoding="utf-8")
    ]
    assert sources and offenders == []
