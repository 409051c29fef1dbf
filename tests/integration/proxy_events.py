"""Shaping a sample API Gateway proxy event (events/*.json) for one in-process call, as the
gateway would fill it after the authorizer, and reading the proxy answer back."""

import json
from typing import Any


def with_path(event: dict[str, Any], path: dict[str, str]) -> None:
    """Path parameters, and the concrete path the client called."""
    event["pathParameters"] = path
    concrete = str(event["resource"])
    for name, value in path.items():
        concrete = concrete.replace("{" + name + "}", value)
    event["path"] = concrete


def with_query(event: dict[str, Any], query: dict[str, str] | None) -> None:
    event["queryStringParameters"] = query or None
    event["multiValueQueryStringParameters"] = (
        {name: [value] for name, value in query.items()} if query else None
    )


def with_caller(
    event: dict[str, Any], tenant: int, permissions: str, credential_id: str | None = None
) -> None:
    """What the authorizer put in the request context for this credential."""
    authorizer = event["requestContext"]["authorizer"]
    authorizer.update(tenantId=str(tenant), permissions=permissions)
    if credential_id is not None:
        authorizer["credentialId"] = credential_id


def answer_of(answer: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
    """Status, parsed JSON body, and headers (multi-value ones by their last value)."""
    headers = dict(answer.get("headers") or {})
    for name, values in (answer.get("multiValueHeaders") or {}).items():
        headers[name] = values[-1]
    return answer["statusCode"], json.loads(answer.get("body") or "null"), headers
