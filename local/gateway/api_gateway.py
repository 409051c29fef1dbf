"""The gateway: a request routed, authorized, handed to its function and answered."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from local.gateway.authorizers import (
    AuthorizerAnswer,
    AuthorizerAnswerError,
    AuthorizerCache,
    PolicyDecision,
    evaluate_policy,
    method_arn,
    parse_authorizer_answer,
)
from local.gateway.messages import HttpRequest, HttpResponse, header_value
from local.gateway.proxy import (
    RequestFacts,
    build_authorizer_event,
    build_proxy_event,
    proxy_response,
    query_parameters,
    request_time,
)
from local.gateway.responses import GatewayError, render_gateway_response
from local.gateway.routing import RouteMatch, Router
from local.runtime import InvokeResult, LogSink, print_line
from local.template import Authorizer, RestApi, StackTemplate

Invoke = Callable[[str, Any], InvokeResult]


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
    ) -> None:
        self.router = Router(template)
        self._invoke = invoke
        self._clock = clock
        self._log = log
        self.cache = AuthorizerCache(clock)
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
        self, facts: RequestFacts, api: RestApi | None, error: GatewayError, resource: str = ""
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
        event = build_proxy_event(facts, match)
        outcome = _Outcome(HttpResponse(0, [], b""))
        if match.route.event.authorizer is not None:
            authorizer = api.authorizers[match.route.event.authorizer]
            denial, context, outcome.auth = self._authorize(facts, match, authorizer, event)
            if denial is not None:
                outcome.response = self._error(facts, api, denial, match.route.resource_path)
                return outcome
            event["requestContext"]["authorizer"] = context
        result = self._invoke(match.route.function_id, event)
        outcome.response = self._integration_response(facts, api, match, result)
        return outcome

    def _integration_response(
        self, facts: RequestFacts, api: RestApi, match: RouteMatch, result: InvokeResult
    ) -> HttpResponse:
        resource = match.route.resource_path
        if result.status == "timeout":
            error = GatewayError("INTEGRATION_TIMEOUT", "Endpoint request timed out")
            return self._error(facts, api, error, resource)
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
            facts, api, GatewayError("DEFAULT_5XX", "Internal server error", 502), resource
        )

    def _authorize(
        self,
        facts: RequestFacts,
        match: RouteMatch,
        authorizer: Authorizer,
        event: Mapping[str, Any],
    ) -> tuple[GatewayError | None, dict[str, Any], str]:
        """(denial or None, requestContext.authorizer, how it was decided)."""
        identity = self._identity(facts, authorizer)
        if identity is None:
            return GatewayError("UNAUTHORIZED", "Unauthorized"), {}, "missing-identity"
        api = match.route.api
        arn = method_arn(api, facts.method, facts.path)
        key = (api.logical_id, authorizer.name, *identity)
        started = time.monotonic()
        cached = self.cache.get(key) if authorizer.reauthorize_every > 0 else None
        how = "cached" if cached is not None else "invoked"
        answer = cached or self._ask_authorizer(authorizer, event, arn)
        if isinstance(answer, GatewayError):
            return answer, {}, how
        if cached is None:
            self.cache.put(key, answer, authorizer.reauthorize_every)
        decision = evaluate_policy(answer.policy, arn)
        if decision is not PolicyDecision.ALLOW:
            message = "User is not authorized to access this resource"
            if decision is PolicyDecision.EXPLICIT_DENY:
                message += " with an explicit deny"
            return GatewayError("ACCESS_DENIED", message), {}, f"{how}-deny"
        context: dict[str, Any] = dict(answer.context)
        context["principalId"] = answer.principal_id
        context["integrationLatency"] = int((time.monotonic() - started) * 1000)
        return None, context, how

    def _ask_authorizer(
        self, authorizer: Authorizer, event: Mapping[str, Any], arn: str
    ) -> AuthorizerAnswer | GatewayError:
        result = self._invoke(
            authorizer.function_id, build_authorizer_event(event, authorizer, arn)
        )
        if not result.ok:
            if result.status == "error" and result.error_message == "Unauthorized":
                return GatewayError("UNAUTHORIZED", "Unauthorized")
            # API Gateway reports any other authorizer failure as a configuration error.
            self._log(
                f"[gateway] authorizer {authorizer.function_id} failed:"
                f" {result.error_type}: {result.error_message}"
            )
            return GatewayError("AUTHORIZER_CONFIGURATION_ERROR", None)
        try:
            return parse_authorizer_answer(result.payload)
        except AuthorizerAnswerError as problem:
            self._log(f"[gateway] malformed answer from {authorizer.function_id}: {problem}")
            return GatewayError("AUTHORIZER_CONFIGURATION_ERROR", None)

    @staticmethod
    def _identity(facts: RequestFacts, authorizer: Authorizer) -> tuple[str, ...] | None:
        """The identity source values; None if any is missing or empty (401 without a call)."""
        values: list[str] = []
        for name in authorizer.identity_headers:
            value = header_value(facts.headers, name)
            if not value or not value.strip():
                return None
            values.append(value)
        query = query_parameters(facts.raw_query)
        for name in authorizer.identity_query_strings:
            found = query.get(name)
            if not found or not found[-1]:
                return None
            values.append(found[-1])
        return tuple(values)
