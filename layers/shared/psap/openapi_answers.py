"""OpenAPI answers that several operations declare alike (the admin APIs' `responses=`)."""

from typing import Any

ERROR_INFO: dict[str, Any] = {
    "application/json": {"schema": {"$ref": "#/components/schemas/ErrorInfo"}}
}
RATE_LIMITED: dict[int, Any] = {
    429: {
        "description": "Rate limit reached: ErrorInfo, and Retry-After in seconds",
        "content": ERROR_INFO,
    }
}


def answers(status: int, description: str, model: Any, *, errors: dict[int, Any]) -> dict[int, Any]:
    """An operation's success answer (its model) and its own error answers (ErrorInfo); the
    common errors (400, 401, 403, 404, 413, 415, 503) are added by tools/openapi.py."""
    success = {"description": description, "content": {"application/json": {"model": model}}}
    return {status: success, **errors}
