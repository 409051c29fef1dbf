"""The Lambda entrypoint of `{base_url}/mcp` (Streamable HTTP, stateless, JSON responses).

API Gateway's partner authorizer has already refused missing, invalid and CAD tokens (401
ErrorInfo). Here, as in psap.http.resolver: the authorizer's principal (401 without it),
the operation of psap.http.operations, one audit line per request, the tenant on every log
line. POST carries JSON-RPC; GET (a server-to-client stream) and DELETE (ending a session)
answer 405, as the transport lets a server without streams or sessions answer.
"""

import json
from collections.abc import Callable, Mapping
from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from psap.audit.lines import AuditCaller, AuditedCall, audit_record
from psap.audit.sending import emit
from psap.auth.credentials import CredentialKind
from psap.clock import utc_now
from psap.errors import InvalidInput, NotAuthenticated
from psap.http.body import request_bytes
from psap.http.limit_fields import with_rate_limit_policy
from psap.http.operations import operation_for
from psap.http.principal import principal_from_event
from psap.mcp.protocol import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, RpcError
from psap.mcp.server import Audit, Reply, handle_post
from psap.observability import bind_request, logger, metrics

type LambdaHandler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]


def serve(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    method = str(event.get("httpMethod", "")).upper()
    operation = operation_for(method, str(event.get("resource", "")))
    if operation is None:
        return _error_info(404, "No such operation", "NOT_FOUND")
    logger.append_keys(operation=operation.operation_id)
    metrics.add_dimension(name="operation", value=operation.operation_id)
    metrics.add_metric(name="Requests", unit=MetricUnit.Count, value=1)
    try:
        principal = principal_from_event(event)
    except NotAuthenticated:
        logger.warning("request without authorizer context refused")
        return _error_info(401, "Authentication required", "UNAUTHENTICATED")
    if principal.kind != CredentialKind.PARTNER:
        return _error_info(401, "Authentication required", "UNAUTHENTICATED")
    request_context = event.get("requestContext") or {}
    bind_request(principal.tenant_id, request_context.get("requestId"), principal.credential_id)
    started = utc_now()
    reply = Reply(500, None, Audit())
    try:
        reply = _answer(method, principal, event)
        return with_rate_limit_policy(_proxy_answer(reply), request_context)
    except Exception:
        # A bug must not become API Gateway's 502: a JSON-RPC error, stack trace in the log.
        logger.exception("unexpected error in the MCP endpoint")
        reply = Reply(200, RpcError(INTERNAL_ERROR, "Internal error").body(None), Audit(status=500))
        return with_rate_limit_policy(_proxy_answer(reply), request_context)
    finally:
        audit = reply.audit
        emit(
            audit_record(
                {**event, "pathParameters": audit.resource_ids},
                AuditCaller(
                    tenant_id=principal.tenant_id,
                    credential_id=principal.credential_id,
                    principal=principal.label,
                    credential_kind=principal.kind.value,
                ),
                AuditedCall(
                    operation=audit.operation_id or operation.operation_id,
                    status=audit.status if audit.operation_id else reply.status,
                    started=started,
                    finished=utc_now(),
                ),
            )
        )


def _answer(method: str, principal: Any, event: Mapping[str, Any]) -> Reply:
    if method != "POST":
        return Reply(405, None, Audit())
    headers, repeated = _headers(event)
    content_type = headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json":
        error = RpcError(INVALID_REQUEST, "Content-Type must be application/json")
        return Reply(415, error.body(None), Audit())
    if not _accepts_json(headers.get("accept")):
        error = RpcError(INVALID_REQUEST, "Accept must admit application/json")
        return Reply(406, error.body(None), Audit())
    try:
        body = request_bytes(event.get("body"), event.get("isBase64Encoded"))
    except InvalidInput:
        return Reply(400, RpcError(PARSE_ERROR, "Parse error").body(None), Audit())
    return handle_post(principal, headers, repeated, body=body)


def _headers(event: Mapping[str, Any]) -> tuple[dict[str, str], frozenset[str]]:
    """Lowercase names with their last value, and the names that came more than once."""
    single = event.get("headers") or {}
    headers = {str(name).lower(): str(value) for name, value in single.items()}
    repeated = set()
    for name, values in (event.get("multiValueHeaders") or {}).items():
        if isinstance(values, list) and values:
            headers[str(name).lower()] = str(values[-1])
            if len(values) > 1:
                repeated.add(str(name).lower())
    return headers, frozenset(repeated)


def _accepts_json(accept: str | None) -> bool:
    if accept is None:
        return True  # no preference stated
    kinds = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    return bool(kinds & {"application/json", "application/*", "*/*"})


def _proxy_answer(reply: Reply) -> dict[str, Any]:
    if reply.status == 405:
        answer = _error_info(
            405,
            "The MCP endpoint is stateless: POST one JSON-RPC message per request",
            "METHOD_NOT_ALLOWED",
        )
        answer["headers"]["Allow"] = "POST"
        return answer
    if reply.body is None:
        return {"statusCode": reply.status, "headers": {}, "body": "", "isBase64Encoded": False}
    return {
        "statusCode": reply.status,
        "headers": {"Content-Type": "application/json", "Cache-Control": "no-store"},
        "body": _compact(reply.body),
        "isBase64Encoded": False,
    }


def _compact(body: Mapping[str, Any]) -> str:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def _error_info(status: int, info: str, reason: str) -> dict[str, Any]:
    return {
        "statusCode": status,
        "headers": {"Content-Type": "application/json"},
        "body": _compact({"info": info, "reason": reason}),
        "isBase64Encoded": False,
    }


def mcp_handler() -> LambdaHandler:
    """`serve` with the request logger and metrics flushing, as psap.http.resolver wraps."""

    @logger.inject_lambda_context(
        correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True
    )
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        return serve(event, context)

    return handler
