"""Named fault points: where the local fault injector (local/faults.py) may stop a function.

`fault_point("cad.after_incident_write")` marks a place between two effects of a consumer,
where a crash or a timeout tests that a redelivered message ends as a clean run would
(docs/faults.md). Without an injector it is a call that checks one module global and returns:
nothing is read, imported or configured on Lambda's cold path. The local stack's worker
process installs the injector's hook (local/lambda_worker.py) only when the stack was started
with `--faults`; on Lambda (AWS_EXECUTION_ENV is set) installing one is refused, so a
deployed function can never be made to fail on purpose, whatever its environment says.
"""

import os
from collections.abc import Callable

type FaultHook = Callable[[str], None]

# The installed hook, if any (a list, so install() needs no `global`).
_hooks: list[FaultHook] = []


class FaultInjectionRefused(RuntimeError):
    """A fault injector was to be installed in a deployed function."""


def fault_point(name: str) -> None:
    """A named place where the injector may crash, stall or delay this invocation."""
    if _hooks:
        _hooks[0](name)


def install(hook: FaultHook | None) -> None:
    """Sets (or with None removes) the hook every fault point calls; local and tests only."""
    if hook is not None and os.environ.get("AWS_EXECUTION_ENV", "").startswith("AWS_Lambda"):
        raise FaultInjectionRefused("fault injection is for the local stack only")
    _hooks[:] = [hook] if hook is not None else []
