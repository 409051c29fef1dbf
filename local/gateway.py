"""An API Gateway (REST API) emulator for the template's Api events.

What it reproduces, because the functions and tests depend on it:
- routing by the template's paths (`{param}`, greedy `{proxy+}`, static segments first, ANY);
  an unknown path or method is MISSING_AUTHENTICATION_TOKEN, as in API Gateway;
- REQUEST (and TOKEN) Lambda authorizers: the missing-identity short cut (401 without calling
  the authorizer), "Unauthorized" -> 401, other errors or malformed answers -> 500, IAM policy
  evaluation against the methodArn (explicit Deny wins, no Allow -> 403), and the result cache
  per identity for ReauthorizeEvery seconds, evaluated against each new methodArn;
- REST proxy (v1) events and the proxy response contract (anything malformed -> 502);
- the template's GatewayResponses, falling back to DEFAULT_4XX/DEFAULT_5XX and then to API
  Gateway's own defaults; function timeout -> 504, body over 10 MB -> 413.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import copy
import errno
import functools
import hashlib
import json
import re
import secrets
import socketserver
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final
from urllib.parse import parse_qsl, unquote, urlsplit

from local.aws import PortInUseError
from local.runtime import InvokeResult, LogSink, print_line
from local.template import ACCOUNT_ID, REGION, ApiEvent, Authorizer, RestApi, StackTemplate

MAX_REQUEST_BODY_BYTES: Final = 10 * 1024 * 1024
Invoke = Callable[[str, Any], InvokeResult]

# ---------------------------------------------------------------------------- HTTP values


@dataclass(frozen=True)
class HttpRequest:
    method: str
    # The request target as received: path and query string, still percent-encoded.
    target: str
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""
    source_ip: str = "127.0.0.1"
    # Set when the server stopped reading a body over the 10 MB limit.
    body_too_large: bool = False


@dataclass
class HttpResponse:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None


def _header(headers: Sequence[tuple[str, str]], name: str) -> str | None:
    """The last value of a header, matched case-insensitively (as API Gateway's headers map)."""
    found = None
    for key, value in headers:
        if key.lower() == name.lower():
            found = value
    return found


# ---------------------------------------------------------------------------- routing


@dataclass(frozen=True)
class Route:
    api: RestApi
    function_id: str
    event: ApiEvent
    segments: tuple[str, ...]

    @property
    def resource_path(self) -> str:
        return self.event.path

    @property
    def precedence(self) -> tuple[int, ...]:
        # API Gateway prefers a static segment to a {param}, and a {param} to a {greedy+}.
        return tuple(
            2 if segment.endswith("+}") else 1 if segment.startswith("{") else 0
            for segment in self.segments
        )


@dataclass(frozen=True)
class RouteMatch:
    route: Route
    path_parameters: dict[str, str] | None


def _segments(path: str) -> list[str]:
    stripped = path.strip("/")
    return stripped.split("/") if stripped else []


def _match_segments(template: Sequence[str], actual: Sequence[str]) -> dict[str, str] | None:
    parameters: dict[str, str] = {}
    for index, segment in enumerate(template):
        if segment.startswith("{") and segment.endswith("+}"):
            rest = actual[index:]
            if not rest:
                return None
            parameters[segment[1:-2]] = unquote("/".join(rest))
            return parameters
        if index >= len(actual):
            return None
        if segment.startswith("{") and segment.endswith("}"):
            if not actual[index]:
                return None
            parameters[segment[1:-1]] = unquote(actual[index])
        elif segment != actual[index]:
            return None
    return parameters if len(template) == len(actual) else None


class Router:
    """Every Api event of the template, matched the way API Gateway walks its resources."""

    def __init__(self, template: StackTemplate) -> None:
        self.routes: list[Route] = [
            Route(
                api=template.apis[event.api_id],
                function_id=function.logical_id,
                event=event,
                segments=tuple(_segments(event.path)),
            )
            for function, event in template.api_events()
        ]

    def match(self, method: str, raw_path: str) -> RouteMatch | None:
        """The route for a request, or None when API Gateway would not find the method."""
        actual = _segments(raw_path)
        candidates: list[tuple[Route, dict[str, str]]] = []
        for route in self.routes:
            parameters = _match_segments(route.segments, actual)
            if parameters is not None:
                candidates.append((route, parameters))
        if not candidates:
            return None
        # The most specific resource wins; a method missing on it is not looked up elsewhere.
        best = min(route.precedence for route, _ in candidates)
        on_resource = [(route, params) for route, params in candidates if route.precedence == best]
        for wanted in (method.upper(), "ANY"):
            for route, parameters in on_resource:
                if route.event.method == wanted:
                    return RouteMatch(route=route, path_parameters=parameters or None)
        return None


# ---------------------------------------------------------------------------- policies


class PolicyDecision(Enum):
    ALLOW = "ALLOW"
    EXPLICIT_DENY = "EXPLICIT_DENY"
    IMPLICIT_DENY = "IMPLICIT_DENY"


@functools.lru_cache(maxsize=1024)
def _wildcard(pattern: str, *, ignore_case: bool) -> re.Pattern[str]:
    expression = "".join(
        ".*" if char == "*" else "." if char == "?" else re.escape(char) for char in pattern
    )
    return re.compile(expression, re.IGNORECASE | re.DOTALL if ignore_case else re.DOTALL)


def wildcard_matches(pattern: str, value: str, *, ignore_case: bool = False) -> bool:
    """IAM wildcards: '*' is any run of characters (slashes included), '?' is one character."""
    return _wildcard(pattern, ignore_case=ignore_case).fullmatch(value) is not None


def _as_list(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def evaluate_policy(document: Mapping[str, Any], method_arn: str) -> PolicyDecision:
    """IAM evaluation for execute-api:Invoke on one methodArn: an explicit Deny wins."""
    allowed = False
    for statement in _statements(document):
        actions = _as_list(statement["Action"])
        if not any(
            wildcard_matches(action, "execute-api:Invoke", ignore_case=True) for action in actions
        ):
            continue
        if not any(
            wildcard_matches(resource, method_arn) for resource in _as_list(statement["Resource"])
        ):
            continue
        if statement["Effect"] == "Deny":
            return PolicyDecision.EXPLICIT_DENY
        allowed = True
    return PolicyDecision.ALLOW if allowed else PolicyDecision.IMPLICIT_DENY


def _statements(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    statement = document["Statement"]
    return [statement] if isinstance(statement, dict) else list(statement)


def method_arn(api: RestApi, method: str, path: str) -> str:
    """arn:aws:execute-api:<region>:<account>:<apiId>/<stage>/<METHOD>/<path without />."""
    prefix = f"arn:aws:execute-api:{REGION}:{ACCOUNT_ID}:{api.api_id}"
    return f"{prefix}/{api.stage_name}/{method}/{path.lstrip('/')}"


# ---------------------------------------------------------------------------- authorizers


class AuthorizerAnswerError(ValueError):
    """The authorizer returned something API Gateway cannot use (-> 500)."""


@dataclass(frozen=True)
class AuthorizerAnswer:
    principal_id: str | None
    policy: Mapping[str, Any]
    context: Mapping[str, str]


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
    return AuthorizerAnswer(
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


# ---------------------------------------------------------------------------- gateway responses

_DEFAULT_STATUS: Final = {
    "ACCESS_DENIED": 403,
    "API_CONFIGURATION_ERROR": 500,
    "AUTHORIZER_CONFIGURATION_ERROR": 500,
    "AUTHORIZER_FAILURE": 500,
    "BAD_REQUEST_PARAMETERS": 400,
    "BAD_REQUEST_BODY": 400,
    "EXPIRED_TOKEN": 403,
    "INTEGRATION_FAILURE": 504,
    "INTEGRATION_TIMEOUT": 504,
    "INVALID_API_KEY": 403,
    "INVALID_SIGNATURE": 403,
    "MISSING_AUTHENTICATION_TOKEN": 403,
    "QUOTA_EXCEEDED": 429,
    "REQUEST_TOO_LARGE": 413,
    "RESOURCE_NOT_FOUND": 404,
    "THROTTLED": 429,
    "UNAUTHORIZED": 401,
    "UNSUPPORTED_MEDIA_TYPE": 415,
    "WAF_FILTERED": 403,
}
_ERROR_TYPE_HEADER: Final = {
    "ACCESS_DENIED": "AccessDeniedException",
    "AUTHORIZER_CONFIGURATION_ERROR": "AuthorizerConfigurationException",
    "AUTHORIZER_FAILURE": "AuthorizerFailureException",
    "MISSING_AUTHENTICATION_TOKEN": "MissingAuthenticationTokenException",
    "REQUEST_TOO_LARGE": "RequestTooLargeException",
    "UNAUTHORIZED": "UnauthorizedException",
}
_DEFAULT_TEMPLATE: Final = '{"message":$context.error.messageString}'
# API Gateway's own ACCESS_DENIED body spells the key with a capital M.
_ACCESS_DENIED_TEMPLATE: Final = '{"Message":$context.error.messageString}'
_CONTEXT_VARIABLE: Final = re.compile(
    r"\$!?(?:\{context\.([A-Za-z0-9_.]+)\}|context\.([A-Za-z0-9_.]*[A-Za-z0-9_]))"
)


@dataclass(frozen=True)
class GatewayError:
    """A response API Gateway produces itself, before or instead of the integration's."""

    response_type: str
    message: str | None
    # The status before GatewayResponses apply, for errors without a type of their own.
    status: int | None = None


def _render_template(template: str, variables: Mapping[str, str]) -> str:
    def substitute(match: re.Match[str]) -> str:
        return variables.get(match.group(1) or match.group(2), "")

    return _CONTEXT_VARIABLE.sub(substitute, template)


def render_gateway_response(
    api: RestApi | None,
    error: GatewayError,
    *,
    context_variables: Mapping[str, str],
    request_headers: Sequence[tuple[str, str]] = (),
) -> HttpResponse:
    """The template's response for this error type, DEFAULT_4XX/5XX, or API Gateway's own."""
    status = error.status or _DEFAULT_STATUS.get(error.response_type, 500)
    responses = api.gateway_responses if api is not None else {}
    family = "DEFAULT_4XX" if 400 <= status < 500 else "DEFAULT_5XX"
    specific = responses.get(error.response_type)
    fallback = responses.get(family)
    chosen = specific or fallback
    if chosen is not None and chosen.status_code is not None:
        status = chosen.status_code
    templates: Mapping[str, str] = (chosen.templates if chosen else {}) or (
        fallback.templates if fallback else {}
    )
    content_type = (
        "application/json"
        if "application/json" in templates or not templates
        else next(iter(templates))
    )
    builtin = (
        _ACCESS_DENIED_TEMPLATE if error.response_type == "ACCESS_DENIED" else _DEFAULT_TEMPLATE
    )
    template = templates.get(content_type, builtin)
    variables = {
        **context_variables,
        "error.message": "" if error.message is None else error.message,
        "error.messageString": json.dumps(error.message),
        "error.responseType": error.response_type,
        "error.validationErrorString": "",
    }
    headers = [("Content-Type", content_type)]
    for name, value in (chosen.headers if chosen else {}).items():
        resolved = _response_header_value(value, request_headers)
        if resolved is not None:
            headers.append((name, resolved))
    error_type = _ERROR_TYPE_HEADER.get(error.response_type)
    if error_type is None and status >= 500:
        error_type = "InternalServerErrorException"
    if error_type:
        headers.append(("x-amzn-ErrorType", error_type))
    return HttpResponse(
        status=status, headers=headers, body=_render_template(template, variables).encode()
    )


def _response_header_value(value: str, request_headers: Sequence[tuple[str, str]]) -> str | None:
    """A GatewayResponse header: 'static' (quotes stripped) or a request header mapping."""
    if len(value) >= 2 and value.startswith("'") and value.endswith("'"):
        return value[1:-1]
    prefix = "method.request.header."
    if value.startswith(prefix):
        return _header(request_headers, value[len(prefix) :])
    return None


# ---------------------------------------------------------------------------- proxy events

_TEXT_TYPES: Final = (
    "json",
    "xml",
    "javascript",
    "x-www-form-urlencoded",
    "yaml",
    "csv",
    "graphql",
)
_MONTHS: Final = (
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "May",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Oct",
    "Nov",
    "Dec",
)


def is_text_content(content_type: str | None, binary_media_types: Sequence[str] = ()) -> bool:
    if not content_type:
        return True
    media_type = content_type.split(";")[0].strip().lower()
    if any(wildcard_matches(binary, media_type, ignore_case=True) for binary in binary_media_types):
        return False
    return media_type.startswith("text/") or any(kind in media_type for kind in _TEXT_TYPES)


@dataclass(frozen=True)
class RequestFacts:
    """What one request's events and responses are built from."""

    request_id: str
    extended_request_id: str
    method: str
    # Decoded for the event; still encoded for routing, so "%2F" inside a parameter stays in it.
    path: str
    raw_path: str
    raw_query: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    source_ip: str
    received_at: datetime
    trace_id: str
    body_too_large: bool = False

    @classmethod
    def of(cls, request: HttpRequest, now: datetime | None = None) -> RequestFacts:
        target = urlsplit(request.target)
        return cls(
            request_id=str(uuid.uuid4()),
            extended_request_id=base64.b64encode(secrets.token_bytes(10)).decode(),
            method=request.method.upper(),
            path=unquote(target.path or "/"),
            raw_path=target.path or "/",
            raw_query=target.query,
            headers=request.headers,
            body=request.body,
            source_ip=request.source_ip,
            received_at=now or datetime.now(UTC),
            trace_id=f"Root=1-{int(time.time()):08x}-{secrets.token_hex(12)}",
            body_too_large=request.body_too_large or len(request.body) > MAX_REQUEST_BODY_BYTES,
        )


def _multi_value_headers(facts: RequestFacts) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    for key, value in facts.headers:
        # One entry per header whatever the case it is repeated in, named as first sent.
        name = names.setdefault(key.lower(), key)
        grouped.setdefault(name, []).append(value)
    for key, value in (
        ("X-Forwarded-For", facts.source_ip),
        ("X-Forwarded-Proto", "http"),
        ("X-Amzn-Trace-Id", facts.trace_id),
    ):
        if key.lower() not in names and value:
            grouped[key] = [value]
    return grouped


def _query_parameters(raw_query: str) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for key, value in parse_qsl(raw_query, keep_blank_values=True):
        grouped.setdefault(key, []).append(value)
    return grouped


def _request_time(moment: datetime) -> str:
    # "09/Apr/2015:12:34:56 +0000", with English month names whatever the locale.
    return f"{moment:%d}/{_MONTHS[moment.month - 1]}/{moment:%Y:%H:%M:%S} +0000"


def build_request_context(
    facts: RequestFacts, api: RestApi, resource_path: str, *, user_agent: str | None = None
) -> dict[str, Any]:
    host = _header(facts.headers, "Host") or "127.0.0.1"
    return {
        "resourceId": hashlib.sha256(resource_path.encode()).hexdigest()[:6],
        "resourcePath": resource_path,
        "httpMethod": facts.method,
        "extendedRequestId": facts.extended_request_id,
        "requestTime": _request_time(facts.received_at),
        "path": f"/{api.stage_name}{facts.path}",
        "accountId": ACCOUNT_ID,
        "protocol": "HTTP/1.1",
        "stage": api.stage_name,
        "domainPrefix": host.split(".")[0].split(":")[0],
        "requestTimeEpoch": int(facts.received_at.timestamp() * 1000),
        "requestId": facts.request_id,
        "identity": {
            "cognitoIdentityPoolId": None,
            "accountId": None,
            "cognitoIdentityId": None,
            "caller": None,
            "sourceIp": facts.source_ip,
            "principalOrgId": None,
            "accessKey": None,
            "cognitoAuthenticationType": None,
            "cognitoAuthenticationProvider": None,
            "userArn": None,
            "userAgent": user_agent
            if user_agent is not None
            else _header(facts.headers, "User-Agent"),
            "user": None,
        },
        "domainName": host,
        "apiId": api.api_id,
    }


def build_proxy_event(facts: RequestFacts, match: RouteMatch) -> dict[str, Any]:
    """The REST API (v1) Lambda proxy event, without requestContext.authorizer."""
    api = match.route.api
    multi_headers = _multi_value_headers(facts)
    multi_query = _query_parameters(facts.raw_query)
    body: str | None = None
    is_base64 = False
    if facts.body:
        content_type = _header(facts.headers, "Content-Type")
        text = is_text_content(content_type, api.binary_media_types)
        if text:
            try:
                body = facts.body.decode("utf-8")
            except UnicodeDecodeError:
                text = False
        if not text:
            body, is_base64 = base64.b64encode(facts.body).decode(), True
    return {
        "resource": match.route.resource_path,
        "path": facts.path,
        "httpMethod": facts.method,
        # The single-value maps keep the last value, as API Gateway's do.
        "headers": {name: values[-1] for name, values in multi_headers.items()},
        "multiValueHeaders": multi_headers,
        "queryStringParameters": {k: v[-1] for k, v in multi_query.items()} or None,
        "multiValueQueryStringParameters": multi_query or None,
        "pathParameters": match.path_parameters,
        "stageVariables": None,
        "requestContext": build_request_context(facts, api, match.route.resource_path),
        "body": body,
        "isBase64Encoded": is_base64,
    }


def build_authorizer_event(
    proxy_event: Mapping[str, Any], authorizer: Authorizer, arn: str
) -> dict[str, Any]:
    """The event API Gateway sends a Lambda authorizer for this request."""
    if authorizer.payload_type == "TOKEN":
        token = _header(list(proxy_event["headers"].items()), authorizer.identity_headers[0])
        return {"type": "TOKEN", "authorizationToken": token, "methodArn": arn}
    # A copy: the proxy event gains requestContext.authorizer after the authorizer answers.
    return {
        "type": "REQUEST",
        "methodArn": arn,
        **{
            key: copy.deepcopy(proxy_event[key])
            for key in (
                "resource",
                "path",
                "httpMethod",
                "headers",
                "multiValueHeaders",
                "queryStringParameters",
                "multiValueQueryStringParameters",
                "pathParameters",
                "stageVariables",
                "requestContext",
            )
        },
    }


# ---------------------------------------------------------------------------- proxy responses

_PROXY_RESPONSE_KEYS: Final = frozenset(
    {"statusCode", "headers", "multiValueHeaders", "body", "isBase64Encoded"}
)
_HOP_BY_HOP: Final = frozenset({"content-length", "transfer-encoding", "connection"})


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    raise ValueError("header values must be strings, numbers or booleans")


def proxy_response(payload: Any) -> HttpResponse:
    """A Lambda proxy result as HTTP; ValueError when API Gateway would call it malformed."""
    if not isinstance(payload, dict) or not set(payload) <= _PROXY_RESPONSE_KEYS:
        raise ValueError("a proxy result is an object with the proxy response keys only")
    status = payload.get("statusCode")
    if isinstance(status, str) and status.isdigit():
        status = int(status)
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
        raise ValueError("statusCode must be an HTTP status")
    body = payload.get("body")
    if body is not None and not isinstance(body, str):
        raise ValueError("body must be a string")
    is_base64 = payload.get("isBase64Encoded", False)
    if not isinstance(is_base64, bool):
        raise ValueError("isBase64Encoded must be a boolean")
    multi = payload.get("multiValueHeaders") or {}
    single = payload.get("headers") or {}
    if not isinstance(multi, dict) or not isinstance(single, dict):
        raise ValueError("headers and multiValueHeaders must be objects")
    headers: list[tuple[str, str]] = []
    for name, values in multi.items():
        if not isinstance(values, list):
            raise ValueError("multiValueHeaders values must be lists")
        headers.extend((str(name), _scalar_text(value)) for value in values)
    # A header in both maps is taken from multiValueHeaders only.
    in_multi = {str(name).lower() for name in multi}
    headers.extend(
        (str(name), _scalar_text(value))
        for name, value in single.items()
        if str(name).lower() not in in_multi
    )
    headers = [(name, value) for name, value in headers if name.lower() not in _HOP_BY_HOP]
    if not any(name.lower() == "content-type" for name, _ in headers):
        headers.append(("Content-Type", "application/json"))
    try:
        data = base64.b64decode(body or "", validate=True) if is_base64 else (body or "").encode()
    except binascii.Error as error:
        raise ValueError("body is not valid base64") from error
    return HttpResponse(status=status, headers=headers, body=data)


# ---------------------------------------------------------------------------- the gateway


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
            "identity.userAgent": _header(facts.headers, "User-Agent") or "",
            "requestTime": _request_time(facts.received_at),
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
            value = _header(facts.headers, name)
            if not value or not value.strip():
                return None
            values.append(value)
        query = _query_parameters(facts.raw_query)
        for name in authorizer.identity_query_strings:
            found = query.get(name)
            if not found or not found[-1]:
                return None
            values.append(found[-1])
        return tuple(values)


# ---------------------------------------------------------------------------- the HTTP server


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    gateway: ApiGateway

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks the host name up in DNS; a loopback address needs no name.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)


class _RequestTooLargeError(Exception):
    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body leave in separate writes; with Nagle's algorithm and the client's
    # delayed ACK, each keep-alive response would wait about 40 ms for nothing.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """The gateway logs one line per request itself."""

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return self._read_chunked()
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_REQUEST_BODY_BYTES:
            raise _RequestTooLargeError
        return self.rfile.read(length) if length else b""

    def _read_chunked(self) -> bytes:
        body = bytearray()
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline().strip():
                    pass  # trailers carry nothing the gateway forwards
                return bytes(body)
            body.extend(self.rfile.read(size))
            self.rfile.readline()
            if len(body) > MAX_REQUEST_BODY_BYTES:
                raise _RequestTooLargeError

    def _serve(self) -> None:
        headers = tuple(self.headers.items())
        too_large = False
        try:
            body = self._read_body()
        except _RequestTooLargeError:
            # The rest of the body stays unread, so this connection cannot carry another request.
            self.close_connection = True
            body, too_large = b"", True
        except ValueError:
            self.send_error(400, "Malformed request body")
            return
        request = HttpRequest(
            method=self.command,
            target=self.path,
            headers=headers,
            body=body,
            source_ip=self.client_address[0],
            body_too_large=too_large,
        )
        self._send(self.server.gateway.handle(request))

    def _send(self, response: HttpResponse) -> None:
        # A client that hung up has nobody left to read the answer; the request is logged.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._write(response)

    def _write(self, response: HttpResponse) -> None:
        self.send_response(response.status)
        for name, value in response.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    # http.server dispatches on these names; every method takes the same path.
    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _serve  # noqa: N815

    def __getattr__(self, name: str) -> Callable[[], None]:
        # Any other method (TRACE, QUERY, ...) reaches the router too, which answers it as
        # API Gateway does; http.server alone would answer 501, a server error.
        if name.startswith("do_"):
            return self._serve
        raise AttributeError(name)


class GatewayServer:
    """The gateway's HTTP server on a loopback port.

    The port is bound on construction, before anything else starts, so a taken port fails
    at once; requests are served once start() hands it the gateway.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 3000) -> None:
        try:
            self._server = _Server((host, port), _Handler)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise PortInUseError(host, port, error) from error
            raise
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self, gateway: ApiGateway) -> None:
        self._server.gateway = gateway
        self._thread = threading.Thread(
            # A short poll interval keeps shutdown quick.
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.1},
            name="gateway",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()
