"""The embedded AWS refuses a caller who may not use a store's customer-managed key.

On AWS, reading or writing a DynamoDB table, S3 object, SQS message, secret value or SNS
message that a customer-managed KMS key encrypts also needs the caller's right to use that
key: DynamoDB decrypts the table key (kms:Decrypt); S3, SQS, Secrets Manager and SNS make a
data key to write (kms:GenerateDataKey) and decrypt it to read (kms:Decrypt). moto checks
none of it. Here the key's policy decides first: a statement that names the caller's role
allows; one that names the account root delegates to the caller's IAM policies, as KMS
does; nothing else allows.

CloudWatch Logs is different: the service itself, not the caller, uses a log group's key,
so only the key policy's statement for the service principal (`logs.<region>.amazonaws.com`)
can allow it, under the group's encryption context (`service_authorize`).

Stores on AWS-owned or AWS-managed keys (`alias/aws/...`) need nothing from the caller and
are not checked. The lookups are a few dictionary reads in moto's backends; parsed key
policies are cached by their text, so the check stays cheap on every request.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, Final

from local.template import ACCOUNT_ID, REGION

# The item and message operations that touch encrypted data, and what each needs of the key.
_DYNAMODB_ACTIONS: Final = frozenset(
    {
        "GetItem",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "Query",
        "Scan",
        "BatchGetItem",
        "BatchWriteItem",
        "ConditionCheckItem",
    }
)
_SQS_ACTIONS: Final[Mapping[str, tuple[str, ...]]] = {
    "SendMessage": ("kms:GenerateDataKey", "kms:Decrypt"),
    "ReceiveMessage": ("kms:Decrypt",),
}
_S3_ACTIONS: Final[Mapping[str, tuple[str, ...]]] = {
    "PutObject": ("kms:GenerateDataKey",),
    "CreateMultipartUpload": ("kms:GenerateDataKey", "kms:Decrypt"),
    "UploadPart": ("kms:GenerateDataKey", "kms:Decrypt"),
    "CompleteMultipartUpload": ("kms:GenerateDataKey", "kms:Decrypt"),
    "CopyObject": ("kms:GenerateDataKey", "kms:Decrypt"),
    "GetObject": ("kms:Decrypt",),
    "HeadObject": ("kms:Decrypt",),
}
# Secrets Manager acts for the caller: a new value needs a data key, a read decrypts one.
# Creating or updating a secret without a value touches no key.
_SECRETS_ACTIONS: Final[Mapping[str, tuple[str, ...]]] = {
    "CreateSecret": ("kms:GenerateDataKey",),
    "PutSecretValue": ("kms:GenerateDataKey",),
    "UpdateSecret": ("kms:GenerateDataKey",),
    "GetSecretValue": ("kms:Decrypt",),
}
_SNS_ACTIONS: Final[Mapping[str, tuple[str, ...]]] = {
    "Publish": ("kms:GenerateDataKey", "kms:Decrypt"),
    "PublishBatch": ("kms:GenerateDataKey", "kms:Decrypt"),
}
# CloudWatch Logs checks that it may use a group's key when the key is set (CreateLogGroup,
# AssociateKmsKey), and uses it for every write and read of the group's events.
_LOGS_ACTIONS: Final[Mapping[str, tuple[str, ...]]] = {
    "CreateLogGroup": ("kms:GenerateDataKey", "kms:Decrypt"),
    "AssociateKmsKey": ("kms:GenerateDataKey", "kms:Decrypt"),
    "PutLogEvents": ("kms:GenerateDataKey",),
    "GetLogEvents": ("kms:Decrypt",),
    "FilterLogEvents": ("kms:Decrypt",),
}
LOGS_PRINCIPAL: Final = f"logs.{REGION}.amazonaws.com"
# CloudWatch alarms publish to their SNS topics as this service principal.
ALARMS_PRINCIPAL: Final = "cloudwatch.amazonaws.com"


class KeyRefusal(Exception):
    """`caller` is an IAM principal's ARN, or a service principal (logs.<region>.amazonaws.com)."""

    def __init__(self, caller: str, action: str, key_arn: str) -> None:
        super().__init__(
            f"User: {caller} is not authorized to perform: {action} on resource: {key_arn}"
            f" because no identity-based policy or key policy allows the {action} action"
        )
        self.caller = caller
        self.action = action
        self.key_arn = key_arn


def dynamodb_needs(checks: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """(kms action, key ARN) for each (DynamoDB action, table ARN) a request was checked for."""
    from moto.dynamodb.models import dynamodb_backends  # noqa: PLC0415

    tables = dynamodb_backends[ACCOUNT_ID][REGION].tables
    needs = []
    for action, resource in checks:
        if action not in _DYNAMODB_ACTIONS or "table/" not in resource:
            continue
        table = tables.get(resource.split("table/", 1)[1].split("/", 1)[0])
        sse = getattr(table, "sse_specification", None) or {}
        key = _customer_key(sse.get("KMSMasterKeyId")) if sse.get("SSEType") == "KMS" else None
        if key:
            needs.append(("kms:Decrypt", key))
    return needs


def sqs_needs(action: str, queue_arn: str) -> list[tuple[str, str]]:
    from moto.sqs.models import sqs_backends  # noqa: PLC0415

    if action not in _SQS_ACTIONS or queue_arn == "*":
        return []
    queue = sqs_backends[ACCOUNT_ID][REGION].queues.get(queue_arn.rsplit(":", 1)[-1])
    key = _customer_key(getattr(queue, "kms_master_key_id", None))
    return [(kms_action, key) for kms_action in _SQS_ACTIONS[action]] if key else []


def s3_needs(action: str, bucket_name: str | None) -> list[tuple[str, str]]:
    from moto.s3.models import s3_backends  # noqa: PLC0415

    if action not in _S3_ACTIONS or not bucket_name:
        return []
    bucket = s3_backends[ACCOUNT_ID]["aws"].buckets.get(bucket_name)
    rule = (getattr(bucket, "encryption", None) or {}).get("Rule") or {}
    default = rule.get("ApplyServerSideEncryptionByDefault") or {}
    if default.get("SSEAlgorithm") != "aws:kms":
        return []
    key = _customer_key(default.get("KMSMasterKeyID"))
    return [(kms_action, key) for kms_action in _S3_ACTIONS[action]] if key else []


def secretsmanager_needs(action: str, request: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(kms action, key ARN) for one Secrets Manager request (its JSON body)."""
    from moto.secretsmanager.models import secretsmanager_backends  # noqa: PLC0415

    if action not in _SECRETS_ACTIONS:
        return []
    stores_value = (
        request.get("SecretString") is not None or request.get("SecretBinary") is not None
    )
    if action in {"CreateSecret", "UpdateSecret"} and not stores_value:
        return []
    key_id = request.get("KmsKeyId")
    # A new secret without KmsKeyId is under Secrets Manager's AWS-managed key.
    if not key_id and action != "CreateSecret":
        secret = secretsmanager_backends[ACCOUNT_ID][REGION].secrets.get(
            str(request.get("SecretId") or "")
        )
        key_id = getattr(secret, "kms_key_id", None)
    key = _customer_key(key_id)
    return [(kms_action, key) for kms_action in _SECRETS_ACTIONS[action]] if key else []


def sns_needs(action: str, topic_arn: str) -> list[tuple[str, str]]:
    from moto.sns.models import sns_backends  # noqa: PLC0415

    if action not in _SNS_ACTIONS:
        return []
    topic = sns_backends[ACCOUNT_ID][REGION].topics.get(topic_arn)
    key = _customer_key(getattr(topic, "kms_master_key_id", None))
    return [(kms_action, key) for kms_action in _SNS_ACTIONS[action]] if key else []


def authorize_alarm_publish(topic_arn: str, alarm_arn: str) -> None:
    """Raises KeyRefusal if the topic's key policy does not let CloudWatch alarms publish to
    it: on AWS the alarm's notification would be lost, silently."""
    service_authorize(
        ALARMS_PRINCIPAL,
        sns_needs("Publish", topic_arn),
        encryption_context={"aws:sns:topicArn": topic_arn},
        source={"aws:SourceAccount": ACCOUNT_ID, "aws:SourceArn": alarm_arn},
    )


def logs_needs(action: str, request: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(kms action, key ARN) CloudWatch Logs itself needs for one request (its JSON body)."""
    from moto.logs.models import logs_backends  # noqa: PLC0415

    if action not in _LOGS_ACTIONS:
        return []
    named_key = request.get("kmsKeyId")
    if action not in {"CreateLogGroup", "AssociateKmsKey"}:
        group = logs_backends[ACCOUNT_ID][REGION].groups.get(str(request.get("logGroupName") or ""))
        named_key = getattr(group, "kms_key_id", None)
    key = _customer_key(named_key)
    return [(kms_action, key) for kms_action in _LOGS_ACTIONS[action]] if key else []


def _customer_key(key_id: Any) -> str | None:
    """The ARN of a customer-managed key of the embedded AWS, else None."""
    from moto.kms.models import kms_backends  # noqa: PLC0415

    if not key_id:
        return None
    backend = kms_backends[ACCOUNT_ID][REGION]
    name = str(key_id)
    if name.startswith(("alias/aws/", f"arn:aws:kms:{REGION}:{ACCOUNT_ID}:alias/aws/")):
        return None
    key = backend.keys.get(name.rsplit("key/", 1)[-1])
    if key is None:
        # A store whose key is gone cannot be read on AWS either: the check will refuse.
        return name
    if any(alias.startswith("alias/aws/") for alias in key.aliases):
        return None
    return str(key.arn)


# ---------------------------------------------------------------------------- the decision


def authorize(
    access_key: Any,
    service: str,
    needs: list[tuple[str, str]],
    *,
    encryption_context: Mapping[str, str] | None = None,
) -> None:
    """Raises KeyRefusal for the first (kms action, key ARN) the caller may not use.

    `encryption_context` is what the service passes to KMS (e.g. SecretARN), for policies
    that test `kms:EncryptionContext:<key>`."""
    if not needs:
        return
    from moto.kms.models import kms_backends  # noqa: PLC0415

    caller = str(access_key.arn)
    principal = _principal_arn(caller)
    context = {
        "kms:viaservice": f"{service}.{REGION}.amazonaws.com",
        "kms:calleraccount": ACCOUNT_ID,
        "aws:principalarn": principal,
        **_encryption_context(encryption_context),
    }
    keys = kms_backends[ACCOUNT_ID][REGION].keys
    identity: list[Mapping[str, Any]] | None = None
    for action, key_arn in needs:
        key = keys.get(key_arn.rsplit("key/", 1)[-1])
        if key is None or not key.enabled:
            raise KeyRefusal(caller, action, key_arn)
        named, delegated = _key_policy_allows(
            _parsed(_policy_text(key.policy)), action, principal, context=context
        )
        if named:
            continue
        if delegated:
            if identity is None:
                identity = _statements(access_key.collect_policies())
            if _identity_allows(identity, action, key_arn, context=context):
                continue
        raise KeyRefusal(caller, action, key_arn)


def service_authorize(
    service_principal: str,
    needs: list[tuple[str, str]],
    *,
    encryption_context: Mapping[str, str] | None = None,
    source: Mapping[str, str] | None = None,
) -> None:
    """Raises KeyRefusal for the first (kms action, key ARN) a service principal (such as
    logs.<region>.amazonaws.com or cloudwatch.amazonaws.com) may not use on its own account.

    No IAM policy can grant a service principal anything: only a key policy statement that
    names it allows. `source` holds the aws:SourceArn / aws:SourceAccount a service sends."""
    if not needs:
        return
    from moto.kms.models import kms_backends  # noqa: PLC0415

    context = {
        "kms:calleraccount": ACCOUNT_ID,
        **{name.lower(): value for name, value in (source or {}).items()},
        **_encryption_context(encryption_context),
    }
    keys = kms_backends[ACCOUNT_ID][REGION].keys
    for action, key_arn in needs:
        key = keys.get(key_arn.rsplit("key/", 1)[-1])
        if key is None or not key.enabled:
            raise KeyRefusal(service_principal, action, key_arn)
        named, _ = _key_policy_allows(
            _parsed(_policy_text(key.policy)),
            action,
            service_principal,
            context=context,
            kind="Service",
        )
        if not named:
            raise KeyRefusal(service_principal, action, key_arn)


def _encryption_context(pairs: Mapping[str, str] | None) -> dict[str, str]:
    return {f"kms:encryptioncontext:{name}".lower(): value for name, value in (pairs or {}).items()}


def _principal_arn(caller: str) -> str:
    """An assumed role's session acts as its role: arn:aws:iam::<account>:role/<name>."""
    if ":assumed-role/" in caller:
        account = caller.split(":")[4]
        role_name = caller.split(":assumed-role/", 1)[1].split("/", maxsplit=1)[0]
        return f"arn:aws:iam::{account}:role/{role_name}"
    return caller


def _policy_text(policy: Any) -> str:
    return policy if isinstance(policy, str) else json.dumps(policy, sort_keys=True)


@lru_cache(maxsize=256)
def _parsed(text: str) -> tuple[Mapping[str, Any], ...]:
    statements = json.loads(text).get("Statement", [])
    return tuple(statements if isinstance(statements, list) else [statements])


def _statements(policies: Iterable[Any]) -> list[Mapping[str, Any]]:
    from moto.iam.access_control import IAMPolicy  # noqa: PLC0415

    found: list[Mapping[str, Any]] = []
    for policy in policies:
        document = IAMPolicy(policy)._policy_json
        statements = document.get("Statement", [])
        found.extend(statements if isinstance(statements, list) else [statements])
    return found


def _listed(value: Any) -> list[str]:
    return [str(item) for item in (value if isinstance(value, list) else [value])]


def _matches(patterns: Any, value: str) -> bool:
    return any(fnmatch.fnmatchcase(value, pattern) for pattern in _listed(patterns))


def _conditions_hold(statement: Mapping[str, Any], context: Mapping[str, str]) -> bool:
    """The operators and keys these policies use; an unknown one never holds."""
    for operator, tests in (statement.get("Condition") or {}).items():
        for key, expected in tests.items():
            actual = context.get(str(key).lower())
            if actual is None:
                return False
            if operator in {"StringEquals", "ArnEquals"}:
                held = actual in _listed(expected)
            elif operator in {"StringLike", "ArnLike"}:
                held = _matches(expected, actual)
            else:
                return False
            if not held:
                return False
    return True


def _key_policy_allows(
    statements: Iterable[Mapping[str, Any]],
    action: str,
    principal: str,
    *,
    context: Mapping[str, str],
    kind: str = "AWS",
) -> tuple[bool, bool]:
    """(the policy names the caller for the action, the policy delegates to IAM).

    `kind` is the Principal element's key the caller is named under: AWS, or Service."""
    root = f"arn:aws:iam::{ACCOUNT_ID}:root"
    named = delegated = False
    for statement in statements:
        aws = statement.get("Principal") or {}
        principals = _listed(aws if isinstance(aws, str) else aws.get(kind, []))
        if not _matches(statement.get("Action", []), action):
            continue
        if not _conditions_hold(statement, context):
            continue
        applies = "*" in principals or principal in principals
        if statement.get("Effect") == "Deny" and (applies or root in principals):
            return False, False
        if statement.get("Effect") == "Allow":
            named = named or applies
            delegated = delegated or root in principals or ACCOUNT_ID in principals
    return named, delegated


def _identity_allows(
    statements: Iterable[Mapping[str, Any]],
    action: str,
    key_arn: str,
    *,
    context: Mapping[str, str],
) -> bool:
    allowed = False
    for statement in statements:
        if not _matches(statement.get("Action", []), action):
            continue
        if not _matches(statement.get("Resource", []), key_arn):
            continue
        if not _conditions_hold(statement, context):
            continue
        if statement.get("Effect") == "Deny":
            return False
        allowed = True
    return allowed
