"""Fixtures shared by every test layer.

- `lambda_environment`: the environment a deployed function sees, from template.yaml's
  Globals (so names cannot drift), plus dummy AWS credentials.
- `aws`: moto in-process (`mock_aws`) with the template's tables, queues and buckets.
- `aws_server`: a real moto server on loopback with the template's tables, for code that
  speaks HTTP itself (the authorizer's signed client).
- `load_event` and `import_function`: sample events from events/ and a function's app.py
  imported fresh, as Lambda imports it.
"""

import copy
import importlib.util
import json
import os
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from moto import mock_aws
from moto.server import ThreadedMotoServer

from local.aws import serialize_dynamodb_requests, table_definition
from local.template import StackTemplate, load_template
from psap.storage.dynamodb import dynamodb
from psap.storage.s3 import s3
from psap.storage.sqs import sqs

ROOT = Path(__file__).resolve().parent.parent
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
    environment.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
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


def _clear_clients() -> None:
    # Cached per warm container; a test's moto (or server endpoint) needs fresh ones.
    for cached in (dynamodb, s3, sqs):
        cached.cache_clear()


def _create_resources() -> None:
    """The template's tables, queues (with their redrive policies) and buckets."""
    _create_tables(dynamodb())
    for queue in TEMPLATE.queues.values():
        sqs().create_queue(
            QueueName=queue.name, Attributes={"VisibilityTimeout": str(queue.visibility_timeout)}
        )
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
        s3().create_bucket(Bucket=bucket.name)


@pytest.fixture
def aws(lambda_environment: dict[str, str]) -> Iterator[None]:
    with mock_aws():
        _clear_clients()
        _create_resources()
        yield
    _clear_clients()


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
    request = urllib.request.Request(f"{moto_server}/moto-api/reset", method="POST")
    urllib.request.urlopen(request, timeout=5).close()
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    _clear_clients()
    _create_resources()
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
        return module

    yield load
    for name in loaded:
        sys.modules.pop(name, None)
