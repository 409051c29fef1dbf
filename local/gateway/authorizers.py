"""Lambda authorizers: IAM policy evaluation, answer validation and the answer cache."""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from local.template import ACCOUNT_ID, REGION, RestApi


class PolicyDecision(Enum):
    ALLOW = "ALLOW"
    EXPLICIT_DENY = "EXPLICIT_DENY"
    IMPLICIT_DENY = "IMPLICIT_DENY"


@functools.lru_cache(maxsize=1024)
def _wildcard(pattern: str, *, ignore_case: bool) -> re.Pattern[str]:
    expression = "".join(
        ".*" if char == "*" else "." if char == "?" else re.escape(char) for char in pattern
    )
    return re.compile(expression, re.IGNORECASE | re.DOTALL if ignore_case else re.DOTALL)


def wildcard_matches(pattern: str, value: str, *, ignore_case: bool = False) -> bool:
    """IAM wildcards: '*' is any run of characters (slashes included), '?' is one character."""
    return _wildcard(pattern, ignore_case=ignore_case).fullmatch(value) is not None


def _as_list(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def evaluate_policy(document: Mapping[str, Any], method_arn: str) -> PolicyDecision:
    """IAM evaluation for execute-api:Invoke on one methodArn: an explicit Deny wins."""
    allowed = False
    for statement in _statements(document):
        actions = _as_list(statement["Action"])
        if not any(
            wildcard_matches(action, "execute-api:Invoke", ignore_case=True) for action in actions
        ):
            continue
        if not any(
            wildcard_matches(resource, method_arn) for resource in _as_list(statement["Resource"])
        ):
            continue
        if statement["Effect"] == "Deny":
            return PolicyDecision.EXPLICIT_DENY
        allowed = True
    return PolicyDecision.ALLOW if allowed else PolicyDecision.IMPLICIT_DENY


def _statements(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    statement = document["Statement"]
    return [statement] if isinstance(statement, dict) else list(statement)


def method_arn(api: RestApi, method: str, path: str) -> str:
    """arn:aws:execute-api:<region>:<account>:<apiId>/<stage>/<METHOD>/<path without />."""
    prefix = f"arn:aws:execute-api:{REGION}:{ACCOUNT_ID}:{api.api_id}"
    return f"{prefix}/{api.stage_name}/{method}/{path.lstrip('/')}"


class AuthorizerAnswerError(ValueError):
    """The authorizer returned something API Gateway cannot use (-> 500)."""


@dataclass(frozen=True)
class AuthorizerAnswer:
    principal_id: str | None
    policy: Mapping[str, Any]
    context: Mapping[str, str]


def _string_or_strings(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, list) and bool(value) and all(isinstance(item, str) for item in value)
    )


def _context_value(value: Any) -> str:
    # API Gateway hands authorizer context values to the integration as strings.
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    raise AuthorizerAnswerError("context values must be strings, numbers or booleans")


def parse_authorizer_answer(payload: Any) -> AuthorizerAnswer:
    """Validate an authorizer's output the way API Gateway does before using it."""
    if not isinstance(payload, dict):
        raise AuthorizerAnswerError("the answer is not a JSON object")
    document = payload.get("policyDocument")
    if not isinstance(document, dict) or "Statement" not in document:
        raise AuthorizerAnswerError("policyDocument with a Statement is required")
    statements = document["Statement"]
    if not isinstance(statements, dict | list):
        raise AuthorizerAnswerError("Statement must be an object or a list")
    for statement in [statements] if isinstance(statements, dict) else statements:
        if not isinstance(statement, dict) or statement.get("Effect") not in ("Allow", "Deny"):
            raise AuthorizerAnswerError("every statement needs Effect Allow or Deny")
        if not _string_or_strings(statement.get("Action")):
            raise AuthorizerAnswerError("every statement needs an Action")
        if not _string_or_strings(statement.get("Resource")):
            raise AuthorizerAnswerError("every statement needs a Resource")
    context = payload.get("context") or {}
    if not isinstance(context, dict):
        raise AuthorizerAnswerError("context must be a JSON object")
    principal = payload.get("principalId")
    return AuthorizerAnswer(
        principal_id=None if principal is None else str(principal),
        policy=document,
        # A null value carries nothing an integration could read; it is left out.
        context={
            str(key): _context_value(value) for key, value in context.items() if value is not None
        },
    )


class AuthorizerCache:
    """Authorizer answers per (API, authorizer, identity values), kept ReauthorizeEvery seconds."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._entries: dict[tuple[str, ...], tuple[float, AuthorizerAnswer]] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[str, ...]) -> AuthorizerAnswer | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            expires_at, answer = entry
            if self._clock() >= expires_at:
                del self._entries[key]
                return None
            return answer

    def put(self, key: tuple[str, ...], answer: AuthorizerAnswer, ttl_seconds: int) -> None:
        if ttl_seconds <= 0:
            return
        with self._lock:
            self._entries[key] = (self._clock() + ttl_seconds, answer)
