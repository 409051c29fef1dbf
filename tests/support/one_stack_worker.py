"""pytest-xdist scheduling for `make test`: the e2e tests on one worker, in collection order.

The e2e tests share one local stack, started once per worker that runs any of them, and some
must run after the others on that stack (tests/e2e/conftest.py, LAST). So they form one unit
of work, handed to one worker; the unit and integration tests are each a unit of their own,
spread over every worker. The API contract run is the exception: it works in a tenant of its
own and is the longest e2e file, so it is a unit of its own, on its own stack, beside the
others. xdist's `loadgroup` would express this with markers, but it renames node ids in a way
pytest 9 no longer reads, so the grouping is stated here, by path.
"""

from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

E2E_PREFIX = "tests/e2e/"
CONTRACT_PREFIX = "tests/e2e/test_api_contract.py::"


class OneStackWorker(LoadScopeScheduling):  # type: ignore[misc]  # xdist is untyped
    def _split_scope(self, nodeid: str) -> str:
        if nodeid.startswith(CONTRACT_PREFIX):
            return "e2e-contract"
        return "e2e" if nodeid.startswith(E2E_PREFIX) else nodeid


@pytest.hookimpl
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> OneStackWorker:
    return OneStackWorker(config, log)
