"""The request-limit fields every answer of a limited operation carries (psap.budgets)."""

from typing import Any


def with_rate_limit_policy(
    response: dict[str, Any], request_context: dict[str, Any]
) -> dict[str, Any]:
    """Every answer of a limited operation says its budget's policy (RateLimit-Policy, as the
    authorizer named it for this tenant and operation: docs/limits.md). The remaining count
    is API Gateway's and is not exposed to the function, so `RateLimit` is on the 429s the
    gateway answers, not here."""
    policy = (request_context.get("authorizer") or {}).get("rateLimitPolicy")
    if not policy:
        return response
    multi = response.get("multiValueHeaders")
    if isinstance(multi, dict):
        multi["RateLimit-Policy"] = [str(policy)]
    else:
        response["headers"] = {**(response.get("headers") or {}), "RateLimit-Policy": str(policy)}
    return response
