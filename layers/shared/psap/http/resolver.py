"""The resolver factory and the shared Lambda entrypoint of every API function.

A function's app.py declares its routes on `create_resolver()` and exposes
`handler = lambda_handler(app)`. The entrypoint binds tenant and request ids to the logs,
checks the operation's permission (psap.http.operations), then lets Powertools route,
validate and serialize.
"""

import json
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from psap.errors import NotAuthenticated
from psap.http.errors import install_error_handlers
from psap.http.operations import operation_for
from psap.http.principal import Principal, principal_from_event
from psap.observability import bind_request, logger, metrics, tracer

type LambdaHandler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]


def create_resolver() -> APIGatewayRestResolver:
    app = APIGatewayRestResolver(enable_validation=True)
    install_error_handlers(app)
    return app


def current_principal(app: APIGatewayRestResolver) -> Principal:
    principal = app.context.get("principal")
    if not isinstance(principal, Principal):
        raise NotAuthenticated()
    return principal


def serve(
    app: APIGatewayRestResolver, event: dict[str, Any], context: LambdaContext
) -> dict[str, Any]:
    request_context = event.get("requestContext") or {}
    operation = operation_for(str(event.get("httpMethod", "")), str(event.get("resource", "")))
    if operation is None:
        return _direct(404, "No such operation", "NOT_FOUND")
    app.context.clear()
    if not operation.public:
        try:
            principal = principal_from_event(event)
        except NotAuthenticated:
            logger.warning("request without authorizer context refused")
            return _direct(401, "Authentication required", "UNAUTHENTICATED")
        bind_request(principal.tenant_id, request_context.get("requestId"), principal.credential_id)
        if not principal.has_any(operation.any_of):
            logger.info("permission denied", extra={"operation": operation.operation_id})
            return _direct(403, operation.denial, "FORBIDDEN")
        app.append_context(principal=principal)
    logger.append_keys(operation=operation.operation_id)
    metrics.add_dimension(name="operation", value=operation.operation_id)
    metrics.add_metric(name="Requests", unit=MetricUnit.Count, value=1)
    return app.resolve(event, context)


def _direct(status: int, info: str, reason: str) -> dict[str, Any]:
    """A proxy answer for refusals made before Powertools sees the event."""
    return {
        "statusCode": status,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps({"info": info, "reason": reason}, ensure_ascii=False),
        "isBase64Encoded": False,
    }


def lambda_handler(app: APIGatewayRestResolver) -> LambdaHandler:
    """Wraps `serve` with the request logger, metrics flushing and tracing."""

    @logger.inject_lambda_context(
        correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True
    )
    @metrics.log_metrics
    @tracer().capture_lambda_handler
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        return serve(app, event, context)

    return handler
