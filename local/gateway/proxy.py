"""REST proxy (v1) events for functions and authorizers, and the proxy response contract."""

from __future__ import annotations

import base64
import binascii
import copy
import hashlib
import secrets
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import parse_qsl, unquote, urlsplit

from local.gateway.messages import MAX_REQUEST_BODY_BYTES, HttpRequest, HttpResponse, header_value
from local.gateway.policy import wildcard_matches
from local.gateway.routing import RouteMatch
from local.template import ACCOUNT_ID, Authorizer, RestApi

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
    malformed_framing: str | None = None

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
            malformed_framing=request.malformed_framing,
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


def query_parameters(raw_query: str) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for key, value in parse_qsl(raw_query, keep_blank_values=True):
        grouped.setdefault(key, []).append(value)
    return grouped


def request_time(moment: datetime) -> str:
    # "09/Apr/2015:12:34:56 +0000", with English month names whatever the locale.
    return f"{moment:%d}/{_MONTHS[moment.month - 1]}/{moment:%Y:%H:%M:%S} +0000"


def build_request_context(
    facts: RequestFacts, api: RestApi, resource_path: str, *, user_agent: str | None = None
) -> dict[str, Any]:
    host = header_value(facts.headers, "Host") or "127.0.0.1"
    return {
        "resourceId": hashlib.sha256(resource_path.encode()).hexdigest()[:6],
        "resourcePath": resource_path,
        "httpMethod": facts.method,
        "extendedRequestId": facts.extended_request_id,
        "requestTime": request_time(facts.received_at),
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
            else header_value(facts.headers, "User-Agent"),
            "user": None,
        },
        "domainName": host,
        "apiId": api.api_id,
    }


def build_proxy_event(facts: RequestFacts, match: RouteMatch) -> dict[str, Any]:
    """The REST API (v1) Lambda proxy event, without requestContext.authorizer."""
    api = match.route.api
    multi_headers = _multi_value_headers(facts)
    multi_query = query_parameters(facts.raw_query)
    body: str | None = None
    is_base64 = False
    if facts.body:
        content_type = header_value(facts.headers, "Content-Type")
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
        token = header_value(list(proxy_event["headers"].items()), authorizer.identity_headers[0])
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
