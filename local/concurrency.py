"""Lambda's concurrency accounting: reserved concurrency per function, one account limit.

A function with ReservedConcurrentExecutions R runs at most R invocations at once, and those R
are set aside for it alone. Every other function shares what the reservations leave of the
account's limit. An invocation beyond either limit is throttled, never queued, as Lambda does:
a synchronous caller gets TooManyRequestsException with the reason Lambda gives.

Lambda refuses a reservation that would leave less than 100 of an account's (default 1 000)
concurrency unreserved; the local account keeps the same tenth for functions without one.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from typing import Final, Literal

from local.template import StackTemplate

ThrottleReason = Literal[
    "ReservedFunctionConcurrentInvocationLimitExceeded", "ConcurrentInvocationLimitExceeded"
]
RESERVED_LIMIT_EXCEEDED: Final[ThrottleReason] = "ReservedFunctionConcurrentInvocationLimitExceeded"
ACCOUNT_LIMIT_EXCEEDED: Final[ThrottleReason] = "ConcurrentInvocationLimitExceeded"

# Lambda's default account limit is 1 000. The local stack runs the template's plan as it is
# by default: workers start only when invocations overlap, so the limit costs nothing until
# it is reached, and a synchronous function's reservation (an authorizer's, the search's)
# must be compared with the same request rates as on AWS, not a tenth of them.
# `--concurrency-scale N` divides the account, every reservation and MaximumConcurrency by N
# (scale_concurrency), to see the caps bite with a handful of workers.
AWS_ACCOUNT_CONCURRENCY: Final = 1000
DEFAULT_CONCURRENCY_SCALE: Final = 1
DEFAULT_ACCOUNT_CONCURRENCY: Final = AWS_ACCOUNT_CONCURRENCY // DEFAULT_CONCURRENCY_SCALE
# Lambda keeps 100 of 1 000 unreserved: the same share of the local account.
UNRESERVED_SHARE: Final = 10


def _scaled(value: int | None, scale: int) -> int | None:
    # Rounded up: a reservation of 5 at scale 10 still reserves one execution, not none.
    return None if value is None else max(1, -(-value // scale)) if value > 0 else 0


def scale_concurrency(template: StackTemplate, scale: int) -> StackTemplate:
    """The template with every ReservedConcurrentExecutions and MaximumConcurrency divided by
    `scale` (rounded up), for a local account of 1 000 / scale."""
    if scale == 1:
        return template
    functions = {
        logical_id: dataclasses.replace(
            function,
            reserved_concurrency=_scaled(function.reserved_concurrency, scale),
            sqs_events=tuple(
                dataclasses.replace(
                    event, maximum_concurrency=_scaled(event.maximum_concurrency, scale)
                )
                for event in function.sqs_events
            ),
        )
        for logical_id, function in template.functions.items()
    }
    return dataclasses.replace(template, functions=functions)


def minimum_unreserved(account_limit: int) -> int:
    """What reservations must leave to the functions without one (at least 1)."""
    return max(1, account_limit // UNRESERVED_SHARE)


class ConcurrencyConfigurationError(ValueError):
    """Reservations the account cannot grant (Lambda refuses PutFunctionConcurrency so)."""


class AccountConcurrency:
    """Counts running invocations and decides, at the moment of an invoke, whether it may run."""

    def __init__(self, account_limit: int, reserved: Mapping[str, int]) -> None:
        if account_limit < 1:
            raise ConcurrencyConfigurationError("the account concurrency must be at least 1")
        total_reserved = sum(reserved.values())
        floor = minimum_unreserved(account_limit)
        if account_limit - total_reserved < floor:
            raise ConcurrencyConfigurationError(
                f"the template reserves {total_reserved} concurrent executions; an account"
                f" limit of {account_limit} must keep at least {floor} unreserved, so it needs"
                f" at least {total_reserved + floor} (--account-concurrency)"
            )
        self.account_limit = account_limit
        self.unreserved_limit = account_limit - total_reserved
        self._reserved = dict(reserved)
        self._running: dict[str, int] = {}
        self._unreserved_running = 0
        self._lock = threading.Lock()

    @classmethod
    def for_template(cls, template: StackTemplate, account_limit: int) -> AccountConcurrency:
        """The account with the template's reservations (ConcurrencyConfigurationError when
        they do not fit)."""
        return cls(
            account_limit,
            {
                function.logical_id: function.reserved_concurrency
                for function in template.functions.values()
                if function.reserved_concurrency is not None
            },
        )

    def try_acquire(self, function_id: str) -> ThrottleReason | None:
        """Take one unit of concurrency for an invocation; the reason when it is throttled."""
        with self._lock:
            refusal = self._refusal(function_id)
            if refusal is not None:
                return refusal
            self._running[function_id] = self._running.get(function_id, 0) + 1
            if function_id not in self._reserved:
                self._unreserved_running += 1
            return None

    def release(self, function_id: str) -> None:
        with self._lock:
            self._running[function_id] -= 1
            if function_id not in self._reserved:
                self._unreserved_running -= 1

    def has_headroom(self, function_id: str) -> bool:
        """Whether an invocation started now would run (a hint: another may take it first)."""
        with self._lock:
            return self._refusal(function_id) is None

    def running(self, function_id: str) -> int:
        with self._lock:
            return self._running.get(function_id, 0)

    def _refusal(self, function_id: str) -> ThrottleReason | None:
        reserved = self._reserved.get(function_id)
        if reserved is not None:
            if self._running.get(function_id, 0) >= reserved:
                return RESERVED_LIMIT_EXCEEDED
            return None
        if self._unreserved_running >= self.unreserved_limit:
            return ACCOUNT_LIMIT_EXCEEDED
        return None
