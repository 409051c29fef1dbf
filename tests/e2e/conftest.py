"""The local stack as a real process, for tests that speak HTTP to it.

`stack` starts `python -m local.stack` once per session on free ports, waits until its state
file exists and its port answers, yields the parsed state (baseUrl, awsEndpointUrl,
resources, demo tenants) and stops it with SIGINT, as Ctrl-C would.
`stack_log` reads the stack's log file so far (start-up, request lines, function logs);
the console (credentials, curl lines) is `console.log` beside it.
"""

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from local.stack_process import RunningStack, StackDidNotStart, running_stack

# Start-up seeds two demo tenants and builds a search index: a busy 2-core machine needs minutes.
START_TIMEOUT_SECONDS = 420


@pytest.fixture(scope="session")
def stack_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    try:
        with running_stack(
            tmp_path_factory.mktemp("stack"), timeout=START_TIMEOUT_SECONDS
        ) as running:
            yield running
    except StackDidNotStart as failure:
        pytest.fail(str(failure), pytrace=False)


@pytest.fixture(scope="session")
def stack(stack_process: RunningStack) -> dict[str, Any]:
    return stack_process.state


@pytest.fixture(scope="session")
def stack_state_file(stack_process: RunningStack) -> Path:
    """The running stack's state file (what .local/stack.json is for `make run`)."""
    return stack_process.state_file


@pytest.fixture
def stack_log(stack_process: RunningStack) -> Callable[[], str]:
    log_file = stack_process.log_file
    return lambda: log_file.read_text(errors="replace")


# Run after the others, in this order: they change the shared demo data (the sample events
# delete a knowledge entry and unpublish a card; the README's blocks upload media, add
# catalog items and a connector), which other e2e tests read as the demo seeded it.
LAST: tuple[str, ...] = ("test_sample_events.py", "test_readme.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Under pytest-xdist (make test) the e2e tests still run in this order, on one worker
    # (tests/support/one_stack_worker.py).
    first = [item for item in items if item.path.name not in LAST]
    items[:] = first + [item for name in LAST for item in items if item.path.name == name]
