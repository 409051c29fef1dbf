"""The one place where errors become HTTP: every error body is ErrorInfo (info, reason).

Domain exceptions map to 4xx by type. A failing data store is 503. Anything unexpected is
500 with a generic body; its stack trace goes to the log only, never to the caller.
"""

import json
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError

from psap.errors import (
    Conflict,
    DomainError,
    IdempotencyKeyReused,
    InvalidInput,
    NotAuthenticated,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    RateLimited,
    StoreUnavailable,
    UnsupportedMediaType,
)
from psap.observability import logger

_STATUS_BY_ERROR: tuple[tuple[type[DomainError], int], ...] = (
    (InvalidInput, 400),
    (NotAuthenticated, 401),
    (PermissionDenied, 403),
    (NotFound, 404),
    (Conflict, 409),
    (PayloadTooLarge, 413),
    (UnsupportedMediaType, 415),
    (IdempotencyKeyReused, 422),
    (RateLimited, 429),
)


def error_response(status: int, info: str, reason: str) -> Response[str]:
    return Response(
        status_code=status,
        content_type="application/json",
        body=json.dumps({"info": info, "reason": reason}, ensure_ascii=False),
    )


def status_for(error: DomainError) -> int:
    for error_type, status in _STATUS_BY_ERROR:
        if isinstance(error, error_type):
            return status
    return 400


def describe_validation_error(error: RequestValidationError) -> str:
    """Names the parameter (or body field) that failed, e.g. `Invalid parameter 'size': ...`."""
    problems = []
    for detail in error.errors():
        if detail.get("type") == "json_invalid":
            problem = (detail.get("ctx") or {}).get("error", "malformed")
            problems.append(f"The request body is not valid JSON: {problem}")
            continue
        location = [str(part) for part in detail.get("loc", ())]
        where, path = (location[0], location[1:]) if location else ("request", [])
        field = ".".join(path) or where
        kind = "field" if where == "body" else "parameter"
        problems.append(f"Invalid {kind} '{field}': {detail.get('msg', 'is not valid')}")
    return "; ".join(problems) or "The request is not valid"


def install_error_handlers(app: APIGatewayRestResolver) -> None:
    @app.exception_handler(RequestValidationError)
    def invalid_request(error: RequestValidationError) -> Response[str]:
        return error_response(400, describe_validation_error(error), "INVALID_PARAMETER")

    @app.exception_handler(DomainError)
    def domain_error(error: DomainError) -> Response[str]:
        answer = error_response(status_for(error), error.info, error.reason)
        if isinstance(error, RateLimited):
            answer.headers["Retry-After"] = str(error.retry_after_seconds)
        return answer

    @app.exception_handler(StoreUnavailable)
    def store_unavailable(error: StoreUnavailable) -> Response[str]:
        logger.exception("data store unavailable")
        return error_response(
            503, "The service is temporarily unavailable; retry later", "SERVICE_UNAVAILABLE"
        )

    @app.exception_handler(Exception)
    def unexpected(error: Exception) -> Response[str]:
        logger.exception("unexpected error")
        return error_response(500, "The service could not complete the request", "INTERNAL_ERROR")

    @app.not_found
    def no_route(error: Any) -> Response[str]:
        return error_response(404, "No such operation", "NOT_FOUND")
