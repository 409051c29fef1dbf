"""Fixtures of the integration tests (the harnesses and builders they use live in
tests/support/, one module per area).

- `api`: the handler harness a test module names with
  `pytestmark = pytest.mark.harness(api=KnowledgeApi)` (any HandlerHarness), fresh for each
  test, on the in-process moto (or on the moto server when the test asks for `aws_server`).
  A module that needs more (a tenant, a user, an environment) overrides `api`, taking `api`.
- `cad_aws`, `cad`, `receiver`, `fake_clock`: the CAD path's functions in-process, a CAD's
  HTTP receiver on loopback, and a clock the test moves (retry waits are hours).
- `admin_env`, `admin`: the tenant admin API's functions, with two tenants.
"""

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

import pytest

from local import moto_queries
from local.aws import serialize_dynamodb_requests
from psap import clock
from psap.auth import store as auth_store
from tests.support.admin import AdminApi
from tests.support.cad import CAD_FUNCTIONS, TEMPLATE, CadFunctions, forget_caches
from tests.support.clock import Clock
from tests.support.harness import HandlerHarness
from tests.support.receiver import Receiver


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "harness(api=<HandlerHarness class>): the class the `api` fixture builds"
    )


@pytest.fixture
def api(
    request: pytest.FixtureRequest,
    import_function: Callable[[str], ModuleType],
    load_event: Callable[[str], dict[str, Any]],
    lambda_context: Any,
) -> HandlerHarness:
    """A fresh harness of the class the module's `harness` mark names."""
    mark = request.node.get_closest_marker("harness")
    if mark is None or "api" not in mark.kwargs:
        pytest.fail("the `api` fixture needs `pytestmark = pytest.mark.harness(api=<class>)`")
    harness: type[HandlerHarness] = mark.kwargs["api"]
    if "aws_server" not in request.fixturenames:
        request.getfixturevalue("aws")
    return harness(import_function, load_event, lambda_context)


@pytest.fixture
def fake_clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    ticking = Clock(datetime.now(UTC).replace(microsecond=0))
    monkeypatch.setattr(clock, "utc_now", ticking)
    return ticking


@pytest.fixture
def cad_aws(aws: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto with the template's tables and queues, the CAD functions' own environment, and
    every per-container cache emptied (clients, connectors, secrets, kept-alive sockets)."""
    for function in CAD_FUNCTIONS:
        for name, value in TEMPLATE.functions[function].environment.items():
            monkeypatch.setenv(name, value)
    # Receivers in these tests listen on loopback over http: the local-dev allowance.
    monkeypatch.setenv("WEBHOOK_LOCAL_DEV", "true")
    # A delivery job re-arms deliveries on several threads: DynamoDB's transactions are
    # serializable, in-process moto's are not (the embedded AWS serializes them the same way).
    serialize_dynamodb_requests()
    # And answer a Query in O(page) as the embedded AWS does (plain moto sorts the whole
    # table per Query: an outage's 20,000 held deliveries made each one take seconds).
    indexed_queries_as_the_embedded_aws()
    forget_caches()
    yield
    forget_caches()


def indexed_queries_as_the_embedded_aws() -> None:
    from moto.dynamodb.models.table import Table

    # Only over moto's own Query: a partition meter wrapping it stays as it is (and plain).
    if Table.query is moto_queries.plain_query():
        moto_queries.install()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.close()


@pytest.fixture
def cad(
    cad_aws: None,
    import_function: Callable[[str], ModuleType],
    load_event: Callable[[str], dict[str, Any]],
    *,
    lambda_context: Any,
) -> CadFunctions:
    return CadFunctions(import_function, load_event, lambda_context)


@pytest.fixture
def admin_env(cad_aws: None, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """moto, every admin function's own environment, and two tenants in the auth table."""
    for function in TEMPLATE.functions.values():
        if function.code_dir.name.startswith("admin_"):
            for name, value in function.environment.items():
                monkeypatch.setenv(name, value)
    monkeypatch.setenv("WEBHOOK_LOCAL_DEV", "true")  # receivers here listen on loopback
    first = auth_store.create_tenant("Riverside County 911").tenant_id
    second = auth_store.create_tenant("Lakeshore 911").tenant_id
    return first, second


@pytest.fixture
def admin(
    admin_env: tuple[int, int],
    import_function: Callable[[str], ModuleType],
    load_event: Callable[[str], dict[str, Any]],
    *,
    lambda_context: Any,
) -> AdminApi:
    return AdminApi(import_function, load_event, lambda_context, tenant=admin_env[0])
