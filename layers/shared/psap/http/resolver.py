"""The resolver factory and the shared Lambda entrypoint of every API function.

A function's app.py declares its routes on `create_resolver()` and exposes
`handler = lambda_handler(app)`. The entrypoint binds tenant and request ids to the logs,
re-reads the credential where the operation asks for it (the tenant admin API), checks the
operation's permission (psap.http.operations), then lets Powertools route, validate and
serialize. Every call of a tenant leaves one audit record (psap.audit.sending).
"""

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from psap.audit.changes import take_changes
from psap.audit.lines import AuditCaller, AuditedCall, audit_record
from psap.audit.sending import emit
from psap.auth.store import credential_in_force
from psap.clock import utc_now
from psap.console.paths import api_resource, is_console_api
from psap.errors import (
    DomainError,
    InvalidInput,
    InvalidParameter,
    NotAuthenticated,
    StoreUnavailable,
)
from psap.http.body import decode_body
from psap.http.errors import install_error_handlers, status_for
from psap.http.limit_fields import with_rate_limit_policy
from psap.http.methods import direct_error_answer, undeclared_method_answer
from psap.http.operations import Operation, operation_for
from psap.http.principal import Principal, principal_from_event
from psap.observability import bind_request, detailed_tracing, logger, metrics, tracer
from psap.text import text_problem

type LambdaHandler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]


def create_resolver() -> APIGatewayRestResolver:
    app = APIGatewayRestResolver(enable_validation=True)
    install_error_handlers(app)
    return app


def create_light_resolver() -> APIGatewayRestResolver:
    """A resolver without Powertools' OpenAPI validation, which imports pydantic: its routes
    read their query with psap.http.query and answer plain JSON (docs/design.md, "The light
    GET path"). Everything else of the entrypoint is the same."""
    app = APIGatewayRestResolver()
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
    if is_console_api(str(event.get("resource", ""))):
        # The console's route to an admin operation: the same function, routes and checks.
        event = {
            **event,
            "resource": api_resource(str(event["resource"])),
            "path": api_resource(str(event.get("path", ""))),
        }
    operation = operation_for(str(event.get("httpMethod", "")), str(event.get("resource", "")))
    if operation is None:
        return undeclared_method_answer(
            str(event.get("httpMethod", "")), str(event.get("resource", ""))
        )
    app.context.clear()
    take_changes()  # nothing noted by an earlier request may reach this one's record
    # Every request counts, refused ones included, per operation.
    logger.append_keys(operation=operation.operation_id)
    metrics.add_dimension(name="operation", value=operation.operation_id)
    metrics.add_metric(name="Requests", unit=MetricUnit.Count, value=1)
    if operation.public:
        return _answer(app, operation, event, context=context)
    try:
        principal = principal_from_event(event)
    except NotAuthenticated:
        logger.warning("request without authorizer context refused")
        return direct_error_answer(401, "Authentication required", "UNAUTHENTICATED")
    request_context = event.get("requestContext") or {}
    bind_request(principal.tenant_id, request_context.get("requestId"), principal.credential_id)
    started = utc_now()
    status = 500  # what the caller sees if the route raises (API Gateway answers 502)
    try:
        response = _authorized(app, operation, principal, event=event, context=context)
        status = int(response.get("statusCode", 500))
        return with_rate_limit_policy(response, request_context)
    finally:
        # Every call of a tenant is audited, refusals included: one message to the audit queue.
        emit(
            audit_record(
                event,
                AuditCaller(
                    tenant_id=principal.tenant_id,
                    credential_id=principal.credential_id,
                    principal=principal.label,
                    credential_kind=principal.kind.value,
                ),
                AuditedCall(
                    operation=operation.operation_id,
                    status=status,
                    started=started,
                    finished=utc_now(),
                    changes=take_changes(),
                ),
            )
        )


def _authorized(
    app: APIGatewayRestResolver,
    operation: Operation,
    principal: Principal,
    *,
    event: dict[str, Any],
    context: LambdaContext,
) -> dict[str, Any]:
    if principal.kind != operation.credential_kind:
        # The authorizers already refuse this; a second check keeps a wrong policy harmless.
        logger.warning("credential of the wrong kind refused", extra={"kind": principal.kind})
        return _unauthenticated()
    if operation.rechecks_credential:
        try:
            in_force = _still_in_force(principal)
        except StoreUnavailable:
            logger.exception("data store unavailable")
            return direct_error_answer(
                503, "The service is temporarily unavailable; retry later", "SERVICE_UNAVAILABLE"
            )
        if not in_force:
            logger.info("revoked or expired credential refused before its cached policy ran out")
            return _unauthenticated()
    if not principal.has_any(operation.any_of):
        logger.info("permission denied", extra={"operation": operation.operation_id})
        return direct_error_answer(403, operation.denial, "FORBIDDEN")
    app.append_context(principal=principal)
    return _answer(app, operation, event, context=context)


def _unauthenticated() -> dict[str, Any]:
    """The spec's 401, with the header API Gateway's UNAUTHORIZED response carries."""
    answer = direct_error_answer(401, "Authentication required", "UNAUTHENTICATED")
    answer["headers"]["WWW-Authenticate"] = "Bearer"
    return answer


def _still_in_force(principal: Principal) -> bool:
    """The authorizer's answer may be ReauthorizeEvery seconds old: read the credential as it
    stands now (one strongly consistent GetItem)."""
    credential = credential_in_force(principal.tenant_id, principal.credential_id)
    return credential is not None and credential.usable(principal.kind, utc_now())


def _answer(
    app: APIGatewayRestResolver,
    operation: Operation,
    event: dict[str, Any],
    *,
    context: LambdaContext,
) -> dict[str, Any]:
    try:
        check_parameters(event)
        if operation.no_query is not None:
            refuse_query(event, operation.no_query)
        if operation.body is not None:
            # Refused before Powertools parses and validates a body of any size or depth.
            text = decode_body(event, operation.body)
            if text is not None:
                event = {**event, "body": text, "isBase64Encoded": False}
    except DomainError as refused:
        return direct_error_answer(status_for(refused), refused.info, refused.reason)
    return app.resolve(event, context)


def check_parameters(event: dict[str, Any]) -> None:
    """The text policy on every path and query parameter (psap.text): 400 naming it."""
    for where in ("pathParameters", "multiValueQueryStringParameters", "queryStringParameters"):
        for name, values in (event.get(where) or {}).items():
            for value in values if isinstance(values, list) else [values]:
                problem = text_problem(str(name)) or text_problem(str(value))
                if problem is not None:
                    raise InvalidParameter(str(name)[:100], problem)


def refuse_query(event: dict[str, Any], hint: str) -> None:
    """400 for an operation that takes no query parameter: dropped, it would look accepted."""
    names = sorted(event.get("multiValueQueryStringParameters") or {}) or sorted(
        event.get("queryStringParameters") or {}
    )
    if names:
        listed = ", ".join(str(name) for name in names)[:200]
        raise InvalidInput(f"This operation takes no query parameters ({listed}): {hint}")


def lambda_handler(app: APIGatewayRestResolver) -> LambdaHandler:
    """Wraps `serve` with the request logger, metrics flushing and tracing."""

    def serve_request(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        return serve(app, event, context)

    traced = tracer().capture_lambda_handler(serve_request) if detailed_tracing() else serve_request

    @logger.inject_lambda_context(
        correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True
    )
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        return traced(event, context)

    return handler
