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

One module per responsibility: messages (HTTP values), routing, policy (IAM evaluation),
authorizers (the Lambda authorizer flow and its cache), responses (GatewayResponses), proxy
(events and the proxy contract), api_gateway (the request flow) and server (http.server on a
loopback port).
"""

from local.gateway.api_gateway import ApiGateway
from local.gateway.authorizers import (
    AuthorizerAnswer,
    AuthorizerAnswerError,
    AuthorizerCache,
    LambdaAuthorizers,
    parse_authorizer_answer,
)
from local.gateway.messages import MAX_REQUEST_BODY_BYTES, HttpRequest, HttpResponse, Invoke
from local.gateway.policy import PolicyDecision, evaluate_policy, method_arn, wildcard_matches
from local.gateway.proxy import (
    RequestFacts,
    build_authorizer_event,
    build_proxy_event,
    build_request_context,
    is_text_content,
    proxy_response,
)
from local.gateway.responses import GatewayError, render_gateway_response
from local.gateway.routing import Route, RouteMatch, Router
from local.gateway.server import GatewayServer

__all__ = [
    "MAX_REQUEST_BODY_BYTES",
    "ApiGateway",
    "AuthorizerAnswer",
    "AuthorizerAnswerError",
    "AuthorizerCache",
    "GatewayError",
    "GatewayServer",
    "HttpRequest",
    "HttpResponse",
    "Invoke",
    "LambdaAuthorizers",
    "PolicyDecision",
    "RequestFacts",
    "Route",
    "RouteMatch",
    "Router",
    "build_authorizer_event",
    "build_proxy_event",
    "build_request_context",
    "evaluate_policy",
    "is_text_content",
    "method_arn",
    "parse_authorizer_answer",
    "proxy_response",
    "render_gateway_response",
    "wildcard_matches",
]
