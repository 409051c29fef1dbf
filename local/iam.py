"""Each function's IAM role exactly as SAM builds it, created in the embedded AWS.

The roles come from the SAM-translated template (policy templates expanded by SAM's own
translator, not re-typed here), with their intrinsics resolved against the local naming
scheme. The embedded AWS then enforces them (`local.iam_enforcement`): a function runs with
its role's temporary credentials, and whatever the role does not allow is refused, as on AWS.

The operator (the admin CLI, the demo seeding, the tests' own setup and read-back) uses a
fixed local access key with full access: on AWS that is whoever holds the admin's
credentials.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import boto3

from local.template import (
    ACCOUNT_ID,
    DEFAULT_SQS_ENDPOINT,
    DEFAULT_STACK_NAME,
    DEFAULT_TEMPLATE,
    FUNCTION_TYPES,
    REGION,
    Resolver,
    TemplateError,
    load_yaml,
)

if TYPE_CHECKING:
    from mypy_boto3_iam.client import IAMClient
    from mypy_boto3_sts.client import STSClient

# The operator's key: a user key (no session token), not shaped like a real AWS key id so
# no scanner mistakes it for one; neither value is a secret: they exist only locally.
OPERATOR_USER: Final = "local-operator"
OPERATOR_ACCESS_KEY_ID: Final = "LOCALOPERATORKEY0000"
OPERATOR_SECRET_ACCESS_KEY: Final = "local-operator-secret-not-a-real-key"  # noqa: S105 - local only

# The AWS managed policies SAM attaches to function roles, as AWS publishes them. They let
# the Lambda service write the function's logs and traces; our code never calls them. An
# unknown managed policy stops the stack rather than being silently granted or dropped.
AWS_MANAGED_POLICIES: Final[Mapping[str, Mapping[str, Any]]] = {
    "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole": {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
                "Resource": "*",
            }
        ],
    },
    "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess": {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": [
                    "xray:PutTraceSegments",
                    "xray:PutTelemetryRecords",
                    "xray:GetSamplingRules",
                    "xray:GetSamplingTargets",
                    "xray:GetSamplingStatisticSummaries",
                ],
                "Resource": "*",
            }
        ],
    },
    "arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole": {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": [
                    "sqs:ReceiveMessage",
                    "sqs:DeleteMessage",
                    "sqs:GetQueueAttributes",
                    "logs:CreateLogGroup",
                    "logs:CreateLogStream",
                    "logs:PutLogEvents",
                ],
                "Resource": "*",
            }
        ],
    },
}


def translate(
    document: Mapping[str, Any],
    *,
    stack_name: str,
    parameter_overrides: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The CloudFormation SAM would deploy, translated locally by SAM's own translator."""
    from samtranslator.model.exceptions import InvalidDocumentException  # noqa: PLC0415
    from samtranslator.parser.parser import Parser  # noqa: PLC0415
    from samtranslator.translator.translator import Translator  # noqa: PLC0415

    logging.getLogger("samtranslator").setLevel(logging.ERROR)  # feature-toggle chatter
    document = copy.deepcopy(dict(document))
    # What `sam package` does first: local code folders become S3 locations.
    for logical_id, resource in document["Resources"].items():
        properties = resource.get("Properties") or {}
        for key in ("CodeUri", "ContentUri"):
            if isinstance(properties.get(key), str):
                properties[key] = f"s3://local-artifacts/{logical_id}.zip"
    translator = Translator(
        managed_policy_map={},
        sam_parser=Parser(),
        boto_session=boto3.Session(region_name=REGION),
    )
    parameters = {
        "AWS::Region": REGION,
        "AWS::Partition": "aws",
        "AWS::AccountId": ACCOUNT_ID,
        "AWS::StackName": stack_name,
        **(parameter_overrides or {}),
    }
    try:
        result: dict[str, Any] = translator.translate(document, parameter_values=parameters)
    except InvalidDocumentException as error:
        causes = "; ".join(str(cause) for cause in error.causes)
        raise TemplateError(f"SAM translation failed: {causes}") from error
    return result


@dataclass(frozen=True)
class FunctionRole:
    """A function's execution role after SAM's translation, intrinsics resolved."""

    function_id: str
    role_name: str
    trust_policy: Mapping[str, Any]
    # Inline policies by name: what SAM made of `Policies` (templates and statements).
    policies: Mapping[str, Mapping[str, Any]]
    managed_policy_arns: tuple[str, ...]

    @property
    def arn(self) -> str:
        return f"arn:aws:iam::{ACCOUNT_ID}:role/{self.role_name}"

    def statements(self, *, managed: bool = False) -> list[Mapping[str, Any]]:
        """Every Allow/Deny statement of the inline policies (and the managed ones)."""
        documents = list(self.policies.values())
        if managed:
            documents += [AWS_MANAGED_POLICIES[arn] for arn in self.managed_policy_arns]
        found: list[Mapping[str, Any]] = []
        for document in documents:
            statement = document.get("Statement", [])
            found.extend(statement if isinstance(statement, list) else [statement])
        return found

    def actions(self) -> set[str]:
        """The inline policies' actions, as written (wildcards included)."""
        return {
            action for statement in self.statements() for action in _listed(statement, "Action")
        }


def _listed(statement: Mapping[str, Any], key: str) -> list[str]:
    value = statement.get(key, [])
    return [str(item) for item in (value if isinstance(value, list) else [value])]


def function_roles(
    template_path: Path = DEFAULT_TEMPLATE,
    *,
    stack_name: str = DEFAULT_STACK_NAME,
    sqs_endpoint: str = DEFAULT_SQS_ENDPOINT,
    parameter_overrides: Mapping[str, str] | None = None,
) -> dict[str, FunctionRole]:
    """Every function's role, by function logical id."""
    overrides = dict(parameter_overrides or {})
    document = load_yaml(template_path)
    translated = translate(document, stack_name=stack_name, parameter_overrides=overrides)
    resolver = Resolver(
        translated, stack_name=stack_name, sqs_endpoint=sqs_endpoint, parameter_overrides=overrides
    )
    resources: Mapping[str, Any] = translated["Resources"]
    roles: dict[str, FunctionRole] = {}
    for function_id, resource in (document.get("Resources") or {}).items():
        if resource.get("Type") not in FUNCTION_TYPES:
            continue
        roles[function_id] = _function_role(function_id, resources, resolver)
    return roles


def _function_role(
    function_id: str, resources: Mapping[str, Any], resolver: Resolver
) -> FunctionRole:
    def refuse(reason: str) -> TemplateError:
        return TemplateError(f"{function_id}: its IAM role cannot be built locally: {reason}")

    function = resources.get(function_id) or {}
    role_reference = (function.get("Properties") or {}).get("Role")
    if not (isinstance(role_reference, dict) and "Fn::GetAtt" in role_reference):
        raise refuse(f"Role is {role_reference!r}, not a role of this template")
    role_id = str(role_reference["Fn::GetAtt"][0])
    role = resources.get(role_id) or {}
    if role.get("Type") != "AWS::IAM::Role":
        raise refuse(f"{role_id} is not an AWS::IAM::Role")
    try:
        properties = resolver.resolve(role.get("Properties") or {})
    except TemplateError as error:
        raise refuse(str(error)) from error
    managed = tuple(str(arn) for arn in properties.get("ManagedPolicyArns", []))
    unknown = [arn for arn in managed if arn not in AWS_MANAGED_POLICIES]
    if unknown:
        raise refuse(f"unknown managed policies {unknown}")
    policies: dict[str, Mapping[str, Any]] = {}
    for policy in [*properties.get("Policies", []), *_attached_policies(role_id, resources)]:
        document = policy.get("PolicyDocument")
        if not isinstance(document, dict) or not document.get("Statement"):
            raise refuse(f"policy {policy.get('PolicyName')!r} has no statements")
        try:
            policies[str(policy["PolicyName"])] = resolver.resolve(document)
        except TemplateError as error:
            raise refuse(str(error)) from error
    return FunctionRole(
        function_id=function_id,
        role_name=f"{resolver.stack_name}-{role_id}"[:64],
        trust_policy=properties.get("AssumeRolePolicyDocument") or {},
        policies=policies,
        managed_policy_arns=managed,
    )


def _attached_policies(role_id: str, resources: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The template's own AWS::IAM::Policy resources that name the role in `Roles` (one
    policy shared by many functions' roles, such as who may send audit records)."""
    return [
        resource.get("Properties") or {}
        for resource in resources.values()
        if resource.get("Type") == "AWS::IAM::Policy"
        and {"Ref": role_id} in ((resource.get("Properties") or {}).get("Roles") or [])
    ]


@cache
def default_function_roles() -> dict[str, FunctionRole]:
    """The roles of template.yaml with the local stack's naming (translated once)."""
    return function_roles()


@dataclass(frozen=True)
class RoleCredentials:
    access_key_id: str
    secret_access_key: str
    session_token: str

    def environment(self) -> dict[str, str]:
        return {
            "AWS_ACCESS_KEY_ID": self.access_key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret_access_key,
            "AWS_SESSION_TOKEN": self.session_token,
        }


@cache
def _session() -> boto3.Session:
    # Kept across moto mocks, which reset boto3's default session: loading the service
    # models again for every test's roles would cost a second each.
    return boto3.Session(
        region_name=REGION,
        aws_access_key_id=OPERATOR_ACCESS_KEY_ID,
        aws_secret_access_key=OPERATOR_SECRET_ACCESS_KEY,
    )


@cache
def _iam(endpoint_url: str | None) -> IAMClient:
    return _session().client("iam", endpoint_url=endpoint_url)


@cache
def _sts(endpoint_url: str | None) -> STSClient:
    return _session().client("sts", endpoint_url=endpoint_url)


def create_operator(endpoint_url: str | None) -> None:
    """The operator user with full access and the fixed local key (see the module doc)."""
    from moto.iam.models import iam_backends  # noqa: PLC0415 - the embedded AWS is in-process

    iam = _iam(endpoint_url)
    iam.create_user(UserName=OPERATOR_USER)
    iam.put_user_policy(
        UserName=OPERATOR_USER,
        PolicyName="operator",
        PolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}],
            }
        ),
    )
    generated = iam.create_access_key(UserName=OPERATOR_USER)["AccessKey"]["AccessKeyId"]
    # moto generates random keys; the operator's is fixed so every local tool knows it.
    backend = iam_backends[ACCOUNT_ID]["aws"]
    key = backend.access_keys.pop(generated)
    key.access_key_id = OPERATOR_ACCESS_KEY_ID
    key.secret_access_key = OPERATOR_SECRET_ACCESS_KEY
    backend.access_keys[OPERATOR_ACCESS_KEY_ID] = key


def create_role(
    role: FunctionRole,
    endpoint_url: str | None,
    *,
    without: Iterable[str] = (),
) -> RoleCredentials:
    """Creates the role in the embedded AWS and returns credentials of a session of it.

    `without` removes actions from the inline policies: a test uses it to show that the
    embedded AWS refuses what a role does not allow.
    """
    removed = set(without)
    iam = _iam(endpoint_url)
    iam.create_role(
        RoleName=role.role_name,
        AssumeRolePolicyDocument=json.dumps(role.trust_policy),
        MaxSessionDuration=43_200,
    )
    for name, document in role.policies.items():
        iam.put_role_policy(
            RoleName=role.role_name,
            PolicyName=name,
            PolicyDocument=json.dumps(_without_actions(document, removed)),
        )
    for arn, document in ((arn, AWS_MANAGED_POLICIES[arn]) for arn in role.managed_policy_arns):
        iam.put_role_policy(
            RoleName=role.role_name,
            PolicyName=arn.rsplit("/", 1)[-1],
            PolicyDocument=json.dumps(document),
        )
    session = _sts(endpoint_url).assume_role(
        RoleArn=role.arn, RoleSessionName=role.function_id[:64], DurationSeconds=43_200
    )["Credentials"]
    return RoleCredentials(
        access_key_id=session["AccessKeyId"],
        secret_access_key=session["SecretAccessKey"],
        session_token=session["SessionToken"],
    )


def _without_actions(document: Mapping[str, Any], removed: set[str]) -> dict[str, Any]:
    # SAM writes policy-template documents without a Version, which AWS reads as 2008-10-17
    # and moto refuses; the two versions differ only in policy variables, which none uses.
    document = {"Version": "2012-10-17", **document}
    if not removed:
        return document
    statements = document.get("Statement", [])
    kept = []
    for statement in statements if isinstance(statements, list) else [statements]:
        actions = [action for action in _listed(statement, "Action") if action not in removed]
        if actions:
            kept.append({**statement, "Action": actions})
    return {
        **document,
        "Statement": kept or [{"Effect": "Deny", "Action": "none:None", "Resource": "*"}],
    }


def set_up(
    endpoint_url: str | None, roles: Mapping[str, FunctionRole]
) -> dict[str, RoleCredentials]:
    """Creates the operator and every function's role, and returns each function's session.

    Runs with enforcement paused: assuming a function's role is the Lambda service's act.
    """
    from local import iam_enforcement  # noqa: PLC0415 - moto is imported only when needed

    with iam_enforcement.paused():
        create_operator(endpoint_url)
        return {function_id: create_role(role, endpoint_url) for function_id, role in roles.items()}
