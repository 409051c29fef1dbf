"""Gateway responses: the answers API Gateway gives itself, from the template's GatewayResponses."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from local.gateway.messages import HttpResponse, header_value
from local.template import RestApi

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
        resolved = _response_header_value(value, request_headers, context_variables)
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


def _response_header_value(
    value: str, request_headers: Sequence[tuple[str, str]], context_variables: Mapping[str, str]
) -> str | None:
    """A GatewayResponse header: 'static' (quotes stripped), a request header mapping, or a
    $context variable (`context.requestId`, `context.authorizer.x`); one without a value is
    left out."""
    if len(value) >= 2 and value.startswith("'") and value.endswith("'"):
        return value[1:-1]
    if value.startswith("context."):
        return context_variables.get(value[len("context.") :]) or None
    prefix = "method.request.header."
    if value.startswith(prefix):
        return header_value(request_headers, value[len(prefix) :])
    return None
