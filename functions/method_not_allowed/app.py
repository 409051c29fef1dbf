"""Every resource's ANY method: a method the resource does not declare gets 405 and `Allow`.

Without it API Gateway answers such a request with its MISSING_AUTHENTICATION_TOKEN gateway
response, a 404 that tells a client nothing about the methods that exist. The method runs
without the authorizer: the answer names only what the public OpenAPI document says, for
every caller alike, and costs no authorizer call.
"""

from typing import Any

from psap.http.methods import undeclared_method_answer


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    return undeclared_method_answer(
        str(event.get("httpMethod", "")), str(event.get("resource", ""))
    )
