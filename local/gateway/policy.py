"""IAM policy evaluation as API Gateway applies an authorizer's policy to one methodArn."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
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
