"""The answer to a method a resource does not declare (RFC 9110 sections 9.3.7 and 15.5.6).

API Gateway routes such a request to the resource's `ANY` method (every resource of
template.yaml has one, a house rule of tools/lint_template.py), served by the
method_not_allowed function; the shared entrypoint answers the same way if one reaches it.
OPTIONS is answered 204 with the methods, any other method 405 with them in `Allow`.
"""

import json
from typing import Any

from psap.http.operations import methods_for


def undeclared_method_answer(method: str, resource: str) -> dict[str, Any]:
    """The proxy answer for `method` on `resource`, a path as template.yaml spells it."""
    allowed = ", ".join(methods_for(resource))
    if not allowed:
        return direct_error_answer(404, "No such operation", "NOT_FOUND")
    method = method.upper()
    if method == "OPTIONS":
        return {
            "statusCode": 204,
            "headers": {"Allow": allowed},
            "body": "",
            "isBase64Encoded": False,
        }
    answer = direct_error_answer(
        405, f"{method} is not a method of this resource; it has {allowed}", "METHOD_NOT_ALLOWED"
    )
    answer["headers"]["Allow"] = allowed
    return answer


def direct_error_answer(status: int, info: str, reason: str) -> dict[str, Any]:
    """An ErrorInfo proxy answer made without Powertools (here, and the shared entrypoint's
    refusals before Powertools sees the event)."""
    return {
        "statusCode": status,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps({"info": info, "reason": reason}, ensure_ascii=False),
        "isBase64Encoded": False,
    }
