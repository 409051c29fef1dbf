"""API Gateway's throttles: the stage's per-method buckets and the usage plans' per-key ones.

API Gateway keeps token buckets (https://docs.aws.amazon.com/apigateway/latest/developerguide/
api-gateway-request-throttling.html): a bucket holds at most `burst` tokens, refills at `rate`
tokens per second, starts full, and a request that finds it empty is THROTTLED (429). The
stage's default method throttling (MethodSettings on /*/*) is a bucket per method for every
caller together, taken before the authorizer; a usage plan gives each API key a bucket per
method (ApiStages[].Throttle, "resourcePath/METHOD"), or one per key (the plan's Throttle).

The usage plans and keys live in the embedded AWS (the template's plans are created there at
start-up, and `psap-admin tenant limits set` changes them as it would on AWS); the gateway
reads them at most every REFRESH_SECONDS, so a change takes effect within that time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from local.template import Throttle

REFRESH_SECONDS: Final = 2.0
# A key not found is looked up again once this long after the last read: a tenant created a
# moment ago is served at once, and an unknown key cannot make the gateway read every time.
MISS_REFRESH_SECONDS: Final = 0.25


class TokenBucket:
    def __init__(self, throttle: Throttle, now: float) -> None:
        self.throttle = throttle
        self._tokens = float(throttle.burst)
        self._at = now

    def retune(self, throttle: Throttle) -> None:
        """A changed limit keeps what is left, capped by the new burst."""
        self.throttle = throttle
        self._tokens = min(self._tokens, float(throttle.burst))

    def take(self, now: float) -> bool:
        elapsed = max(0.0, now - self._at)
        self._at = now
        self._tokens = min(float(self.throttle.burst), self._tokens + elapsed * self.throttle.rate)
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False


class Buckets:
    """Token buckets by key, created full on first use; thread-safe."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[tuple[str, ...], TokenBucket] = {}
        self._lock = threading.Lock()

    def take(self, key: tuple[str, ...], throttle: Throttle) -> bool:
        with self._lock:
            now = self._clock()
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = self._buckets[key] = TokenBucket(throttle, now)
            elif bucket.throttle != throttle:
                bucket.retune(throttle)
            return bucket.take(now)


@dataclass(frozen=True)
class KeyPlan:
    """What a usage plan gives one API key on one API stage."""

    plan_id: str
    key_id: str
    method_throttles: Mapping[str, Throttle]
    throttle: Throttle | None

    def throttle_for(self, method_key: str) -> Throttle | None:
        return self.method_throttles.get(method_key, self.throttle)


class UsagePlanDirectory:
    """The embedded AWS's API keys and usage plans, as the gateway needs them: for a key value
    and an API stage, the plan it is in. Refreshed at most every REFRESH_SECONDS."""

    def __init__(
        self,
        client_factory: Callable[[], Any],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client_factory = client_factory
        self._client: Any = None
        self._clock = clock
        self._lock = threading.Lock()
        self._read_at = float("-inf")
        self._plans: dict[tuple[str, str, str], KeyPlan] = {}  # (key value, api id, stage)

    def plan_for(self, key_value: str, api_id: str, stage: str) -> KeyPlan | None:
        wanted = (key_value, api_id, stage)
        missing = wanted not in self._plans
        age = self._clock() - self._read_at
        stale = age >= REFRESH_SECONDS or (missing and age >= MISS_REFRESH_SECONDS)
        # One request re-reads; the others answer from the plans read before instead of
        # queueing behind it, unless they need a key those plans lack.
        if stale and self._lock.acquire(blocking=missing):
            try:
                if self._clock() - self._read_at >= min(age, MISS_REFRESH_SECONDS):
                    self._plans = self._read()
                    self._read_at = self._clock()
            finally:
                self._lock.release()
        return self._plans.get(wanted)

    def _read(self) -> dict[tuple[str, str, str], KeyPlan]:
        if self._client is None:  # one client: making a boto3 client costs ~50 ms of CPU
            self._client = self._client_factory()
        client = self._client
        keys = {
            key["id"]: key
            for page in client.get_paginator("get_api_keys").paginate(includeValues=True)
            for key in page.get("items", [])
            if key.get("enabled", True)
        }
        plans: dict[tuple[str, str, str], KeyPlan] = {}
        for page in client.get_paginator("get_usage_plans").paginate():
            for plan in page.get("items", []):
                members = [
                    member["id"]
                    for member_page in client.get_paginator("get_usage_plan_keys").paginate(
                        usagePlanId=plan["id"]
                    )
                    for member in member_page.get("items", [])
                ]
                plan_throttle = _throttle(plan.get("throttle"))
                for stage in plan.get("apiStages", []):
                    method_throttles = {
                        name: throttle
                        for name, limits in (stage.get("throttle") or {}).items()
                        if (throttle := _throttle(limits)) is not None
                    }
                    for key_id in members:
                        if key_id in keys:
                            plans[(keys[key_id]["value"], stage["apiId"], stage["stage"])] = (
                                KeyPlan(plan["id"], key_id, method_throttles, plan_throttle)
                            )
        return plans


def _throttle(limits: Mapping[str, Any] | None) -> Throttle | None:
    if not limits or ("rateLimit" not in limits and "burstLimit" not in limits):
        return None
    return Throttle(
        rate=float(limits.get("rateLimit", 10_000)), burst=int(limits.get("burstLimit", 5_000))
    )
