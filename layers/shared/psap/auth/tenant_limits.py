"""A tenant's request budgets as the authorizers name them in their answers (psap.budgets):
the template's defaults, overridden by the tenant's own limits (written beside its profile by
`psap-admin tenant limits set`), read at most once per CACHE_SECONDS per warm container.

Light: the authorizers import it on their cold path (no pydantic, no boto3)."""

import functools
import os
import time
from collections.abc import Callable

from psap.budgets import Budget, RateLimit, parse_limits
from psap.config import ConfigurationError

CACHE_SECONDS = 10.0


@functools.cache
def default_limits() -> dict[Budget, RateLimit]:
    """The template's default budgets (its rate-limit parameters, TENANT_RATE_LIMITS)."""
    text = os.environ.get("TENANT_RATE_LIMITS")
    if not text:
        raise ConfigurationError("TENANT_RATE_LIMITS is not set (template.yaml sets it)")
    return parse_limits(text)


class TenantLimits:
    """`read_own(tenant_id)` gives the tenant's own limits text ("" when it has none)."""

    def __init__(
        self, read_own: Callable[[int], str], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._read_own = read_own
        self._clock = clock
        # Bounded by the number of tenants (at most one entry each).
        self._cache: dict[int, tuple[float, dict[Budget, RateLimit]]] = {}

    def of(self, tenant_id: int) -> dict[Budget, RateLimit]:
        now = self._clock()
        cached = self._cache.get(tenant_id)
        if cached is not None and now - cached[0] < CACHE_SECONDS:
            return cached[1]
        own = self._read_own(tenant_id)
        limits = {**default_limits(), **(parse_limits(own, partial=True) if own else {})}
        self._cache[tenant_id] = (now, limits)
        return limits
