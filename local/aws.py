"""The embedded AWS: moto's server on a loopback port, with the template's resources in it.

Nothing here lists a table or queue by name: every AWS::DynamoDB::Table, AWS::SQS::Queue,
AWS::S3::Bucket and AWS::SecretsManager::Secret of the template is created from its
CloudFormation properties, so the template stays the single source of truth.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import socket
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import boto3
from botocore.exceptions import ClientError
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from moto.server import ThreadedMotoServer
from werkzeug.serving import make_server

from local import (
    iam_enforcement,
    key_enforcement,
    moto_dynamodb_items,
    moto_fair_queues,
    moto_keepalive,
    moto_kms_keys,
    moto_queries,
    moto_usage_plans,
    partition_capacity,
    stack_log,
)
from local.iam import OPERATOR_ACCESS_KEY_ID, OPERATOR_SECRET_ACCESS_KEY
from local.moto_s3 import store_put_bodies_verbatim
from local.moto_transactions import back_up_only_touched_items
from local.template import ACCOUNT_ID, REGION, Bucket, StackTemplate, Table, TemplateError

if TYPE_CHECKING:
    from mypy_boto3_apigateway.client import APIGatewayClient
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_s3.client import S3Client
    from mypy_boto3_secretsmanager.client import SecretsManagerClient
    from mypy_boto3_sqs.client import SQSClient
    from mypy_boto3_sqs.literals import QueueAttributeNameType

# The local operator's credentials (local.iam): full access, like an admin's on AWS.
OPERATOR_CREDENTIALS: Final = {
    "AWS_ACCESS_KEY_ID": OPERATOR_ACCESS_KEY_ID,
    "AWS_SECRET_ACCESS_KEY": OPERATOR_SECRET_ACCESS_KEY,
}


def local_aws_environment(endpoint_url: str) -> dict[str, str]:
    """Environment that points boto3 at the embedded AWS as the local operator."""
    return {
        "AWS_ENDPOINT_URL": endpoint_url,
        **OPERATOR_CREDENTIALS,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
        # A developer's ~/.aws profile must never leak into the local stack.
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true",
    }


class PortInUseError(Exception):
    def __init__(self, host: str, port: int, cause: OSError) -> None:
        super().__init__(f"{host}:{port} is already in use ({cause.strerror})")
        self.host = host
        self.port = port


class _MotoServer(ThreadedMotoServer):
    """ThreadedMotoServer that keeps connections alive and reports a failed bind instead of
    waiting forever for it.

    The parent class binds inside its thread, where werkzeug answers a taken port with
    sys.exit(1); the thread dies and start() would wait for a ready signal that never comes.
    """

    def __init__(self, host: str, port: int) -> None:
        super().__init__(ip_address=host, port=port, verbose=False)
        self.bind_error: OSError | None = None

    def _server_entry(self) -> None:
        try:
            # The parent's body, with a handler that keeps connections alive (moto_keepalive).
            self._server = make_server(
                self._ip_address,
                self._port,
                # GET /_psap/capacity: the partition capacity report (local.partition_capacity);
                # GET /_psap/connections: dropped and timed-out connections (local.stack_log).
                stack_log.serve_connections(
                    partition_capacity.serve_report(DomainDispatcherApplication(create_backend_app))
                ),
                True,
                request_handler=moto_keepalive.KeepAliveRequestHandler,
            )
            self._server_ready_event.set()
            self._server.serve_forever()
        except (OSError, SystemExit) as error:
            self.bind_error = (
                error if isinstance(error, OSError) else OSError(errno.EADDRINUSE, "bind failed")
            )
            self._server_ready_event.set()


def _ensure_free(host: str, port: int) -> None:
    """Fail with PortInUseError before werkzeug can print its own advice and exit."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # The same option the server sets, so a port in TIME_WAIT counts as free here too.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            raise PortInUseError(host, port, error) from error


_DYNAMODB_REQUESTS = threading.Lock()


def serialize_dynamodb_requests() -> None:
    """Makes moto's server answer DynamoDB requests one at a time.

    moto applies a transaction item by item and rolls a failed one back by restoring a copy
    of the whole table, so concurrent requests can see half a transaction or lose another
    request's committed write. DynamoDB's transactions are serializable; handling one request
    at a time gives answers of some serial order, which is what DynamoDB guarantees.
    """
    from moto.dynamodb.responses import DynamoHandler  # noqa: PLC0415 - moto loads lazily

    if getattr(DynamoHandler, "_psap_serialized", False):
        return
    handle = DynamoHandler.call_action

    def call_action(self: DynamoHandler) -> Any:
        with _DYNAMODB_REQUESTS, moto_queries.one_request_at_a_time():
            return handle(self)

    DynamoHandler.call_action = call_action  # type: ignore[method-assign]
    DynamoHandler._psap_serialized = True  # type: ignore[attr-defined]
    # One request at a time also lets transactions back up only what they touch.
    back_up_only_touched_items()


class EmbeddedAws:
    """moto's server on 127.0.0.1; port 0 picks a free port."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._host = host
        self._requested_port = port
        self._server: _MotoServer | None = None
        self.endpoint_url = ""

    def start(self) -> str:
        # werkzeug logs every request at INFO; the stack prints its own request lines.
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
        serialize_dynamodb_requests()
        iam_enforcement.install()
        store_put_bodies_verbatim()
        moto_keepalive.install()
        moto_kms_keys.install()
        moto_dynamodb_items.install()
        moto_queries.install()
        # After moto_queries: it wraps the Query that moto_queries installs.
        partition_capacity.install()
        moto_usage_plans.install()
        moto_fair_queues.install()
        if self._requested_port:
            _ensure_free(self._host, self._requested_port)
        server = _MotoServer(self._host, self._requested_port)
        server.start()
        if server.bind_error is not None:
            raise PortInUseError(self._host, self._requested_port, server.bind_error)
        self._server = server
        host, port = server.get_host_and_port()
        self.endpoint_url = f"http://{host}:{port}"
        return self.endpoint_url

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def __enter__(self) -> EmbeddedAws:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()


@dataclass(frozen=True)
class CreatedResources:
    tables: int
    queues: int
    buckets: int
    secrets: int
    # Usage plan logical id -> the id the embedded AWS gave it.
    usage_plans: dict[str, str] = field(default_factory=dict)
    log_groups: int = 0
    topics: int = 0

    def summary(self, template_name: str) -> str:
        parts = [f"{self.tables} tables", f"{self.queues} queues", f"{self.buckets} buckets"]
        if self.secrets:
            parts.append(f"{self.secrets} secrets")
        if self.log_groups:
            parts.append(f"{self.log_groups} log groups")
        if self.topics:
            parts.append(f"{self.topics} topic{'' if self.topics == 1 else 's'}")
        if self.usage_plans:
            parts.append(f"{len(self.usage_plans)} usage plans")
        return f"created {', '.join(parts)} from {template_name}"


def _client_options(endpoint_url: str) -> dict[str, Any]:
    return {
        "endpoint_url": endpoint_url,
        "region_name": REGION,
        "aws_access_key_id": OPERATOR_ACCESS_KEY_ID,
        "aws_secret_access_key": OPERATOR_SECRET_ACCESS_KEY,
    }


def dynamodb_client(endpoint_url: str) -> DynamoDBClient:
    return boto3.client("dynamodb", **_client_options(endpoint_url))


def sqs_client(endpoint_url: str) -> SQSClient:
    return boto3.client("sqs", **_client_options(endpoint_url))


def s3_client(endpoint_url: str) -> S3Client:
    return boto3.client("s3", **_client_options(endpoint_url))


def secrets_client(endpoint_url: str) -> SecretsManagerClient:
    return boto3.client("secretsmanager", **_client_options(endpoint_url))


def operator_client_options(endpoint_url: str) -> dict[str, Any]:
    """boto3 client options that act as the embedded AWS's operator (full access)."""
    return _client_options(endpoint_url)


def apigateway_client(endpoint_url: str) -> APIGatewayClient:
    return boto3.client("apigateway", **_client_options(endpoint_url))


def create_usage_plans(template: StackTemplate, endpoint_url: str) -> dict[str, str]:
    """The template's usage plans in the embedded AWS, whose API stages name the local API
    ids; the gateway reads them (and the operator's changes) from there."""
    client = apigateway_client(endpoint_url)
    created: dict[str, str] = {}
    for plan in template.usage_plans.values():
        stages: list[Any] = [
            {
                "apiId": template.apis[stage.api_id].api_id,
                "stage": stage.stage,
                "throttle": {
                    method: {"rateLimit": limits.rate, "burstLimit": limits.burst}
                    for method, limits in stage.method_throttles.items()
                },
            }
            for stage in plan.stages
        ]
        options: dict[str, Any] = {"name": plan.name, "apiStages": stages}
        if plan.throttle is not None:
            options["throttle"] = {
                "rateLimit": plan.throttle.rate,
                "burstLimit": plan.throttle.burst,
            }
        created[plan.logical_id] = client.create_usage_plan(**options)["id"]
    return created


def kms_client(endpoint_url: str | None) -> Any:
    # No KMS stubs among the dev dependencies: the client is untyped.
    return boto3.client("kms", **_client_options(endpoint_url))  # type: ignore[call-overload,arg-type]


def create_resources(template: StackTemplate, endpoint_url: str) -> CreatedResources:
    """Create every key, table, queue, bucket and secret of the template in the embedded AWS."""
    create_keys(template, endpoint_url)
    dynamodb = dynamodb_client(endpoint_url)
    for table in template.tables.values():
        _create_table(dynamodb, table)
    _create_queues(sqs_client(endpoint_url), template)
    s3 = s3_client(endpoint_url)
    for bucket in template.buckets.values():
        # us-east-1 is the one region where CreateBucket takes no LocationConstraint.
        create_bucket(s3, bucket)
        rules = bucket_encryption_rules(bucket)
        if rules:
            s3.put_bucket_encryption(
                Bucket=bucket.name, ServerSideEncryptionConfiguration={"Rules": rules}
            )
        policy = _without_tls_only(bucket.policy)
        if policy:
            s3.put_bucket_policy(Bucket=bucket.name, Policy=json.dumps(policy))
    secrets = secrets_client(endpoint_url)
    for secret in template.secrets.values():
        # A generated secret only needs to exist locally; its value is set by whoever uses it.
        value = secret.properties.get("SecretString", "{}")
        secrets.create_secret(Name=secret.name, SecretString=str(value))
    create_log_groups(template, endpoint_url)
    create_topics(template, endpoint_url)
    return CreatedResources(
        tables=len(template.tables),
        queues=len(template.queues),
        buckets=len(template.buckets),
        secrets=len(template.secrets),
        usage_plans=create_usage_plans(template, endpoint_url),
        log_groups=len(template.log_groups),
        topics=len(template.topics),
    )


def create_log_groups(template: StackTemplate, endpoint_url: str | None) -> None:
    """The template's log groups under their keys. The embedded AWS refuses a group whose
    key policy does not let CloudWatch Logs use the key for it, as AWS does: the stack
    stops at start rather than run with logs AWS would not take."""
    logs: Any = boto3.client("logs", **_client_options(endpoint_url))  # type: ignore[call-overload,arg-type]
    for group in template.log_groups.values():
        key = group.properties.get("KmsKeyId")
        try:
            logs.create_log_group(
                logGroupName=group.name, **({"kmsKeyId": str(key)} if key else {})
            )
        except ClientError as error:
            raise TemplateError(f"{group.logical_id}: {error}") from error
        if group.properties.get("RetentionInDays"):
            days = int(group.properties["RetentionInDays"])
            logs.put_retention_policy(logGroupName=group.name, retentionInDays=days)


def create_topics(template: StackTemplate, endpoint_url: str | None) -> None:
    """The template's SNS topics, each encrypted with its key (KmsMasterKeyId).

    An alarm publishes as cloudwatch.amazonaws.com, which only the topic key's policy can
    allow; on AWS a notification it refuses is lost without a word, so here the stack stops
    at start instead (TemplateError, naming the alarm, topic and key)."""
    sns: Any = boto3.client("sns", **_client_options(endpoint_url))  # type: ignore[call-overload,arg-type]
    for topic in template.topics.values():
        key = topic.properties.get("KmsMasterKeyId")
        sns.create_topic(Name=topic.name, Attributes={"KmsMasterKeyId": str(key)} if key else {})
        for alarm in topic.alarms:
            try:
                key_enforcement.authorize_alarm_publish(topic.arn, alarm_arn(alarm))
            except key_enforcement.KeyRefusal as refusal:
                raise TemplateError(
                    f"{alarm} publishes to {topic.logical_id}, whose key {refusal.key_arn}"
                    f" does not allow {refusal.caller} {refusal.action}"
                ) from refusal


def alarm_arn(name: str) -> str:
    return f"arn:aws:cloudwatch:{REGION}:{ACCOUNT_ID}:alarm:{name}"


def create_bucket(s3: Any, bucket: Bucket, *, versioned: bool = True) -> None:
    """The bucket, with its Object Lock (write-once; it versions the bucket itself) and,
    unless `versioned` is False, its versioning, as the template says."""
    locked = _true(bucket.properties.get("ObjectLockEnabled", False))
    s3.create_bucket(Bucket=bucket.name, ObjectLockEnabledForBucket=locked)
    lock = bucket.properties.get("ObjectLockConfiguration")
    if locked and lock:
        _put_object_lock(s3, bucket.name, lock)
    versioning = bucket.properties.get("VersioningConfiguration")
    if versioning and versioned:
        s3.put_bucket_versioning(
            Bucket=bucket.name, VersioningConfiguration={"Status": versioning["Status"]}
        )


def _put_object_lock(s3: Any, name: str, lock: Mapping[str, Any]) -> None:
    """The bucket's default retention (the audit archive's write-once rule), as CloudFormation
    spells it; retention periods are whole numbers in the API."""
    retention = dict((lock.get("Rule") or {}).get("DefaultRetention") or {})
    for period in ("Days", "Years"):
        if period in retention:
            retention[period] = int(retention[period])
    configuration: dict[str, Any] = {"ObjectLockEnabled": "Enabled"}
    if retention:
        configuration["Rule"] = {"DefaultRetention": retention}
    s3.put_object_lock_configuration(Bucket=name, ObjectLockConfiguration=configuration)


def bucket_encryption_rules(bucket: Bucket) -> list[Any]:
    """PutBucketEncryption's rules from AWS::S3::Bucket's BucketEncryption (CloudFormation
    spells the default `ServerSideEncryptionByDefault`, the API `Apply...`)."""
    encryption = bucket.properties.get("BucketEncryption") or {}
    return [
        {
            "ApplyServerSideEncryptionByDefault": rule.get("ServerSideEncryptionByDefault", {}),
            "BucketKeyEnabled": _true(rule.get("BucketKeyEnabled", False)),
        }
        for rule in encryption.get("ServerSideEncryptionConfiguration") or []
    ]


def create_keys(template: StackTemplate, endpoint_url: str | None) -> None:
    """Every AWS::KMS::Key of the template, with its key policy, under its fixed id.

    KMS picks a random id for a new key; the template's `!GetAtt Key.Arn` was resolved to
    an id fixed by the stack and logical id (local.template), so the key moves there.
    """
    from moto.kms.models import kms_backends  # noqa: PLC0415 - the embedded AWS is in-process

    moto_kms_keys.install()
    kms = kms_client(endpoint_url)
    backend = kms_backends[ACCOUNT_ID][REGION]
    for key in template.keys.values():
        properties = key.properties
        created = kms.create_key(
            Policy=json.dumps(properties["KeyPolicy"]),
            Description=str(properties.get("Description", key.logical_id)),
            # An asymmetric signing key (the audit seals) keeps its spec and usage.
            KeySpec=str(properties.get("KeySpec", "SYMMETRIC_DEFAULT")),
            KeyUsage=str(properties.get("KeyUsage", "ENCRYPT_DECRYPT")),
        )["KeyMetadata"]["KeyId"]
        moved = backend.keys.pop(created)
        moved.id, moved.arn = key.key_id, key.arn
        backend.keys[key.key_id] = moved
        if _true(properties.get("EnableKeyRotation")):
            kms.enable_key_rotation(KeyId=key.key_id)


def _without_tls_only(policy: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The bucket policy less its TLS-only statements (a Deny when aws:SecureTransport is
    false): moto's S3 evaluates bucket policies, and the embedded AWS is plain HTTP on
    loopback, so those would refuse every request. Anything else the policy says applies."""
    if not policy:
        return None
    statements = policy.get("Statement") or []
    kept = [
        statement
        for statement in (statements if isinstance(statements, list) else [statements])
        if "aws:SecureTransport" not in json.dumps(statement.get("Condition") or {})
    ]
    return {**policy, "Statement": kept} if kept else None


def table_definition(table: Table) -> dict[str, Any]:
    """CreateTable arguments from AWS::DynamoDB::Table properties.

    CloudFormation and the DynamoDB API spell a few things differently (SSE, streams);
    properties CreateTable has no use for (PITR, TTL, tags) are applied separately or dropped.
    """
    properties = table.properties
    billing_mode = str(properties.get("BillingMode", "PROVISIONED"))
    definition: dict[str, Any] = {
        "TableName": table.name,
        "AttributeDefinitions": properties["AttributeDefinitions"],
        "KeySchema": properties["KeySchema"],
        "BillingMode": billing_mode,
    }
    throughput = properties.get("ProvisionedThroughput")
    if billing_mode == "PROVISIONED":
        definition["ProvisionedThroughput"] = _throughput(throughput)
    global_indexes = properties.get("GlobalSecondaryIndexes")
    if global_indexes:
        definition["GlobalSecondaryIndexes"] = [
            _index(index, provisioned=billing_mode == "PROVISIONED") for index in global_indexes
        ]
    local_indexes = properties.get("LocalSecondaryIndexes")
    if local_indexes:
        definition["LocalSecondaryIndexes"] = [
            _index(index, provisioned=False) for index in local_indexes
        ]
    stream = properties.get("StreamSpecification")
    if stream:
        definition["StreamSpecification"] = {
            "StreamEnabled": True,
            "StreamViewType": stream["StreamViewType"],
        }
    sse = properties.get("SSESpecification")
    if sse and _true(sse.get("SSEEnabled")) and sse.get("SSEType") == "KMS":
        definition["SSESpecification"] = {"Enabled": True, "SSEType": "KMS"}
        if sse.get("KMSMasterKeyId"):
            definition["SSESpecification"]["KMSMasterKeyId"] = str(sse["KMSMasterKeyId"])
    if _true(properties.get("DeletionProtectionEnabled")):
        definition["DeletionProtectionEnabled"] = True
    return definition


def _true(value: Any) -> bool:
    return str(value).lower() == "true"


def _throughput(throughput: Mapping[str, Any] | None) -> dict[str, int]:
    # A PROVISIONED table without figures is a template error in AWS; locally 5/5 is harmless.
    throughput = throughput or {}
    return {
        "ReadCapacityUnits": int(throughput.get("ReadCapacityUnits", 5)),
        "WriteCapacityUnits": int(throughput.get("WriteCapacityUnits", 5)),
    }


def _index(index: Mapping[str, Any], *, provisioned: bool) -> dict[str, Any]:
    definition: dict[str, Any] = {
        "IndexName": index["IndexName"],
        "KeySchema": index["KeySchema"],
        "Projection": index["Projection"],
    }
    if provisioned:
        definition["ProvisionedThroughput"] = _throughput(index.get("ProvisionedThroughput"))
    return definition


def _create_table(dynamodb: DynamoDBClient, table: Table) -> None:
    dynamodb.create_table(**table_definition(table))
    ttl = table.properties.get("TimeToLiveSpecification")
    if ttl and _true(ttl.get("Enabled")):
        dynamodb.update_time_to_live(
            TableName=table.name,
            TimeToLiveSpecification={"AttributeName": ttl["AttributeName"], "Enabled": True},
        )


_QUEUE_ATTRIBUTES: Final[tuple[QueueAttributeNameType, ...]] = (
    "DelaySeconds",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "ReceiveMessageWaitTimeSeconds",
    "VisibilityTimeout",
    "FifoQueue",
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
    "KmsMasterKeyId",
    "SqsManagedSseEnabled",
)


def _attribute_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _create_queues(sqs: SQSClient, template: StackTemplate) -> None:
    # All queues first, redrive policies second: a policy may only name an existing DLQ.
    for queue in template.queues.values():
        attributes: dict[QueueAttributeNameType, str] = {
            name: _attribute_string(queue.properties[name])
            for name in _QUEUE_ATTRIBUTES
            if name in queue.properties
        }
        sqs.create_queue(QueueName=queue.name, Attributes=attributes)
    for queue in template.queues.values():
        if queue.redrive is not None:
            policy = {
                "deadLetterTargetArn": queue.redrive.dead_letter_target_arn,
                "maxReceiveCount": queue.redrive.max_receive_count,
            }
            sqs.set_queue_attributes(
                QueueUrl=queue.url, Attributes={"RedrivePolicy": json.dumps(policy)}
            )
