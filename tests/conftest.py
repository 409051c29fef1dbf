"""Fixtures shared by every test layer.

- `lambda_environment`: the environment a deployed function sees, from template.yaml's
  Globals (so names cannot drift), plus dummy AWS credentials.
- `aws`: moto in-process (`mock_aws`) with the template's tables, queues and buckets.
- `aws_server`: a real moto server on loopback with the template's tables, for code that
  speaks HTTP itself (the authorizer's signed client).
- `load_event` and `import_function`: sample events from events/ and a function's app.py
  imported fresh, as Lambda imports it.

IAM is enforced in both moto modes, as on AWS: the tests' own setup and read-back act as
the local operator (full access), and a handler loaded with `import_function` runs under its
function's role from the SAM-translated template (local.iam), so a permission the template
lacks fails here the way it would fail on AWS.
"""

import contextlib
import copy
import functools
import importlib.util
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import botocore.session
import pytest
from botocore.credentials import CredentialProvider, Credentials, ReadOnlyCredentials
from moto import mock_aws
from moto.core.custom_responses_mock import reset_responses_mock
from moto.core.models import responses_mock
from moto.server import ThreadedMotoServer

from local import iam, iam_enforcement, moto_fair_queues, partition_capacity
from local.aws import (
    OPERATOR_CREDENTIALS,
    bucket_encryption_rules,
    create_bucket,
    create_keys,
    serialize_dynamodb_requests,
    table_definition,
)
from local.template import Function, StackTemplate, load_template
from psap.config import reset_settings
from psap.storage.dynamodb import dynamodb
from psap.storage.partitions import forget_registrations
from psap.storage.s3 import s3
from psap.storage.sequences import forget_blocks
from psap.storage.sqs import sqs
from psap.webhooks.secrets import secrets_manager
from tests.support.embedded_aws import TemplateResources

# Checks every `@pytest.mark.spec(...)` id against the rule catalog at collection.
pytest_plugins = ("tests.support.spec_marker", "tests.support.one_stack_worker")

ROOT = Path(__file__).resolve().parent.parent
# Standard queues deliver as SQS fair queues do, in every test's moto as in the local stack.
moto_fair_queues.install()
TEMPLATE: StackTemplate = load_template()
# Powertools Metrics reads its namespace when psap.observability is first imported, which can
# be while test modules are collected, before any fixture sets the environment. Without one,
# the 100th value of a metric (never flushed while metrics are disabled) raises.
os.environ.setdefault(
    "POWERTOOLS_METRICS_NAMESPACE",
    TEMPLATE.globals_environment.get("POWERTOOLS_METRICS_NAMESPACE", "Psap"),
)


class LambdaContext:
    function_name = "test-function"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:test-function"
    aws_request_id = "00000000-0000-0000-0000-000000000000"

    def get_remaining_time_in_millis(self) -> int:
        return 10_000


@pytest.fixture
def lambda_context() -> LambdaContext:
    return LambdaContext()


@pytest.fixture
def lambda_environment(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    environment = dict(TEMPLATE.globals_environment)
    # The authorizers' default request budgets (template parameters, their own environment).
    authorizer = TEMPLATE.functions["PartnerAuthorizerFunction"].environment
    environment["TENANT_RATE_LIMITS"] = authorizer["TENANT_RATE_LIMITS"]
    environment.update(
        **OPERATOR_CREDENTIALS,
        AWS_DEFAULT_REGION="us-east-1",
        AWS_REGION="us-east-1",
        POWERTOOLS_TRACE_DISABLED="true",
        POWERTOOLS_METRICS_DISABLED="true",
        POWERTOOLS_LOG_LEVEL="WARNING",
    )
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    for name in (
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_DYNAMODB",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
    ):
        monkeypatch.delenv(name, raising=False)
    return environment


def _create_tables(client: Any) -> None:
    for table in TEMPLATE.tables.values():
        client.create_table(**table_definition(table))


class _SettingsFollowingMonkeyPatch(pytest.MonkeyPatch):  # type: ignore[misc]
    """MonkeyPatch whose environment changes reach psap.config: a function reads its
    environment once (cold start), a test changes it between calls."""

    def setenv(self, name: str, value: str, prepend: str | None = None) -> None:
        super().setenv(name, value, prepend)
        reset_settings()

    def delenv(self, name: str, raising: bool = True) -> None:
        super().delenv(name, raising)
        reset_settings()


@pytest.fixture
def monkeypatch() -> Iterator[pytest.MonkeyPatch]:
    patch = _SettingsFollowingMonkeyPatch()
    yield patch
    patch.undo()
    reset_settings()


@pytest.fixture(autouse=True)
def _settings_per_test() -> Iterator[None]:
    """Each test reads the environment afresh, and a setting one test configured (the admin
    CLI's target) never reaches the next."""
    reset_settings()
    yield
    reset_settings()


def _clear_clients() -> None:
    # Cached per warm container; a test's moto (or server endpoint) needs fresh ones.
    for cached in (dynamodb, s3, sqs, secrets_manager):
        cached.cache_clear()
    forget_registrations()
    # Imported here: psap.audit imports psap.observability, whose Metrics reads its namespace
    # at import, which must come after this module has set it (above).
    from psap.audit.seal_markers import forget_marked_chains
    from psap.audit.sealing import kms
    from psap.audit.store import forget_marked_days
    from psap.webhooks.store.pointers import forget_marked_shards

    kms.cache_clear()
    forget_marked_chains()
    forget_marked_days()
    forget_marked_shards()
    forget_blocks()  # id blocks of the previous test's embedded AWS


class _FunctionRoles:
    """The active embedded AWS's function roles, created on a handler's first call."""

    def __init__(self, endpoint_url: str | None) -> None:
        self.endpoint_url = endpoint_url
        self._sessions: dict[str, Mapping[str, str]] = {}
        self._lock = threading.Lock()
        self._active: list[Mapping[str, str]] = []

    def session(self, function_id: str) -> Mapping[str, str]:
        with self._lock:
            if function_id not in self._sessions:
                role = iam.default_function_roles()[function_id]
                with iam_enforcement.paused():
                    credentials = iam.create_role(role, self.endpoint_url)
                self._sessions[function_id] = credentials.environment()
            return self._sessions[function_id]

    def call_as(self, function_id: str, handler: Callable[..., Any], *args: Any) -> Any:
        """Runs a handler with its role's credentials, as Lambda does; then the operator's.
        Every client signs with the variables current at each request (_EnvironmentCredentials),
        so no client needs to be made again."""
        session = self.session(function_id)
        with self._lock:
            self._active.append(session)
            os.environ.update(session)
        try:
            return handler(*args)
        finally:
            with self._lock:
                self._active.remove(session)
                # Concurrent handlers (threads) keep the identity until the last one returns.
                if self._active:
                    os.environ.update(self._active[-1])
                else:
                    os.environ.update(OPERATOR_CREDENTIALS)
                    os.environ.pop("AWS_SESSION_TOKEN", None)


_roles: _FunctionRoles | None = None


class _EnvironmentCredentials(Credentials):
    """Credentials read from the environment at every signature, so the harness can switch a
    warm client between the operator and a function's role by setting AWS_* variables."""

    def __init__(self) -> None:
        super().__init__("", "", method="psap-test-environment")

    def get_frozen_credentials(self) -> ReadOnlyCredentials:
        return ReadOnlyCredentials(
            os.environ.get("AWS_ACCESS_KEY_ID", ""),
            os.environ.get("AWS_SECRET_ACCESS_KEY", ""),
            os.environ.get("AWS_SESSION_TOKEN"),
        )


class _EnvironmentEachRequest(CredentialProvider):
    METHOD = "psap-test-environment"

    def load(self) -> Credentials:
        return _EnvironmentCredentials()


@pytest.fixture(scope="session", autouse=True)
def _clients_follow_the_environment() -> Iterator[None]:
    """Every botocore session the code makes (one per client) signs with the current AWS_*
    variables, and shares one model loader: moto resets boto3's default session, and
    loading the service models again for every client would cost a second each."""
    real_get_session = botocore.session.get_session
    loader = real_get_session().get_component("data_loader")

    def get_session(env_vars: Any = None) -> botocore.session.Session:
        session = real_get_session(env_vars)
        session.register_component("data_loader", loader)
        session.get_component("credential_provider").insert_before("env", _EnvironmentEachRequest())
        return session

    botocore.session.get_session = get_session
    yield
    botocore.session.get_session = real_get_session


_template_resources = TemplateResources()
# The function roles' sessions live as long as the resources made with them.
_made_roles: _FunctionRoles | None = None


def _prepare_template_resources(endpoint_url: str | None) -> None:
    """The template's resources with no data, and the operator: made when missing or changed
    by the last test, else emptied (tests.support.embedded_aws)."""
    global _made_roles  # noqa: PLW0603 - one embedded AWS in the process, as moto's state

    def make() -> None:
        _clear_clients()
        _create_resources(endpoint_url)
        with iam_enforcement.paused():
            iam.create_operator(endpoint_url)

    if _template_resources.prepare(make) or _made_roles is None:
        _made_roles = _FunctionRoles(endpoint_url)
    # A role not used yet is made through this test's way in (in process, or the server).
    _made_roles.endpoint_url = endpoint_url


@contextlib.contextmanager
def _enforced_iam() -> Iterator[None]:
    """Enforcement is on for the block, the tests act as the operator; handlers get their
    roles."""
    global _roles  # noqa: PLW0603 - one embedded AWS at a time, like the fixtures using it
    # mock_aws sets fake keys of its own; the tests act as the operator.
    os.environ.update(OPERATOR_CREDENTIALS)
    os.environ.pop("AWS_SESSION_TOKEN", None)
    _clear_clients()
    _roles = _made_roles
    try:
        with iam_enforcement.enforcing():
            yield
    finally:
        _roles = None


@pytest.fixture
def call_as_function() -> Callable[..., Any]:
    """Runs a callable under a function's role (the embedded AWS's fixture must be on)."""

    def call(function_id: str, handler: Callable[..., Any], *args: Any) -> Any:
        if _roles is None:
            raise RuntimeError("no embedded AWS with IAM enforced in this test")
        return _roles.call_as(function_id, handler, *args)

    return call


def _create_resources(endpoint_url: str | None = None) -> None:
    """The template's keys, tables, queues (with their redrive policies) and buckets, each
    encrypted with its key: a role the key does not trust is refused, as on AWS."""
    create_keys(TEMPLATE, endpoint_url)
    _create_tables(dynamodb())
    for queue in TEMPLATE.queues.values():
        attributes: dict[Any, str] = {"VisibilityTimeout": str(queue.visibility_timeout)}
        if queue.properties.get("KmsMasterKeyId"):
            attributes["KmsMasterKeyId"] = str(queue.properties["KmsMasterKeyId"])
        sqs().create_queue(QueueName=queue.name, Attributes=attributes)
    for queue in TEMPLATE.queues.values():
        if queue.redrive is not None:
            policy = {
                "deadLetterTargetArn": queue.redrive.dead_letter_target_arn,
                "maxReceiveCount": queue.redrive.max_receive_count,
            }
            sqs().set_queue_attributes(
                QueueUrl=queue.url, Attributes={"RedrivePolicy": json.dumps(policy)}
            )
    for bucket in TEMPLATE.buckets.values():
        # Object Lock as declared; versioning left off, as these tests always had it.
        create_bucket(s3(), bucket, versioned=False)
        rules = bucket_encryption_rules(bucket)
        if rules:
            s3().put_bucket_encryption(
                Bucket=bucket.name, ServerSideEncryptionConfiguration={"Rules": rules}
            )


@pytest.fixture
def aws(lambda_environment: dict[str, str]) -> Iterator[None]:
    # Started without moto's reset, stopped without removing data: the template's resources
    # outlive the test, their data does not (_prepare_template_resources).
    mock = mock_aws()
    reset_responses_mock(responses_mock)  # what moto's reset would do to its request mock
    mock.start(reset=False)
    try:
        _clear_clients()
        _prepare_template_resources(None)
        with _enforced_iam():
            yield
    finally:
        mock.stop(remove_data=False)
        _clear_clients()


@pytest.fixture
def dynamodb_partition_capacity() -> Iterator[partition_capacity.PartitionMeter]:
    """DynamoDB's per-partition capacity metered on this test's moto (mock_aws or a server in
    this process), and refused past its limits once the test calls `.enforce(SCALE)`."""
    with partition_capacity.partition_capacity(None) as meter:
        yield meter


@pytest.fixture(scope="session")
def moto_server() -> Iterator[str]:
    serialize_dynamodb_requests()  # DynamoDB's transactions are serializable; moto's are not
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def aws_server(
    moto_server: str, lambda_environment: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    # The threaded server serves the process's moto state: the same resources as `aws`.
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    _clear_clients()
    _prepare_template_resources(moto_server)
    with _enforced_iam():
        yield moto_server
    _clear_clients()


@pytest.fixture
def load_event() -> Callable[[str], dict[str, Any]]:
    def load(name: str) -> dict[str, Any]:
        event: dict[str, Any] = json.loads((ROOT / "events" / f"{name}.json").read_text())
        return copy.deepcopy(event)

    return load


@pytest.fixture
def import_function() -> Iterator[Callable[[str], ModuleType]]:
    loaded: list[str] = []

    def load(directory: str) -> ModuleType:
        name = f"psap_test_function_{directory}"
        spec = importlib.util.spec_from_file_location(
            name, ROOT / "functions" / directory / "app.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        loaded.append(name)
        spec.loader.exec_module(module)
        _run_handlers_as_their_roles(module, ROOT / "functions" / directory)
        return module

    yield load
    for name in loaded:
        sys.modules.pop(name, None)


def _run_handlers_as_their_roles(module: ModuleType, code_dir: Path) -> None:
    """Wraps each handler of the module so that a call runs under its function's role."""
    by_handler: dict[str, list[Function]] = {}
    for function in TEMPLATE.functions.values():
        if function.code_dir == code_dir.resolve():
            by_handler.setdefault(function.handler.rpartition(".")[2], []).append(function)
    for name, functions in by_handler.items():
        handler = getattr(module, name, None)
        if handler is not None:
            setattr(module, name, _as_role(functions, handler))


def _as_role(functions: list[Function], handler: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(handler)
    def call(*args: Any) -> Any:
        if _roles is None:  # no embedded AWS in this test
            return handler(*args)
        return _roles.call_as(_deployed_as(functions).logical_id, handler, *args)

    return call


def _deployed_as(functions: list[Function]) -> Function:
    """Of the functions that share this code, the one whose environment the test has set."""
    for function in functions:
        if all(os.environ.get(name) == value for name, value in function.environment.items()):
            return function
    return functions[0]


@pytest.fixture(scope="session", autouse=True)
def iam_usage_report() -> Iterator[None]:
    """With PSAP_IAM_USAGE=<file>, appends every new IAM decision of the run there (JSON
    Lines, as it happens): which role used which action on which resource, and whether it
    was allowed. The record least privilege is checked against."""
    target = os.environ.get("PSAP_IAM_USAGE")
    if not target:
        yield
        return
    seen: set[tuple[str, str, str, bool]] = set()
    report = open(target, "a", encoding="utf-8")  # noqa: SIM115 - open for the whole session

    def record(caller: str, action: str, resource: str, allowed: bool) -> None:
        if (caller, action, resource, allowed) not in seen:
            seen.add((caller, action, resource, allowed))
            decision = {
                "caller": caller,
                "action": action,
                "resource": resource,
                "allowed": allowed,
            }
            report.write(json.dumps(decision) + "\n")
            report.flush()

    stop = iam_enforcement.listen(record)
    yield
    stop()
    report.close()
