"""template.yaml as a typed model of what the local stack emulates.

The template is the single source of truth: functions, API routes, authorizers, gateway
responses, tables, queues and buckets are all read from it, so adding a resource to the
template is all it takes for the local stack to run it. Intrinsic functions are resolved
against a local naming scheme (`{stack_name}-{LogicalId}`), the way CloudFormation would
resolve them against the deployed stack.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

REPO_ROOT: Final = Path(__file__).resolve().parent.parent
DEFAULT_TEMPLATE: Final = REPO_ROOT / "template.yaml"
DEFAULT_STACK_NAME: Final = "psap-local"
ACCOUNT_ID: Final = "123456789012"
REGION: Final = "us-east-1"
URL_SUFFIX: Final = "amazonaws.com"
# Queue URLs name the endpoint that serves them; without a local endpoint use AWS's own form.
DEFAULT_SQS_ENDPOINT: Final = f"https://sqs.{REGION}.{URL_SUFFIX}"
# SAM names the API it creates for Api events that do not name a RestApiId.
IMPLICIT_API_ID: Final = "ServerlessRestApi"

TABLE_TYPES: Final = frozenset({"AWS::DynamoDB::Table", "AWS::Serverless::SimpleTable"})
QUEUE_TYPE: Final = "AWS::SQS::Queue"
BUCKET_TYPE: Final = "AWS::S3::Bucket"
SECRETSMANAGER_TYPE: Final = "AWS::SecretsManager::Secret"
KEY_TYPE: Final = "AWS::KMS::Key"
LOG_GROUP_TYPE: Final = "AWS::Logs::LogGroup"
TOPIC_TYPE: Final = "AWS::SNS::Topic"
ALARM_TYPE: Final = "AWS::CloudWatch::Alarm"
ROLE_TYPE: Final = "AWS::IAM::Role"
FUNCTION_TYPES: Final = frozenset({"AWS::Serverless::Function", "AWS::Lambda::Function"})
API_TYPE: Final = "AWS::Serverless::Api"
USAGE_PLAN_TYPE: Final = "AWS::ApiGateway::UsagePlan"
# The bounds Lambda puts on an SQS event source's ScalingConfig.MaximumConcurrency.
MINIMUM_SQS_MAXIMUM_CONCURRENCY: Final = 2
MAXIMUM_SQS_MAXIMUM_CONCURRENCY: Final = 1000
LAYER_TYPES: Final = frozenset({"AWS::Serverless::LayerVersion", "AWS::Lambda::LayerVersion"})


class TemplateError(Exception):
    """The template uses something the local stack cannot emulate, or is inconsistent."""


# ---------------------------------------------------------------------------- YAML loading


class _CfnLoader(yaml.SafeLoader):
    """SafeLoader that turns CloudFormation short tags (!Ref, !GetAtt...) into their long form."""


def _construct_intrinsic(loader: _CfnLoader, tag_suffix: str, node: yaml.Node) -> Any:
    value: Any
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    if tag_suffix == "Ref":
        return {"Ref": value}
    if tag_suffix == "Condition":
        return {"Condition": value}
    if tag_suffix == "GetAtt" and isinstance(value, str):
        # "!GetAtt Queue.Arn" is the short form of ["Queue", "Arn"]; attributes may hold dots.
        logical_id, _, attribute = value.partition(".")
        return {"Fn::GetAtt": [logical_id, attribute]}
    return {f"Fn::{tag_suffix}": value}


_CfnLoader.add_multi_constructor("!", _construct_intrinsic)


def load_yaml(path: Path) -> dict[str, Any]:
    """Parse a CloudFormation/SAM template with short tags into plain dicts."""
    with path.open(encoding="utf-8") as stream:
        document = yaml.load(stream, Loader=_CfnLoader)  # noqa: S506 - a SafeLoader subclass
    if not isinstance(document, dict):
        raise TemplateError(f"{path} is not a template (top level is not a mapping)")
    return document


# ---------------------------------------------------------------------------- the model


@dataclass(frozen=True)
class ApiEvent:
    """One `Type: Api` event: a method on a path of a REST API, served by one function."""

    name: str
    api_id: str
    path: str
    method: str
    # The authorizer that guards the route after defaults and per-route overrides; None = open.
    authorizer: str | None
    # Auth.ApiKeyRequired after the API's default: the request needs a usage plan's API key.
    api_key_required: bool = False


@dataclass(frozen=True)
class SqsEvent:
    """One `Type: SQS` event source mapping."""

    name: str
    queue_id: str
    batch_size: int
    function_response_types: tuple[str, ...]
    maximum_batching_window: int
    enabled: bool
    # ScalingConfig.MaximumConcurrency: the most batches this mapping runs at once (2-1000).
    maximum_concurrency: int | None = None

    @property
    def reports_batch_item_failures(self) -> bool:
        return "ReportBatchItemFailures" in self.function_response_types


@dataclass(frozen=True)
class LogSubscription:
    """One `Type: CloudWatchLogs` event: lines of a log group that match a filter pattern."""

    name: str
    log_group: str
    filter_pattern: str


@dataclass(frozen=True)
class Function:
    logical_id: str
    name: str
    code_dir: Path
    handler: str
    runtime: str
    timeout: int
    memory_size: int
    environment: Mapping[str, str]
    layers: tuple[str, ...]
    api_events: tuple[ApiEvent, ...]
    sqs_events: tuple[SqsEvent, ...]
    # Where its log lines go (LoggingConfig.LogGroup, else Lambda's /aws/lambda/{name}).
    log_group: str = ""
    log_subscriptions: tuple[LogSubscription, ...] = ()
    # Event types the local stack does not drive (Schedule, DynamoDB streams...), by event name.
    ignored_events: Mapping[str, str] = field(default_factory=dict)
    # ReservedConcurrentExecutions: None shares the account's unreserved concurrency.
    reserved_concurrency: int | None = None

    @property
    def arn(self) -> str:
        return function_arn(self.name)


@dataclass(frozen=True)
class Authorizer:
    name: str
    function_id: str
    payload_type: str
    identity_headers: tuple[str, ...]
    identity_query_strings: tuple[str, ...]
    reauthorize_every: int
    # Identity.Context: $context variables that are part of the cache key (httpMethod...).
    identity_context: tuple[str, ...] = ()


@dataclass(frozen=True)
class GatewayResponse:
    status_code: int | None
    templates: Mapping[str, str]
    # Header name -> value as written in the template ("'static'" or a mapping expression).
    headers: Mapping[str, str]


@dataclass(frozen=True)
class RestApi:
    logical_id: str
    api_id: str
    stage_name: str
    default_authorizer: str | None
    authorizers: Mapping[str, Authorizer]
    gateway_responses: Mapping[str, GatewayResponse]
    binary_media_types: tuple[str, ...]
    # Where API keys come from: HEADER (x-api-key) or AUTHORIZER (its usageIdentifierKey).
    api_key_source: str = "HEADER"
    # The stage's default method throttling (MethodSettings on /*/*): a bucket per method.
    method_throttle: Throttle | None = None


@dataclass(frozen=True)
class Throttle:
    """A token bucket of API Gateway: `rate` requests per second, `burst` at most at once."""

    rate: float
    burst: int


@dataclass(frozen=True)
class UsagePlanStage:
    api_id: str  # the API's logical id
    stage: str
    # "resourcePath/METHOD" -> the bucket of each key for that method (ApiStages[].Throttle).
    method_throttles: Mapping[str, Throttle]


@dataclass(frozen=True)
class UsagePlan:
    """An AWS::ApiGateway::UsagePlan of the template."""

    logical_id: str
    name: str
    stages: tuple[UsagePlanStage, ...]
    throttle: Throttle | None


@dataclass(frozen=True)
class Table:
    logical_id: str
    name: str
    arn: str
    # CloudFormation properties of AWS::DynamoDB::Table, intrinsics resolved.
    properties: Mapping[str, Any]


@dataclass(frozen=True)
class Redrive:
    dead_letter_target_arn: str
    dead_letter_queue_id: str | None
    max_receive_count: int


@dataclass(frozen=True)
class Queue:
    logical_id: str
    name: str
    url: str
    arn: str
    visibility_timeout: int
    message_retention_period: int
    fifo: bool
    redrive: Redrive | None
    properties: Mapping[str, Any]


@dataclass(frozen=True)
class Bucket:
    logical_id: str
    name: str
    arn: str
    properties: Mapping[str, Any]
    # The PolicyDocument of the AWS::S3::BucketPolicy that names this bucket, resolved.
    policy: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Secret:
    logical_id: str
    name: str
    properties: Mapping[str, Any]


@dataclass(frozen=True)
class Key:
    """A customer-managed KMS key. Its id is fixed by the stack and logical id, so `!Ref` and
    `!GetAtt .Arn` resolve before the embedded AWS has created it."""

    logical_id: str
    key_id: str
    arn: str
    # CloudFormation properties of AWS::KMS::Key (the key policy among them), resolved.
    properties: Mapping[str, Any]


@dataclass(frozen=True)
class LogGroup:
    """An AWS::Logs::LogGroup (the functions' LoggingConfig.LogGroup among them)."""

    logical_id: str
    name: str
    arn: str
    # CloudFormation properties (KmsKeyId, RetentionInDays), resolved.
    properties: Mapping[str, Any]


@dataclass(frozen=True)
class Topic:
    logical_id: str
    name: str
    arn: str
    # CloudFormation properties (KmsMasterKeyId), resolved.
    properties: Mapping[str, Any]
    # The alarms whose actions publish to it: CloudWatch does, as cloudwatch.amazonaws.com.
    alarms: tuple[str, ...] = ()


@dataclass(frozen=True)
class StackTemplate:
    path: Path
    stack_name: str
    parameters: Mapping[str, Any]
    # Globals.Function.Environment.Variables, resolved: what every function sees.
    globals_environment: Mapping[str, str]
    functions: Mapping[str, Function]
    apis: Mapping[str, RestApi]
    tables: Mapping[str, Table]
    queues: Mapping[str, Queue]
    buckets: Mapping[str, Bucket]
    secrets: Mapping[str, Secret]
    usage_plans: Mapping[str, UsagePlan] = field(default_factory=dict)
    keys: Mapping[str, Key] = field(default_factory=dict)
    log_groups: Mapping[str, LogGroup] = field(default_factory=dict)
    topics: Mapping[str, Topic] = field(default_factory=dict)

    def api_events(self) -> Iterator[tuple[Function, ApiEvent]]:
        for function in self.functions.values():
            for event in function.api_events:
                yield function, event

    def sqs_events(self) -> Iterator[tuple[Function, SqsEvent]]:
        for function in self.functions.values():
            for event in function.sqs_events:
                yield function, event

    def physical_resources(self) -> dict[str, str]:
        """Logical id -> the name (or URL, for queues) a client uses to reach the resource."""
        resources: dict[str, str] = {}
        resources.update({table.logical_id: table.name for table in self.tables.values()})
        resources.update({queue.logical_id: queue.url for queue in self.queues.values()})
        resources.update({bucket.logical_id: bucket.name for bucket in self.buckets.values()})
        resources.update({secret.logical_id: secret.name for secret in self.secrets.values()})
        resources.update({key.logical_id: key.key_id for key in self.keys.values()})
        return resources


def function_arn(name: str) -> str:
    return f"arn:aws:lambda:{REGION}:{ACCOUNT_ID}:function:{name}"


def queue_arn(name: str) -> str:
    return f"arn:aws:sqs:{REGION}:{ACCOUNT_ID}:{name}"


def table_arn(name: str) -> str:
    return f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/{name}"


def log_group_arn(name: str) -> str:
    return f"arn:aws:logs:{REGION}:{ACCOUNT_ID}:log-group:{name}"


def topic_arn(name: str) -> str:
    return f"arn:aws:sns:{REGION}:{ACCOUNT_ID}:{name}"


def key_arn(key_id: str) -> str:
    return f"arn:aws:kms:{REGION}:{ACCOUNT_ID}:key/{key_id}"


def role_arn(name: str) -> str:
    return f"arn:aws:iam::{ACCOUNT_ID}:role/{name}"


def local_api_id(logical_id: str) -> str:
    """A stable 10-character id in API Gateway's shape, so methodArns look like real ones."""
    return hashlib.sha256(logical_id.encode()).hexdigest()[:10]


# ---------------------------------------------------------------------------- intrinsics


class _NoValue:
    """AWS::NoValue: the property or list item it stands for is removed."""


NO_VALUE: Final = _NoValue()
_INTRINSIC_KEYS: Final = frozenset(
    {
        "Ref",
        "Condition",
        "Fn::GetAtt",
        "Fn::Sub",
        "Fn::Join",
        "Fn::Select",
        "Fn::Split",
        "Fn::If",
        "Fn::Equals",
        "Fn::Not",
        "Fn::And",
        "Fn::Or",
        "Fn::FindInMap",
        "Fn::Base64",
        "Fn::GetAZs",
        "Fn::ImportValue",
        "Fn::Cidr",
        "Fn::Length",
        "Fn::ToJsonString",
    }
)
_SUB_VARIABLE: Final = re.compile(r"\$\{([^}]*)\}")


def is_intrinsic(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _INTRINSIC_KEYS


def _check_parameter_constraints(name: str, definition: Mapping[str, Any], value: Any) -> None:
    """CloudFormation's own checks of a parameter value, with its messages: what stops
    `sam deploy` (a zero or absurd concurrency, for one) stops the local stack too."""
    if definition.get("Type") == "Number":
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise TemplateError(f"Parameter '{name}' must be a number") from None
        if "MinValue" in definition and number < float(definition["MinValue"]):
            raise TemplateError(
                f"Parameter '{name}' must be a number not less than {definition['MinValue']}"
            )
        if "MaxValue" in definition and number > float(definition["MaxValue"]):
            raise TemplateError(
                f"Parameter '{name}' must be a number not greater than {definition['MaxValue']}"
            )
    allowed = definition.get("AllowedValues")
    if allowed is not None and str(value) not in {str(item) for item in allowed}:
        raise TemplateError(f"Parameter '{name}' must be one of AllowedValues")


class Resolver:
    """Resolves intrinsic functions against the local naming scheme.

    Physical names follow `{stack_name}-{LogicalId}` unless the template names the resource
    itself (TableName, QueueName, BucketName...), as CloudFormation would.
    """

    def __init__(
        self,
        document: Mapping[str, Any],
        *,
        stack_name: str,
        sqs_endpoint: str,
        parameter_overrides: Mapping[str, str],
    ) -> None:
        self._resources: Mapping[str, Any] = document.get("Resources") or {}
        self._parameters: Mapping[str, Any] = document.get("Parameters") or {}
        self._conditions: Mapping[str, Any] = document.get("Conditions") or {}
        self._mappings: Mapping[str, Any] = document.get("Mappings") or {}
        self._stack_name = stack_name
        self._sqs_endpoint = sqs_endpoint.rstrip("/")
        self._overrides = parameter_overrides
        self._condition_values: dict[str, bool] = {}
        self._in_progress: set[str] = set()
        # CloudFormation checks every parameter's value before it creates anything.
        self.parameter_values()
        self._handlers: dict[str, Callable[[Any], Any]] = {
            "Ref": self._ref,
            "Condition": lambda name: self.condition(str(name)),
            "Fn::GetAtt": self._get_att,
            "Fn::Sub": self._sub,
            "Fn::Join": self._join,
            "Fn::Select": self._select,
            "Fn::Split": self._split,
            "Fn::If": self._if,
            "Fn::Equals": self._equals,
            "Fn::Not": lambda args: not self._truth(self._list(args, 1)[0]),
            "Fn::And": lambda args: all(self._truth(arg) for arg in self._list(args)),
            "Fn::Or": lambda args: any(self._truth(arg) for arg in self._list(args)),
            "Fn::FindInMap": self._find_in_map,
            "Fn::Base64": lambda arg: base64.b64encode(str(self.resolve(arg)).encode()).decode(),
            "Fn::GetAZs": lambda _arg: [f"{REGION}{zone}" for zone in "abc"],
            "Fn::Length": lambda arg: len(self._list(arg)),
            "Fn::ToJsonString": lambda arg: json.dumps(self.resolve(arg), separators=(",", ":")),
        }

    @property
    def stack_name(self) -> str:
        return self._stack_name

    # -- public

    def resolve(self, value: Any) -> Any:
        if isinstance(value, dict):
            if is_intrinsic(value):
                key, argument = next(iter(value.items()))
                handler = self._handlers.get(key)
                if handler is None:
                    raise TemplateError(f"{key} cannot be resolved locally")
                return handler(argument)
            resolved = {key: self.resolve(item) for key, item in value.items()}
            return {key: item for key, item in resolved.items() if item is not NO_VALUE}
        if isinstance(value, list):
            items = [self.resolve(item) for item in value]
            return [item for item in items if item is not NO_VALUE]
        return value

    def condition(self, name: str) -> bool:
        if name not in self._condition_values:
            if name not in self._conditions:
                raise TemplateError(f"unknown condition {name!r}")
            self._condition_values[name] = self._truth(self._conditions[name])
        return self._condition_values[name]

    def resource_type(self, logical_id: str) -> str:
        resource = self._resources.get(logical_id)
        if not isinstance(resource, dict):
            if self._generated_role(logical_id):
                return ROLE_TYPE
            raise TemplateError(f"unknown resource {logical_id!r}")
        return str(resource.get("Type", ""))

    def _generated_role(self, logical_id: str) -> bool:
        """`<Function>Role`: the execution role SAM generates for a function without one."""
        function = self._resources.get(logical_id.removesuffix("Role"))
        return (
            logical_id.endswith("Role")
            and isinstance(function, dict)
            and function.get("Type") == "AWS::Serverless::Function"
            and "Role" not in (function.get("Properties") or {})
        )

    def properties(self, logical_id: str) -> dict[str, Any]:
        resource = self._resources[logical_id]
        properties = resource.get("Properties") or {}
        return dict(properties)

    def parameter_values(self) -> dict[str, Any]:
        """Every parameter that has a value: an override or a Default."""
        return {
            name: self.parameter(name)
            for name, definition in self._parameters.items()
            if name in self._overrides or "Default" in (definition or {})
        }

    def parameter(self, name: str) -> Any:
        definition = self._parameters[name] or {}
        if name in self._overrides:
            value: Any = self._overrides[name]
        elif "Default" in definition:
            value = definition["Default"]
        else:
            raise TemplateError(f"parameter {name!r} has no Default and no override")
        kind = str(definition.get("Type", "String"))
        _check_parameter_constraints(name, definition, value)
        if kind == "CommaDelimitedList" or kind.startswith("List<"):
            return (
                [item.strip() for item in str(value).split(",")]
                if isinstance(value, str)
                else value
            )
        return str(value) if isinstance(value, int | float) else value

    def physical_name(self, logical_id: str) -> str:
        kind = self.resource_type(logical_id)
        name_property = {
            "AWS::DynamoDB::Table": "TableName",
            "AWS::SQS::Queue": "QueueName",
            "AWS::S3::Bucket": "BucketName",
            "AWS::SecretsManager::Secret": "Name",
            "AWS::Serverless::Function": "FunctionName",
            "AWS::Lambda::Function": "FunctionName",
            "AWS::Serverless::SimpleTable": "TableName",
            "AWS::Serverless::LayerVersion": "LayerName",
            "AWS::Logs::LogGroup": "LogGroupName",
            "AWS::SNS::Topic": "TopicName",
        }.get(kind)
        if kind == KEY_TYPE:
            # A key id is a UUID; this one is fixed by the stack and the logical id.
            return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self._stack_name}/{logical_id}"))
        if kind == ROLE_TYPE:
            # As local.iam names the roles it creates.
            return f"{self._stack_name}-{logical_id}"[:64]
        properties = (self._resources.get(logical_id) or {}).get("Properties") or {}
        if name_property and name_property in properties:
            return str(self._guarded(logical_id, lambda: self.resolve(properties[name_property])))
        name = f"{self._stack_name}-{logical_id}"
        if kind == BUCKET_TYPE:
            # S3 bucket names are lower case; CloudFormation lowercases generated ones too.
            return name.lower()
        if kind == QUEUE_TYPE and self._truth(properties.get("FifoQueue", False)):
            return f"{name}.fifo"
        return name

    def queue_url(self, logical_id: str) -> str:
        return f"{self._sqs_endpoint}/{ACCOUNT_ID}/{self.physical_name(logical_id)}"

    # -- helpers

    def _guarded(self, key: str, produce: Callable[[], Any]) -> Any:
        if key in self._in_progress:
            raise TemplateError(f"circular reference through {key!r}")
        self._in_progress.add(key)
        try:
            return produce()
        finally:
            self._in_progress.discard(key)

    def _truth(self, value: Any) -> bool:
        resolved = self.resolve(value)
        if isinstance(resolved, str):
            return resolved.lower() == "true"
        return bool(resolved)

    def _list(self, value: Any, length: int | None = None) -> list[Any]:
        resolved = self.resolve(value) if is_intrinsic(value) else value
        if not isinstance(resolved, list) or (length is not None and len(resolved) != length):
            raise TemplateError(f"expected a list of {length or 'n'} items, got {value!r}")
        return resolved

    # -- intrinsic functions

    def _ref(self, name: Any) -> Any:
        name = str(name)
        pseudo = {
            "AWS::Region": REGION,
            "AWS::AccountId": ACCOUNT_ID,
            "AWS::StackName": self._stack_name,
            "AWS::StackId": (
                f"arn:aws:cloudformation:{REGION}:{ACCOUNT_ID}:stack/{self._stack_name}/local"
            ),
            "AWS::URLSuffix": URL_SUFFIX,
            "AWS::Partition": "aws",
            "AWS::NotificationARNs": [],
            "AWS::NoValue": NO_VALUE,
        }
        if name in pseudo:
            return pseudo[name]
        if name in self._parameters:
            return self.parameter(name)
        kind = self.resource_type(name)
        if kind == QUEUE_TYPE:
            return self.queue_url(name)
        if kind == API_TYPE:
            return local_api_id(name)
        if kind == TOPIC_TYPE:
            return topic_arn(self.physical_name(name))
        if kind in LAYER_TYPES:
            return f"arn:aws:lambda:{REGION}:{ACCOUNT_ID}:layer:{self.physical_name(name)}:1"
        return self.physical_name(name)

    def _get_att(self, argument: Any) -> Any:
        parts = self._list(argument, 2)
        logical_id, attribute = str(parts[0]), str(self.resolve(parts[1]))
        kind = self.resource_type(logical_id)
        name = self.physical_name(logical_id)
        attributes: dict[str, str] = {}
        if kind == QUEUE_TYPE:
            attributes = {"Arn": queue_arn(name), "QueueName": name}
            attributes["QueueUrl"] = self.queue_url(logical_id)
        elif kind in TABLE_TYPES:
            # The real stream label is a timestamp chosen at creation; a fixed one keeps
            # resolution independent of the embedded AWS.
            attributes = {"Arn": table_arn(name), "StreamArn": f"{table_arn(name)}/stream/local"}
        elif kind == BUCKET_TYPE:
            attributes = {
                "Arn": f"arn:aws:s3:::{name}",
                "DomainName": f"{name}.s3.{URL_SUFFIX}",
                "RegionalDomainName": f"{name}.s3.{REGION}.{URL_SUFFIX}",
            }
        elif kind in FUNCTION_TYPES:
            attributes = {"Arn": function_arn(name)}
        elif kind == API_TYPE:
            attributes = {"RootResourceId": local_api_id(f"{logical_id}/")}
        elif kind == SECRETSMANAGER_TYPE:
            attributes = {"Id": name}
        elif kind == KEY_TYPE:
            attributes = {"Arn": key_arn(name), "KeyId": name}
        elif kind == LOG_GROUP_TYPE:
            attributes = {"Arn": f"{log_group_arn(name)}:*"}
        elif kind == TOPIC_TYPE:
            attributes = {"TopicArn": topic_arn(name), "TopicName": name}
        elif kind == ROLE_TYPE:
            attributes = {"Arn": role_arn(name), "RoleId": name}
        if attribute not in attributes:
            raise TemplateError(f"!GetAtt {logical_id}.{attribute} cannot be resolved locally")
        return attributes[attribute]

    def _sub(self, argument: Any) -> str:
        if isinstance(argument, list):
            template, variables = str(argument[0]), dict(argument[1]) if len(argument) > 1 else {}
        else:
            template, variables = str(argument), {}
        resolved_variables = {key: self.resolve(value) for key, value in variables.items()}

        def substitute(match: re.Match[str]) -> str:
            expression = match.group(1)
            if expression.startswith("!"):
                return "${" + expression[1:] + "}"
            if expression in resolved_variables:
                value = resolved_variables[expression]
            elif "." in expression and not expression.startswith("AWS::"):
                logical_id, _, attribute = expression.partition(".")
                value = self._get_att([logical_id, attribute])
            else:
                value = self._ref(expression)
            if not isinstance(value, str | int | float):
                raise TemplateError(f"${{{expression}}} in !Sub does not resolve to a string")
            return str(value)

        return _SUB_VARIABLE.sub(substitute, template)

    def _join(self, argument: Any) -> str:
        delimiter, items = self._list(argument, 2)
        return str(delimiter).join(str(item) for item in self._list(self.resolve(items)))

    def _select(self, argument: Any) -> Any:
        index, items = self._list(argument, 2)
        return self._list(self.resolve(items))[int(self.resolve(index))]

    def _split(self, argument: Any) -> list[str]:
        delimiter, source = self._list(argument, 2)
        return str(self.resolve(source)).split(str(delimiter))

    def _if(self, argument: Any) -> Any:
        name, when_true, when_false = self._list(argument, 3)
        return self.resolve(when_true if self.condition(str(name)) else when_false)

    def _equals(self, argument: Any) -> bool:
        left, right = (self.resolve(item) for item in self._list(argument, 2))
        return str(left) == str(right)

    def _find_in_map(self, argument: Any) -> Any:
        map_name, top_key, second_key = (self.resolve(item) for item in self._list(argument, 3))
        try:
            return self._mappings[map_name][top_key][second_key]
        except KeyError as missing:
            raise TemplateError(f"!FindInMap {map_name}/{top_key}/{second_key}") from missing


# ---------------------------------------------------------------------------- Globals


def merge_globals(global_value: Any, local_value: Any) -> Any:
    """SAM's Globals rules: maps merge key by key, lists append, anything else is replaced.

    Intrinsic functions count as single values: `!Ref A` globally and `!Sub ...` locally must
    give the local one, not a two-key mess.
    """
    if (
        isinstance(global_value, dict)
        and isinstance(local_value, dict)
        and not is_intrinsic(global_value)
        and not is_intrinsic(local_value)
    ):
        merged = dict(global_value)
        for key, value in local_value.items():
            merged[key] = merge_globals(global_value[key], value) if key in global_value else value
        return merged
    if isinstance(global_value, list) and isinstance(local_value, list):
        return [*global_value, *local_value]
    return local_value


# ---------------------------------------------------------------------------- building


def _env_string(value: Any) -> str:
    # CloudFormation hands every environment value to Lambda as a string; booleans as true/false.
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        raise TemplateError(f"environment value {value!r} is not a scalar")
    return str(value)


def _logical_id_of(value: Any, attribute: str, by_arn: Mapping[str, str], *, what: str) -> str:
    """The logical id behind `!GetAtt X.<attribute>` / `!Ref X`, or behind a literal ARN."""
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        target = value["Fn::GetAtt"]
        if isinstance(target, list) and len(target) == 2 and target[1] == attribute:
            return str(target[0])
    if isinstance(value, dict) and "Ref" in value:
        return str(value["Ref"])
    if isinstance(value, str) and value in by_arn:
        return by_arn[value]
    raise TemplateError(f"{what} {value!r} is not a resource of this template")


class _TemplateBuilder:
    def __init__(self, path: Path, document: dict[str, Any], resolver: Resolver) -> None:
        self._path = path
        self._resolver = resolver
        self._resources: dict[str, Any] = {
            logical_id: resource
            for logical_id, resource in (document.get("Resources") or {}).items()
            if "Condition" not in resource or resolver.condition(str(resource["Condition"]))
        }
        globals_section = document.get("Globals") or {}
        self._function_globals: dict[str, Any] = globals_section.get("Function") or {}
        self._api_globals: dict[str, Any] = globals_section.get("Api") or {}

    def _of_types(self, types: frozenset[str] | str) -> list[str]:
        wanted = {types} if isinstance(types, str) else types
        return [
            logical_id
            for logical_id, resource in self._resources.items()
            if resource.get("Type") in wanted
        ]

    def build(self, stack_name: str) -> StackTemplate:
        queues = {logical_id: self._queue(logical_id) for logical_id in self._of_types(QUEUE_TYPE)}
        function_ids = self._of_types(FUNCTION_TYPES)
        apis = self._apis(function_ids)
        functions = {
            logical_id: self._function(logical_id, apis, queues) for logical_id in function_ids
        }
        globals_variables = (self._function_globals.get("Environment") or {}).get("Variables")
        return StackTemplate(
            path=self._path,
            stack_name=stack_name,
            parameters=self._resolver.parameter_values(),
            globals_environment={
                key: _env_string(value)
                for key, value in self._resolver.resolve(globals_variables or {}).items()
            },
            functions=functions,
            apis=apis,
            tables={
                logical_id: self._table(logical_id) for logical_id in self._of_types(TABLE_TYPES)
            },
            queues=queues,
            buckets={
                logical_id: Bucket(
                    logical_id=logical_id,
                    name=self._resolver.physical_name(logical_id),
                    arn=f"arn:aws:s3:::{self._resolver.physical_name(logical_id)}",
                    properties=self._resolved_properties(logical_id),
                    policy=self._bucket_policy(logical_id),
                )
                for logical_id in self._of_types(BUCKET_TYPE)
            },
            secrets={
                logical_id: Secret(
                    logical_id=logical_id,
                    name=self._resolver.physical_name(logical_id),
                    properties=self._resolved_properties(logical_id),
                )
                for logical_id in self._of_types(SECRETSMANAGER_TYPE)
            },
            keys={
                logical_id: Key(
                    logical_id=logical_id,
                    key_id=self._resolver.physical_name(logical_id),
                    arn=key_arn(self._resolver.physical_name(logical_id)),
                    properties=self._resolved_properties(logical_id),
                )
                for logical_id in self._of_types(KEY_TYPE)
            },
            usage_plans={
                logical_id: self._usage_plan(logical_id, apis)
                for logical_id in self._of_types(USAGE_PLAN_TYPE)
            },
            log_groups={
                logical_id: LogGroup(
                    logical_id=logical_id,
                    name=self._resolver.physical_name(logical_id),
                    arn=log_group_arn(self._resolver.physical_name(logical_id)),
                    properties=self._resolved_properties(logical_id),
                )
                for logical_id in self._of_types(LOG_GROUP_TYPE)
            },
            topics={
                logical_id: self._topic(logical_id) for logical_id in self._of_types(TOPIC_TYPE)
            },
        )

    def _topic(self, logical_id: str) -> Topic:
        name = self._resolver.physical_name(logical_id)
        arn = topic_arn(name)
        alarms = tuple(
            alarm_id
            for alarm_id in self._of_types(ALARM_TYPE)
            if any(
                arn
                in self._resolver.resolve(self._resolver.properties(alarm_id).get(actions) or [])
                for actions in ("AlarmActions", "OKActions", "InsufficientDataActions")
            )
        )
        return Topic(
            logical_id=logical_id,
            name=name,
            arn=arn,
            properties=self._resolved_properties(logical_id),
            alarms=alarms,
        )

    def _usage_plan(self, logical_id: str, apis: Mapping[str, RestApi]) -> UsagePlan:
        raw = self._resolver.properties(logical_id)
        stages: list[UsagePlanStage] = []
        for stage in raw.get("ApiStages") or []:
            api_id = _logical_id_of(stage.get("ApiId"), "", {}, what=f"{logical_id}: ApiId")
            if api_id not in apis:
                raise TemplateError(f"{logical_id}: ApiId {api_id!r} is not an API")
            throttles = self._resolver.resolve(stage.get("Throttle") or {})
            stages.append(
                UsagePlanStage(
                    api_id=api_id,
                    stage=apis[api_id].stage_name,
                    method_throttles={
                        str(method): _throttle(limits) for method, limits in throttles.items()
                    },
                )
            )
        # ApiStages' Stage (`!Ref Api.Stage`) is the API's stage name: only these are resolved.
        plan_throttle = self._resolver.resolve(raw.get("Throttle"))
        name = self._resolver.resolve(raw.get("UsagePlanName"))
        return UsagePlan(
            logical_id=logical_id,
            name=str(name or f"{self._resolver.stack_name}-{logical_id}"),
            stages=tuple(stages),
            throttle=_throttle(plan_throttle) if plan_throttle else None,
        )

    def _bucket_policy(self, bucket_id: str) -> dict[str, Any] | None:
        for logical_id in self._of_types("AWS::S3::BucketPolicy"):
            properties = self._resolver.properties(logical_id)
            if properties.get("Bucket") == {"Ref": bucket_id}:
                return dict(self._resolver.resolve(properties.get("PolicyDocument") or {}))
        return None

    def _resolved_properties(self, logical_id: str) -> dict[str, Any]:
        resolved = self._resolver.resolve(self._resolver.properties(logical_id))
        return dict(resolved)

    # -- storage

    def _table(self, logical_id: str) -> Table:
        name = self._resolver.physical_name(logical_id)
        properties = self._resolved_properties(logical_id)
        if self._resources[logical_id]["Type"] == "AWS::Serverless::SimpleTable":
            properties = _simple_table_properties(properties)
        properties["TableName"] = name
        return Table(logical_id=logical_id, name=name, arn=table_arn(name), properties=properties)

    def _queue(self, logical_id: str) -> Queue:
        name = self._resolver.physical_name(logical_id)
        raw_properties = self._resolver.properties(logical_id)
        properties = self._resolved_properties(logical_id)
        redrive: Redrive | None = None
        raw_policy = raw_properties.get("RedrivePolicy")
        if raw_policy:
            policy = properties["RedrivePolicy"]
            if isinstance(policy, str):
                policy = json.loads(policy)
            target_arn = str(policy["deadLetterTargetArn"])
            queue_ids_by_arn = {
                queue_arn(self._resolver.physical_name(other)): other
                for other in self._of_types(QUEUE_TYPE)
            }
            redrive = Redrive(
                dead_letter_target_arn=target_arn,
                dead_letter_queue_id=queue_ids_by_arn.get(target_arn),
                max_receive_count=int(policy["maxReceiveCount"]),
            )
            properties["RedrivePolicy"] = {
                "deadLetterTargetArn": target_arn,
                "maxReceiveCount": redrive.max_receive_count,
            }
        return Queue(
            logical_id=logical_id,
            name=name,
            url=self._resolver.queue_url(logical_id),
            arn=queue_arn(name),
            visibility_timeout=int(properties.get("VisibilityTimeout", 30)),
            message_retention_period=int(properties.get("MessageRetentionPeriod", 345600)),
            fifo=str(properties.get("FifoQueue", False)).lower() == "true",
            redrive=redrive,
            properties=properties,
        )

    # -- API

    def _apis(self, function_ids: list[str]) -> dict[str, RestApi]:
        apis = {logical_id: self._api(logical_id) for logical_id in self._of_types(API_TYPE)}
        needs_implicit = any(
            (event.get("Type") == "Api" and "RestApiId" not in (event.get("Properties") or {}))
            for function_id in function_ids
            for event in (self._function_properties(function_id).get("Events") or {}).values()
        )
        if needs_implicit and IMPLICIT_API_ID not in apis:
            apis[IMPLICIT_API_ID] = self._api(IMPLICIT_API_ID, {"StageName": "Prod"})
        return apis

    def _api(self, logical_id: str, implicit: dict[str, Any] | None = None) -> RestApi:
        raw = implicit if implicit is not None else self._resolver.properties(logical_id)
        properties = merge_globals(self._api_globals, raw)
        auth = properties.get("Auth") or {}
        authorizers = {
            name: self._authorizer(name, definition)
            for name, definition in (auth.get("Authorizers") or {}).items()
        }
        default = self._resolver.resolve(auth.get("DefaultAuthorizer"))
        if default in (None, "NONE"):
            default = None
        elif default not in authorizers:
            raise TemplateError(f"{logical_id}: DefaultAuthorizer {default!r} is not defined")
        responses = {
            str(kind): _gateway_response(self._resolver.resolve(definition) or {})
            for kind, definition in (properties.get("GatewayResponses") or {}).items()
        }
        binary_types = [
            str(kind).replace("~1", "/")
            for kind in self._resolver.resolve(properties.get("BinaryMediaTypes") or [])
        ]
        method_throttle = None
        for setting in self._resolver.resolve(properties.get("MethodSettings") or []):
            every_method = (setting.get("ResourcePath"), setting.get("HttpMethod")) == ("/*", "*")
            if every_method and (
                "ThrottlingRateLimit" in setting or "ThrottlingBurstLimit" in setting
            ):
                method_throttle = Throttle(
                    rate=float(setting.get("ThrottlingRateLimit", 10_000)),
                    burst=int(setting.get("ThrottlingBurstLimit", 5_000)),
                )
        return RestApi(
            logical_id=logical_id,
            api_id=local_api_id(logical_id),
            stage_name=str(self._resolver.resolve(properties.get("StageName", "Prod"))),
            default_authorizer=default,
            authorizers=authorizers,
            gateway_responses=responses,
            binary_media_types=tuple(binary_types),
            api_key_source=str(
                self._resolver.resolve(properties.get("ApiKeySourceType", "HEADER"))
            ),
            method_throttle=method_throttle,
        )

    def _authorizer(self, name: str, definition: dict[str, Any]) -> Authorizer:
        function_arns = {
            function_arn(self._resolver.physical_name(function_id)): function_id
            for function_id in self._of_types(FUNCTION_TYPES)
        }
        function_id = _logical_id_of(
            definition.get("FunctionArn"),
            "Arn",
            function_arns,
            what=f"authorizer {name}: FunctionArn",
        )
        # SAM's default payload type for Lambda authorizers is TOKEN.
        payload_type = str(self._resolver.resolve(definition.get("FunctionPayloadType", "TOKEN")))
        identity = self._resolver.resolve(definition.get("Identity") or {})
        headers: list[str] = [str(header) for header in identity.get("Headers") or []]
        if payload_type == "TOKEN":
            headers = [str(identity.get("Header", "Authorization"))]
        return Authorizer(
            name=name,
            function_id=function_id,
            payload_type=payload_type,
            identity_headers=tuple(headers),
            identity_query_strings=tuple(str(item) for item in identity.get("QueryStrings") or []),
            reauthorize_every=int(identity.get("ReauthorizeEvery", 300)),
            identity_context=tuple(str(item) for item in identity.get("Context") or []),
        )

    # -- functions

    def _function_properties(self, logical_id: str) -> dict[str, Any]:
        properties = self._resolver.properties(logical_id)
        if self._resources[logical_id]["Type"] == "AWS::Serverless::Function":
            properties = merge_globals(self._function_globals, properties)
        return properties

    def _function(
        self, logical_id: str, apis: Mapping[str, RestApi], queues: Mapping[str, Queue]
    ) -> Function:
        properties = self._function_properties(logical_id)
        code_uri = self._resolver.resolve(properties.get("CodeUri", properties.get("Code")))
        if not isinstance(code_uri, str):
            raise TemplateError(f"{logical_id}: only a local CodeUri folder can run locally")
        variables = (properties.get("Environment") or {}).get("Variables") or {}
        api_events: list[ApiEvent] = []
        sqs_events: list[SqsEvent] = []
        subscriptions: list[LogSubscription] = []
        ignored: dict[str, str] = {}
        for event_name, event in (properties.get("Events") or {}).items():
            kind = str(event.get("Type"))
            event_properties = event.get("Properties") or {}
            if kind == "Api":
                api_events.append(
                    self._api_event(logical_id, event_name, event_properties, apis=apis)
                )
            elif kind == "SQS":
                sqs_events.append(self._sqs_event(event_name, event_properties, queues))
            elif kind == "CloudWatchLogs":
                resolved = self._resolver.resolve(event_properties)
                subscriptions.append(
                    LogSubscription(
                        name=event_name,
                        log_group=str(resolved["LogGroupName"]),
                        filter_pattern=str(resolved.get("FilterPattern", "")),
                    )
                )
            else:
                ignored[event_name] = kind
        name = self._resolver.physical_name(logical_id)
        logging_config = self._resolver.resolve(properties.get("LoggingConfig") or {})
        return Function(
            logical_id=logical_id,
            name=name,
            code_dir=(self._path.parent / code_uri).resolve(),
            handler=str(self._resolver.resolve(properties.get("Handler", "app.handler"))),
            runtime=str(self._resolver.resolve(properties.get("Runtime", "python3.13"))),
            # SAM's defaults when neither the function nor Globals says.
            timeout=int(self._resolver.resolve(properties.get("Timeout", 3))),
            memory_size=int(self._resolver.resolve(properties.get("MemorySize", 128))),
            environment={
                key: _env_string(value) for key, value in self._resolver.resolve(variables).items()
            },
            layers=tuple(
                str(layer) for layer in self._resolver.resolve(properties.get("Layers") or [])
            ),
            api_events=tuple(api_events),
            sqs_events=tuple(sqs_events),
            log_group=str(logging_config.get("LogGroup") or f"/aws/lambda/{name}"),
            log_subscriptions=tuple(subscriptions),
            ignored_events=ignored,
            reserved_concurrency=_concurrency(
                self._resolver.resolve(properties.get("ReservedConcurrentExecutions")),
                f"{logical_id}: ReservedConcurrentExecutions",
                minimum=0,
            ),
        )

    def _api_event(
        self,
        function_id: str,
        event_name: str,
        properties: dict[str, Any],
        *,
        apis: Mapping[str, RestApi],
    ) -> ApiEvent:
        raw_api = properties.get("RestApiId")
        api_id = (
            IMPLICIT_API_ID
            if raw_api is None
            else _logical_id_of(raw_api, "", {}, what="RestApiId")
        )
        if api_id not in apis:
            raise TemplateError(f"{function_id}.{event_name}: RestApiId {api_id!r} is not an API")
        api = apis[api_id]
        override = self._resolver.resolve((properties.get("Auth") or {}).get("Authorizer"))
        if override is None:
            authorizer = api.default_authorizer
        elif override == "NONE":
            authorizer = None
        elif override in api.authorizers:
            authorizer = str(override)
        else:
            raise TemplateError(f"{function_id}.{event_name}: authorizer {override!r} is unknown")
        key_required = self._resolver.resolve((properties.get("Auth") or {}).get("ApiKeyRequired"))
        if key_required is None:
            api_auth = merge_globals(self._api_globals, self._api_properties(api_id)).get("Auth")
            key_required = self._resolver.resolve((api_auth or {}).get("ApiKeyRequired", False))
        return ApiEvent(
            name=event_name,
            api_id=api_id,
            path=str(self._resolver.resolve(properties["Path"])),
            method=str(self._resolver.resolve(properties["Method"])).upper(),
            authorizer=authorizer,
            api_key_required=str(key_required).lower() == "true",
        )

    def _api_properties(self, api_id: str) -> dict[str, Any]:
        return {} if api_id == IMPLICIT_API_ID else self._resolver.properties(api_id)

    def _sqs_event(
        self, event_name: str, properties: dict[str, Any], queues: Mapping[str, Queue]
    ) -> SqsEvent:
        by_arn = {queue.arn: queue.logical_id for queue in queues.values()}
        queue_id = _logical_id_of(
            properties.get("Queue"), "Arn", by_arn, what=f"{event_name}: Queue"
        )
        if queue_id not in queues:
            raise TemplateError(f"{event_name}: {queue_id!r} is not an SQS queue of the template")
        resolved = self._resolver.resolve(properties)
        return SqsEvent(
            name=event_name,
            queue_id=queue_id,
            batch_size=int(resolved.get("BatchSize", 10)),
            function_response_types=tuple(resolved.get("FunctionResponseTypes") or ()),
            maximum_batching_window=int(resolved.get("MaximumBatchingWindowInSeconds", 0)),
            enabled=str(resolved.get("Enabled", True)).lower() == "true",
            maximum_concurrency=_concurrency(
                (resolved.get("ScalingConfig") or {}).get("MaximumConcurrency"),
                f"{event_name}: ScalingConfig.MaximumConcurrency",
                minimum=MINIMUM_SQS_MAXIMUM_CONCURRENCY,
                maximum=MAXIMUM_SQS_MAXIMUM_CONCURRENCY,
            ),
        )


def _throttle(limits: Mapping[str, Any]) -> Throttle:
    return Throttle(
        rate=float(limits.get("RateLimit", 10_000)), burst=int(limits.get("BurstLimit", 5_000))
    )


def _concurrency(value: Any, what: str, *, minimum: int, maximum: int | None = None) -> int | None:
    """A concurrency setting as a number (a parameter's value arrives as a string); None when
    the template leaves it out. Out-of-range values are refused as CloudFormation refuses them."""
    if value is None or value is NO_VALUE:
        return None
    try:
        number = int(str(value))
    except ValueError:
        raise TemplateError(f"{what} must be a whole number, not {value!r}") from None
    if number < minimum or (maximum is not None and number > maximum):
        bounds = f"at least {minimum}" if maximum is None else f"between {minimum} and {maximum}"
        raise TemplateError(f"{what} must be {bounds}, not {number}")
    return number


def _gateway_response(definition: Mapping[str, Any]) -> GatewayResponse:
    status = definition.get("StatusCode")
    parameters = definition.get("ResponseParameters") or {}
    return GatewayResponse(
        status_code=int(status) if status is not None else None,
        templates={
            str(kind): str(body)
            for kind, body in (definition.get("ResponseTemplates") or {}).items()
        },
        headers={
            str(name): str(value) for name, value in (parameters.get("Headers") or {}).items()
        },
    )


def _simple_table_properties(properties: Mapping[str, Any]) -> dict[str, Any]:
    """AWS::Serverless::SimpleTable as the AWS::DynamoDB::Table SAM turns it into."""
    key = properties.get("PrimaryKey") or {"Name": "id", "Type": "String"}
    attribute_type = {"String": "S", "Number": "N", "Binary": "B"}[str(key.get("Type", "String"))]
    table: dict[str, Any] = {
        "AttributeDefinitions": [{"AttributeName": key["Name"], "AttributeType": attribute_type}],
        "KeySchema": [{"AttributeName": key["Name"], "KeyType": "HASH"}],
    }
    if "ProvisionedThroughput" in properties:
        table["ProvisionedThroughput"] = properties["ProvisionedThroughput"]
    else:
        table["BillingMode"] = "PAY_PER_REQUEST"
    if "SSESpecification" in properties:
        table["SSESpecification"] = properties["SSESpecification"]
    return table


def load_template(
    path: Path = DEFAULT_TEMPLATE,
    *,
    stack_name: str = DEFAULT_STACK_NAME,
    sqs_endpoint: str | None = None,
    parameter_overrides: Mapping[str, str] | None = None,
) -> StackTemplate:
    """Read a SAM template into the model the local stack runs.

    `sqs_endpoint` is the embedded AWS's URL, so that `!Ref Queue` gives the URL the queue
    really has there.
    """
    path = path.resolve()
    document = load_yaml(path)
    overrides = dict(parameter_overrides or {})
    resolver = Resolver(
        document,
        stack_name=stack_name,
        sqs_endpoint=sqs_endpoint or DEFAULT_SQS_ENDPOINT,
        parameter_overrides=overrides,
    )
    return _TemplateBuilder(path, document, resolver).build(stack_name)
