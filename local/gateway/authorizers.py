"""Lambda authorizers as API Gateway runs them: the identity sources, the call, answer
validation, the answer cache and the policy decision for each methodArn."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from local.gateway.messages import Invoke, header_value
from local.gateway.policy import PolicyDecision, evaluate_policy, method_arn
from local.gateway.proxy import RequestFacts, build_authorizer_event, query_parameters
from local.gateway.responses import GatewayError
from local.gateway.routing import RouteMatch
from local.runtime import LogSink
from local.template import Authorizer


class AuthorizerAnswerError(ValueError):
    """The authorizer returned something API Gateway cannot use (-> 500)."""


@dataclass(frozen=True)
class AuthorizerAnswer:
    principal_id: str | None
    policy: Mapping[str, Any]
    context: Mapping[str, str]
    # The API key of the caller's usage plan, when the API takes keys from its authorizer.
    usage_identifier_key: str | None = None


@dataclass(frozen=True)
class Authorization:
    """How a request fared with its authorizer."""

    denial: GatewayError | None
    # requestContext.authorizer for the integration (and $context.authorizer.* for responses).
    context: dict[str, Any]
    how: str
    usage_identifier_key: str | None = None


def _string_or_strings(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, list) and bool(value) and all(isinstance(item, str) for item in value)
    )


def _context_value(value: Any) -> str:
    # API Gateway hands authorizer context values to the integration as strings.
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    raise AuthorizerAnswerError("context values must be strings, numbers or booleans")


def parse_authorizer_answer(payload: Any) -> AuthorizerAnswer:
    """Validate an authorizer's output the way API Gateway does before using it."""
    if not isinstance(payload, dict):
        raise AuthorizerAnswerError("the answer is not a JSON object")
    document = payload.get("policyDocument")
    if not isinstance(document, dict) or "Statement" not in document:
        raise AuthorizerAnswerError("policyDocument with a Statement is required")
    statements = document["Statement"]
    if not isinstance(statements, dict | list):
        raise AuthorizerAnswerError("Statement must be an object or a list")
    for statement in [statements] if isinstance(statements, dict) else statements:
        if not isinstance(statement, dict) or statement.get("Effect") not in ("Allow", "Deny"):
            raise AuthorizerAnswerError("every statement needs Effect Allow or Deny")
        if not _string_or_strings(statement.get("Action")):
            raise AuthorizerAnswerError("every statement needs an Action")
        if not _string_or_strings(statement.get("Resource")):
            raise AuthorizerAnswerError("every statement needs a Resource")
    context = payload.get("context") or {}
    if not isinstance(context, dict):
        raise AuthorizerAnswerError("context must be a JSON object")
    principal = payload.get("principalId")
    usage_key = payload.get("usageIdentifierKey")
    if usage_key is not None and not isinstance(usage_key, str):
        raise AuthorizerAnswerError("usageIdentifierKey must be a string")
    return AuthorizerAnswer(
        usage_identifier_key=usage_key,
        principal_id=None if principal is None else str(principal),
        policy=document,
        # A null value carries nothing an integration could read; it is left out.
        context={
            str(key): _context_value(value) for key, value in context.items() if value is not None
        },
    )


class AuthorizerCache:
    """Authorizer answers per (API, authorizer, identity values), kept ReauthorizeEvery seconds."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._entries: dict[tuple[str, ...], tuple[float, AuthorizerAnswer]] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[str, ...]) -> AuthorizerAnswer | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            expires_at, answer = entry
            if self._clock() >= expires_at:
                del self._entries[key]
                return None
            return answer

    def put(self, key: tuple[str, ...], answer: AuthorizerAnswer, ttl_seconds: int) -> None:
        if ttl_seconds <= 0:
            return
        with self._lock:
            self._entries[key] = (self._clock() + ttl_seconds, answer)


class LambdaAuthorizers:
    """REQUEST (and TOKEN) authorizers: the missing-identity short cut (401 without a call),
    "Unauthorized" -> 401, other failures -> AUTHORIZER_CONFIGURATION_ERROR, and answers
    cached per identity for ReauthorizeEvery seconds, evaluated against each new methodArn."""

    def __init__(self, invoke: Invoke, log: LogSink, clock: Callable[[], float]) -> None:
        self._invoke = invoke
        self._log = log
        self.cache = AuthorizerCache(clock)

    def authorize(
        self,
        facts: RequestFacts,
        match: RouteMatch,
        authorizer: Authorizer,
        *,
        event: Mapping[str, Any],
    ) -> Authorization:
        identity = self._identity(facts, match, authorizer)
        if identity is None:
            return Authorization(
                GatewayError("UNAUTHORIZED", "Unauthorized"), {}, "missing-identity"
            )
        api = match.route.api
        arn = method_arn(api, facts.method, facts.path)
        key = (api.logical_id, authorizer.name, *identity)
        started = time.monotonic()
        cached = self.cache.get(key) if authorizer.reauthorize_every > 0 else None
        how = "cached" if cached is not None else "invoked"
        answer = cached or self._ask(authorizer, event, arn)
        if isinstance(answer, GatewayError):
            return Authorization(answer, {}, how)
        if cached is None:
            self.cache.put(key, answer, authorizer.reauthorize_every)
        decision = evaluate_policy(answer.policy, arn)
        if decision is not PolicyDecision.ALLOW:
            message = "User is not authorized to access this resource"
            if decision is PolicyDecision.EXPLICIT_DENY:
                message += " with an explicit deny"
            return Authorization(GatewayError("ACCESS_DENIED", message), {}, f"{how}-deny")
        context: dict[str, Any] = dict(answer.context)
        context["principalId"] = answer.principal_id
        context["integrationLatency"] = int((time.monotonic() - started) * 1000)
        return Authorization(None, context, how, answer.usage_identifier_key)

    def _ask(
        self, authorizer: Authorizer, event: Mapping[str, Any], arn: str
    ) -> AuthorizerAnswer | GatewayError:
        result = self._invoke(
            authorizer.function_id, build_authorizer_event(event, authorizer, arn)
        )
        if not result.ok:
            # A throttled authorizer is one more failed call: API Gateway answers 500
            # AUTHORIZER_CONFIGURATION_ERROR ({"message": null}), as for a timed-out one
            # (dev.to/marcogrcr, "API Gateway + Lambda authorizer + Lambda proxy integration
            # failure modes"), and caches nothing, so the next request asks again.
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
    def _identity(
        facts: RequestFacts, match: RouteMatch, authorizer: Authorizer
    ) -> tuple[str, ...] | None:
        """The identity source values; None if any is missing or empty (401 without a call)."""
        values: list[str] = []
        # $context variables of the cache key (Identity.Context): always present.
        known = {
            "httpMethod": facts.method,
            "resourcePath": match.route.resource_path,
            "identity.sourceIp": facts.source_ip,
        }
        for name in authorizer.identity_context:
            values.append(f"{name}={known.get(name, '')}")
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
