"""The gateway: a request routed, authorized, handed to its function and answered."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from local.gateway.authorizers import LambdaAuthorizers
from local.gateway.messages import HttpRequest, HttpResponse, Invoke, header_value
from local.gateway.proxy import (
    RequestFacts,
    build_proxy_event,
    proxy_response,
    request_time,
)
from local.gateway.responses import GatewayError, render_gateway_response
from local.gateway.routing import RouteMatch, Router
from local.gateway.throttling import Buckets, UsagePlanDirectory
from local.runtime import InvokeResult, LogSink, print_line
from local.template import RestApi, StackTemplate

_THROTTLED = GatewayError("THROTTLED", "Too Many Requests")
# API Gateway's answer when a method needs an API key and the request has none that a usage
# plan of the stage admits.
_NO_KEY = GatewayError("INVALID_API_KEY", "Forbidden")


@dataclass
class _Outcome:
    response: HttpResponse
    # How the request got past (or not) its authorizer, for the request log.
    auth: str = "none"


class ApiGateway:
    """Turns HTTP requests into function invokes, as API Gateway's REST API does."""

    def __init__(
        self,
        template: StackTemplate,
        invoke: Invoke,
        *,
        clock: Callable[[], float] = time.monotonic,
        log: LogSink = print_line,
        usage_plans: UsagePlanDirectory | None = None,
    ) -> None:
        self.router = Router(template)
        self._invoke = invoke
        self._log = log
        self.authorizers = LambdaAuthorizers(invoke, log, clock)
        # The stage's per-method buckets and the usage plans' per-key ones (throttling).
        self.buckets = Buckets(clock)
        self.usage_plans = usage_plans
        # Errors that match no route are answered with the first API's gateway responses.
        self._default_api = next(iter(template.apis.values()), None)

    def handle(self, request: HttpRequest) -> HttpResponse:
        started = time.monotonic()
        facts = RequestFacts.of(request)
        try:
            outcome = self._dispatch(facts)
        except Exception:  # a gateway bug must still answer the client, and show itself
            self._log(
                f"[gateway] failed on {facts.method} {request.target}:\n{traceback.format_exc()}"
            )
            error = GatewayError("DEFAULT_5XX", "Internal server error", 500)
            outcome = _Outcome(self._error(facts, self._default_api, error), auth="error")
        response = outcome.response
        response.headers.append(("x-amzn-RequestId", facts.request_id))
        response.headers.append(("x-amz-apigw-id", facts.extended_request_id))
        elapsed_ms = (time.monotonic() - started) * 1000
        self._log(
            f"{facts.method} {request.target} {response.status} {elapsed_ms:.0f}ms"
            f" requestId={facts.request_id} auth={outcome.auth}"
        )
        return response

    def _error(
        self,
        facts: RequestFacts,
        api: RestApi | None,
        error: GatewayError,
        *,
        resource: str = "",
        authorizer_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        variables = {
            "requestId": facts.request_id,
            "extendedRequestId": facts.extended_request_id,
            "httpMethod": facts.method,
            "path": facts.path,
            "resourcePath": resource,
            "identity.sourceIp": facts.source_ip,
            "identity.userAgent": header_value(facts.headers, "User-Agent") or "",
            "requestTime": request_time(facts.received_at),
            "requestTimeEpoch": str(int(facts.received_at.timestamp() * 1000)),
        }
        if api is not None:
            variables.update({"stage": api.stage_name, "apiId": api.api_id})
        for name, value in (authorizer_context or {}).items():
            if value is not None:
                variables[f"authorizer.{name}"] = str(value)
        return render_gateway_response(
            api if api is not None else self._default_api,
            error,
            context_variables=variables,
            request_headers=facts.headers,
        )

    def _dispatch(self, facts: RequestFacts) -> _Outcome:
        if facts.malformed_framing is not None:
            error = GatewayError("BAD_REQUEST_BODY", facts.malformed_framing, 400)
            return _Outcome(self._error(facts, None, error))
        if facts.body_too_large:
            error = GatewayError("REQUEST_TOO_LARGE", "Request Too Long")
            return _Outcome(self._error(facts, None, error))
        match = self.router.match(facts.method, facts.raw_path)
        if match is None:
            error = GatewayError("MISSING_AUTHENTICATION_TOKEN", "Missing Authentication Token")
            return _Outcome(self._error(facts, None, error))
        api = match.route.api
        resource = match.route.resource_path
        method_key = f"{resource}/{facts.method}"
        # The stage's method throttling comes first: it shields the authorizer too.
        if api.method_throttle is not None and not self.buckets.take(
            ("stage", api.api_id, method_key), api.method_throttle
        ):
            return _Outcome(
                self._error(facts, api, _THROTTLED, resource=resource), auth="throttled"
            )
        event = build_proxy_event(facts, match)
        outcome = _Outcome(HttpResponse(0, [], b""))
        usage_key: str | None = None
        context: dict[str, Any] = {}
        if match.route.event.authorizer is not None:
            authorizer = api.authorizers[match.route.event.authorizer]
            authorization = self.authorizers.authorize(facts, match, authorizer, event=event)
            outcome.auth = authorization.how
            if authorization.denial is not None:
                outcome.response = self._error(facts, api, authorization.denial, resource=resource)
                return outcome
            context = authorization.context
            usage_key = authorization.usage_identifier_key
            event["requestContext"]["authorizer"] = context
        if match.route.event.api_key_required:
            refusal = self._usage_plan_refusal(facts, api, method_key, authorizer_key=usage_key)
            if refusal is not None:
                outcome.response = self._error(
                    facts, api, refusal, resource=resource, authorizer_context=context
                )
                outcome.auth += "-throttled" if refusal is _THROTTLED else "-no-key"
                return outcome
            event["requestContext"]["identity"]["apiKey"] = usage_key
        result = self._invoke(match.route.function_id, event)
        outcome.response = self._integration_response(facts, api, match, result=result)
        return outcome

    def _usage_plan_refusal(
        self, facts: RequestFacts, api: RestApi, method_key: str, *, authorizer_key: str | None
    ) -> GatewayError | None:
        """The usage plan's check: a key a plan of this stage admits, and a token of its
        bucket for this method."""
        key = (
            authorizer_key
            if api.api_key_source == "AUTHORIZER"
            else header_value(facts.headers, "x-api-key")
        )
        if not key or self.usage_plans is None:
            return _NO_KEY
        plan = self.usage_plans.plan_for(key, api.api_id, api.stage_name)
        if plan is None:
            return _NO_KEY
        throttle = plan.throttle_for(method_key)
        if throttle is None:
            return None
        bucket = ("plan", plan.plan_id, plan.key_id, method_key)
        return None if self.buckets.take(bucket, throttle) else _THROTTLED

    def _integration_response(
        self, facts: RequestFacts, api: RestApi, match: RouteMatch, *, result: InvokeResult
    ) -> HttpResponse:
        resource = match.route.resource_path
        if result.throttled:
            # A throttled Lambda proxy integration is not passed on as a 429: API Gateway
            # answers 500 {"message": "Internal server error"} (DEFAULT_5XX), as AWS's
            # knowledge center says (repost.aws/knowledge-center/api-gateway-internal-server-error,
            # "Throttling occurs") and re:Post question QUfI6bsdd0SOiPeyimzxSkfQ observes.
            self._log(
                f"[gateway] {match.route.function_id} throttled: {result.error_type}"
                f" ({result.throttle_reason})"
            )
            error = GatewayError("DEFAULT_5XX", "Internal server error", 500)
            return self._error(facts, api, error, resource=resource)
        if result.status == "timeout":
            error = GatewayError("INTEGRATION_TIMEOUT", "Endpoint request timed out")
            return self._error(facts, api, error, resource=resource)
        if result.ok:
            try:
                return proxy_response(result.payload)
            except ValueError as problem:
                function_id = match.route.function_id
                self._log(
                    f"[gateway] malformed Lambda proxy response from {function_id}: {problem}"
                )
        # A function error or a malformed result is a 502 without a type of its own.
        return self._error(
            facts, api, GatewayError("DEFAULT_5XX", "Internal server error", 502), resource=resource
        )
