"""The API Gateway emulator: routing, proxy events, authorizer flow, responses, errors."""

import base64
import concurrent.futures
import json
import re
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from local.concurrency import ACCOUNT_LIMIT_EXCEEDED, RESERVED_LIMIT_EXCEEDED
from local.gateway import (
    MAX_REQUEST_BODY_BYTES,
    ApiGateway,
    GatewayError,
    GatewayServer,
    HttpRequest,
    HttpResponse,
    render_gateway_response,
)
from local.runtime import InvokeResult, LambdaRuntime, throttled_result
from local.template import local_api_id

API_ID = local_api_id("ProbeApi")
Behaviour = Callable[[Any], InvokeResult]
ALLOW_HEADERS = (("Authorization", "allow"), ("X-Tenant", "t1"))


def ok(payload: Any) -> Behaviour:
    return lambda _event: InvokeResult(status="ok", payload=payload)


def failed(message: str, error_type: str = "Exception") -> Behaviour:
    return lambda _event: InvokeResult(status="error", error_type=error_type, error_message=message)


def allow_method_arn(event: dict[str, Any]) -> InvokeResult:
    """An authorizer that allows exactly the methodArn it was asked about."""
    return InvokeResult(
        status="ok",
        payload={
            "principalId": "user-1",
            "policyDocument": {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Action": "execute-api:Invoke",
                        "Resource": event["methodArn"],
                    }
                ],
            },
            "context": {"tenantId": 7, "admin": False},
        },
    )


PROXY_OK = {
    "statusCode": 200,
    "headers": {"Content-Type": "application/json"},
    "body": '{"ok": true}',
}


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def gateway(fixture_template, fake_functions, console, clock):
    fake_functions.behaviours["AuthorizerFunction"] = allow_method_arn
    fake_functions.behaviours["EchoFunction"] = ok(PROXY_OK)
    return ApiGateway(fixture_template, fake_functions, clock=clock, log=console)


def call(
    gateway: ApiGateway,
    method: str,
    target: str,
    headers: tuple[tuple[str, str], ...] = ALLOW_HEADERS,
    body: bytes = b"",
) -> HttpResponse:
    return gateway.handle(
        HttpRequest(method=method, target=target, headers=tuple(headers), body=body)
    )


def body_of(response: HttpResponse) -> Any:
    return json.loads(response.body)


def proxy_event(fake_functions: Any) -> dict[str, Any]:
    events: list[dict[str, Any]] = fake_functions.calls_to("EchoFunction")
    assert len(events) == 1
    return events[0]


# ---------------------------------------------------------------------------- routing


def test_unknown_path_is_missing_authentication_token_mapped_to_404(gateway, fake_functions):
    response = call(gateway, "GET", "/nowhere")
    assert response.status == 404
    assert body_of(response) == {"info": "No such operation", "reason": "NOT_FOUND"}
    assert response.header("x-amzn-ErrorType") == "MissingAuthenticationTokenException"
    assert fake_functions.calls == []


def test_a_method_the_resource_lacks_is_also_missing_authentication_token(gateway, fake_functions):
    # Given /items/{itemId} exists for GET only
    response = call(gateway, "DELETE", "/items/42")
    assert response.status == 404
    assert fake_functions.calls == []


def test_static_segment_wins_over_a_path_parameter(gateway, fake_functions):
    call(gateway, "GET", "/items/search")
    event = proxy_event(fake_functions)
    assert event["resource"] == "/items/search"
    assert event["pathParameters"] is None


def test_greedy_proxy_takes_the_rest_of_the_path_for_any_method(gateway, fake_functions):
    call(gateway, "PUT", "/files/reports/2024/q1%20summary.pdf")
    event = proxy_event(fake_functions)
    assert event["resource"] == "/files/{proxy+}"
    assert event["pathParameters"] == {"proxy": "reports/2024/q1 summary.pdf"}
    assert event["httpMethod"] == "PUT"


def test_path_parameters_are_decoded_once(gateway, fake_functions):
    # Given an item id holding an encoded slash and an encoded percent sign
    call(gateway, "GET", "/items/a%2Fb%2525")
    # Then it is one parameter, decoded exactly once
    assert proxy_event(fake_functions)["pathParameters"] == {"itemId": "a/b%25"}


def test_greedy_proxy_needs_at_least_one_segment(gateway):
    assert call(gateway, "GET", "/files").status == 404


# ---------------------------------------------------------------------------- proxy events


def test_proxy_event_carries_multi_value_headers_and_query_like_api_gateway(
    gateway, fake_functions
):
    # Given repeated headers (in two spellings) and a repeated, encoded query parameter
    headers = (*ALLOW_HEADERS, ("X-Multi", "1"), ("x-multi", "2"), ("User-Agent", "probe/1"))
    call(gateway, "GET", "/items/42?tag=a&tag=b&q=x%20y&empty=", headers)
    event = proxy_event(fake_functions)
    # Then single-value maps keep the last value and multi-value maps keep all of them
    assert event["headers"]["X-Multi"] == "2"
    assert event["multiValueHeaders"]["X-Multi"] == ["1", "2"]
    assert event["queryStringParameters"] == {"tag": "b", "q": "x y", "empty": ""}
    assert event["multiValueQueryStringParameters"] == {
        "tag": ["a", "b"],
        "q": ["x y"],
        "empty": [""],
    }
    assert event["pathParameters"] == {"itemId": "42"}
    assert event["resource"] == "/items/{itemId}"
    assert event["path"] == "/items/42"
    assert event["httpMethod"] == "GET"
    assert event["stageVariables"] is None
    assert event["body"] is None
    assert event["isBase64Encoded"] is False


def test_absent_query_and_path_parameters_are_null(gateway, fake_functions):
    call(gateway, "POST", "/open", headers=())
    event = proxy_event(fake_functions)
    assert event["queryStringParameters"] is None
    assert event["multiValueQueryStringParameters"] is None
    assert event["pathParameters"] is None


def test_request_context_describes_stage_resource_and_caller(gateway, fake_functions):
    call(
        gateway,
        "GET",
        "/items/42",
        (*ALLOW_HEADERS, ("User-Agent", "probe/1"), ("Host", "127.0.0.1:3000")),
    )
    context = proxy_event(fake_functions)["requestContext"]
    assert context["resourcePath"] == "/items/{itemId}"
    assert context["httpMethod"] == "GET"
    assert context["path"] == "/test/items/42"
    assert context["stage"] == "test"
    assert context["apiId"] == API_ID
    assert context["accountId"] == "123456789012"
    assert context["protocol"] == "HTTP/1.1"
    assert context["domainName"] == "127.0.0.1:3000"
    assert context["identity"]["sourceIp"] == "127.0.0.1"
    assert context["identity"]["userAgent"] == "probe/1"
    assert uuid.UUID(context["requestId"])
    assert context["extendedRequestId"]
    assert isinstance(context["requestTimeEpoch"], int)
    assert re.fullmatch(r"\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d \+0000", context["requestTime"])


def test_text_bodies_are_strings_and_binary_bodies_base64(gateway, fake_functions):
    call(gateway, "POST", "/open", (("Content-Type", "application/json"),), b'{"a": "\xc3\xa9"}')
    call(gateway, "POST", "/open", (("Content-Type", "image/png"),), b"\x89PNG\x00")
    text_event, binary_event = fake_functions.calls_to("EchoFunction")
    assert text_event["body"] == '{"a": "é"}'
    assert text_event["isBase64Encoded"] is False
    assert binary_event["isBase64Encoded"] is True
    assert base64.b64decode(binary_event["body"]) == b"\x89PNG\x00"


# ---------------------------------------------------------------------------- authorizer flow


@pytest.mark.parametrize(
    "headers",
    [
        (("X-Tenant", "t1"),),
        (("Authorization", "allow"),),
        (("Authorization", ""), ("X-Tenant", "t1")),
        (("Authorization", "   "), ("X-Tenant", "t1")),
    ],
    ids=["no-authorization", "no-x-tenant", "empty", "blank"],
)
def test_missing_identity_header_is_401_without_calling_the_authorizer(
    gateway, fake_functions, headers
):
    response = call(gateway, "GET", "/items/42", headers)
    assert response.status == 401
    assert body_of(response) == {"info": "Authentication required", "reason": "UNAUTHENTICATED"}
    assert response.header("WWW-Authenticate") == "Bearer"
    assert fake_functions.calls == []


def test_authorizer_raising_unauthorized_is_401(gateway, fake_functions):
    fake_functions.behaviours["AuthorizerFunction"] = failed("Unauthorized")
    response = call(gateway, "GET", "/items/42")
    assert response.status == 401
    assert body_of(response)["reason"] == "UNAUTHENTICATED"
    assert fake_functions.calls_to("EchoFunction") == []


@pytest.mark.parametrize(
    "behaviour",
    [
        failed("database down", "RuntimeError"),
        failed("unauthorized"),  # the message must be exactly "Unauthorized"
        lambda _event: InvokeResult(status="timeout", error_type="Sandbox.Timedout"),
        ok({"principalId": "x"}),
        ok("Allow"),
    ],
    ids=["error", "wrong-case", "timeout", "no-policy", "not-an-object"],
)
def test_authorizer_failure_or_malformed_answer_is_500_through_default_5xx(
    gateway, fake_functions, behaviour
):
    fake_functions.behaviours["AuthorizerFunction"] = behaviour
    response = call(gateway, "GET", "/items/42")
    assert response.status == 500
    request_id = response.header("x-amzn-RequestId")
    assert body_of(response) == {
        "info": f"failed (request {request_id})",
        "reason": "INTERNAL_ERROR",
    }
    assert fake_functions.calls_to("EchoFunction") == []


def test_authorizer_deny_is_403_access_denied(gateway, fake_functions):
    def deny(event: dict[str, Any]) -> InvokeResult:
        answer = allow_method_arn(event).payload
        answer["policyDocument"]["Statement"][0]["Effect"] = "Deny"
        return InvokeResult(status="ok", payload=answer)

    fake_functions.behaviours["AuthorizerFunction"] = deny
    response = call(gateway, "GET", "/items/42")
    # No ACCESS_DENIED in the fixture template: DEFAULT_4XX renders API Gateway's message
    assert response.status == 403
    assert body_of(response) == {
        "info": "User is not authorized to access this resource with an explicit deny",
        "reason": "BAD_REQUEST",
    }
    assert fake_functions.calls_to("EchoFunction") == []


def test_authorizer_event_is_a_request_event_with_the_method_arn(gateway, fake_functions):
    call(gateway, "GET", "/items/42?x=1")
    (event,) = fake_functions.calls_to("AuthorizerFunction")
    assert event["type"] == "REQUEST"
    assert (
        event["methodArn"]
        == f"arn:aws:execute-api:us-east-1:123456789012:{API_ID}/test/GET/items/42"
    )
    assert event["resource"] == "/items/{itemId}"
    assert event["path"] == "/items/42"
    assert event["httpMethod"] == "GET"
    assert event["headers"]["Authorization"] == "allow"
    assert event["multiValueHeaders"]["X-Tenant"] == ["t1"]
    assert event["queryStringParameters"] == {"x": "1"}
    assert event["pathParameters"] == {"itemId": "42"}
    assert event["requestContext"]["requestId"]
    assert "authorizer" not in event["requestContext"]


def test_allowed_request_carries_the_authorizer_context_and_principal(gateway, fake_functions):
    response = call(gateway, "GET", "/items/42")
    assert response.status == 200
    authorizer = proxy_event(fake_functions)["requestContext"]["authorizer"]
    assert authorizer["principalId"] == "user-1"
    assert authorizer["tenantId"] == "7"
    assert authorizer["admin"] == "false"


def test_open_route_skips_the_authorizer(gateway, fake_functions):
    response = call(gateway, "POST", "/open", headers=())
    assert response.status == 200
    assert fake_functions.calls_to("AuthorizerFunction") == []
    assert "authorizer" not in proxy_event(fake_functions)["requestContext"]


def test_authorizer_answer_is_cached_per_identity_for_reauthorize_every(
    gateway, fake_functions, clock
):
    # Given two requests with the same identity within the 60 s TTL
    call(gateway, "GET", "/items/42")
    clock.now += 59
    call(gateway, "GET", "/items/42")
    assert len(fake_functions.calls_to("AuthorizerFunction")) == 1
    # When another identity calls, it is authorized on its own
    call(gateway, "GET", "/items/42", (("Authorization", "allow"), ("X-Tenant", "t2")))
    assert len(fake_functions.calls_to("AuthorizerFunction")) == 2
    # And once the TTL has passed the first identity is authorized again
    clock.now += 1
    call(gateway, "GET", "/items/42")
    assert len(fake_functions.calls_to("AuthorizerFunction")) == 3


def test_cached_policy_is_evaluated_against_each_new_method_arn(gateway, fake_functions):
    # Given an authorizer that allowed exactly /items/42 for this identity
    assert call(gateway, "GET", "/items/42").status == 200
    # When the same identity calls /items/43 within the TTL
    response = call(gateway, "GET", "/items/43")
    # Then the cached policy does not cover it: 403 without asking the authorizer again
    assert response.status == 403
    assert body_of(response)["info"] == "User is not authorized to access this resource"
    assert len(fake_functions.calls_to("AuthorizerFunction")) == 1


def test_zero_reauthorize_every_calls_the_authorizer_every_time(gateway, fake_functions):
    call(gateway, "GET", "/uncached", (("Authorization", "allow"),))
    call(gateway, "GET", "/uncached", (("Authorization", "allow"),))
    assert len(fake_functions.calls_to("AuthorizerFunction")) == 2


def test_request_log_line_says_how_the_request_was_authorized(gateway, console):
    response = call(gateway, "GET", "/items/42", headers=())
    request_id = response.header("x-amzn-RequestId")
    (line,) = [line for line in console.lines if request_id in line]
    assert line.startswith("GET /items/42 401 ")
    assert "auth=missing-identity" in line


# ---------------------------------------------------------------------------- integration results


def test_proxy_result_becomes_the_http_response(gateway, fake_functions):
    fake_functions.behaviours["EchoFunction"] = ok(
        {
            "statusCode": 201,
            "headers": {"X-One": "1", "X-Both": "single"},
            "multiValueHeaders": {"Set-Cookie": ["a=1", "b=2"], "X-Both": ["multi"]},
            "body": base64.b64encode(b"\x00\x01").decode(),
            "isBase64Encoded": True,
        }
    )
    response = call(gateway, "GET", "/items/42")
    assert response.status == 201
    assert response.body == b"\x00\x01"
    assert response.header("X-One") == "1"
    assert [value for name, value in response.headers if name == "Set-Cookie"] == ["a=1", "b=2"]
    # A header in both maps comes from multiValueHeaders only
    assert [value for name, value in response.headers if name == "X-Both"] == ["multi"]
    # API Gateway's REST default content type when the function sets none
    assert response.header("Content-Type") == "application/json"


@pytest.mark.parametrize(
    "behaviour",
    [
        failed("boom", "RuntimeError"),
        ok({"statusCode": 200, "body": {"not": "a string"}}),
        ok({"statusCode": 200, "body": "x", "extra": 1}),
        ok({"body": "no status"}),
        ok({"statusCode": 999}),
        ok(None),
        ok({"statusCode": 200, "headers": {"X": ["list"]}}),
    ],
    ids=["error", "body-object", "extra-key", "no-status", "bad-status", "null", "header-list"],
)
def test_function_error_or_malformed_proxy_result_is_502_through_default_5xx(
    gateway, fake_functions, behaviour
):
    fake_functions.behaviours["EchoFunction"] = behaviour
    response = call(gateway, "GET", "/items/42")
    assert response.status == 502
    assert body_of(response)["reason"] == "INTERNAL_ERROR"
    assert response.header("x-amzn-ErrorType") == "InternalServerErrorException"


def test_a_throttled_integration_is_500_through_default_5xx_not_429(gateway, fake_functions):
    # Given a function with no concurrency left (Lambda's TooManyRequestsException)
    fake_functions.behaviours["EchoFunction"] = lambda _event: throttled_result(
        RESERVED_LIMIT_EXCEEDED
    )
    response = call(gateway, "GET", "/items/42")
    # Then API Gateway answers a Lambda proxy integration's throttle with 500 (not 502, not 429)
    assert response.status == 500
    assert body_of(response)["reason"] == "INTERNAL_ERROR"
    assert response.header("x-amzn-ErrorType") == "InternalServerErrorException"


def test_a_throttled_authorizer_is_500_and_its_failure_is_not_cached(gateway, fake_functions):
    # Given an authorizer that is throttled once, then answers
    answers = iter([throttled_result(ACCOUNT_LIMIT_EXCEEDED)])
    fake_functions.behaviours["AuthorizerFunction"] = lambda event: (
        next(answers, None) or allow_method_arn(event)
    )
    first = call(gateway, "GET", "/items/42")
    # Then the request is the authorizer configuration error (500), the integration not called
    assert first.status == 500
    assert first.header("x-amzn-ErrorType") == "AuthorizerConfigurationException"
    assert fake_functions.calls_to("EchoFunction") == []
    # And the same identity right after is authorized afresh, not refused from a cache
    assert call(gateway, "GET", "/items/42").status == 200
    assert len(fake_functions.calls_to("AuthorizerFunction")) == 2


def test_a_gateway_failure_still_answers_500(gateway, fake_functions, console):
    def explode(_event: Any) -> InvokeResult:
        raise RuntimeError("bug in the emulator")

    fake_functions.behaviours["EchoFunction"] = explode
    response = call(gateway, "GET", "/items/42")
    assert response.status == 500
    assert body_of(response)["reason"] == "INTERNAL_ERROR"
    assert "RuntimeError: bug in the emulator" in console.text()


def test_function_timeout_is_504(gateway, fake_functions):
    fake_functions.behaviours["EchoFunction"] = lambda _e: InvokeResult(
        status="timeout",
        error_type="Sandbox.Timedout",
        error_message="Task timed out after 5.00 seconds",
    )
    response = call(gateway, "GET", "/items/42")
    assert response.status == 504
    assert body_of(response)["reason"] == "INTERNAL_ERROR"


def test_body_over_10_mb_is_413_request_too_large(gateway, fake_functions):
    response = call(gateway, "POST", "/open", headers=(), body=b"x" * (MAX_REQUEST_BODY_BYTES + 1))
    assert response.status == 413
    assert body_of(response) == {"info": "Request Too Long", "reason": "BAD_REQUEST"}
    assert fake_functions.calls == []


# ---------------------------------------------------------------------------- gateway responses


def test_message_string_is_json_quoted_in_templates(fixture_template):
    api = fixture_template.apis["ProbeApi"]
    response = render_gateway_response(
        api, GatewayError("THROTTLED", 'Too "many" requests'), context_variables={}
    )
    # THROTTLED has no entry: DEFAULT_4XX's template with the type's own status
    assert response.status == 429
    assert body_of(response) == {"info": 'Too "many" requests', "reason": "BAD_REQUEST"}


def test_static_header_quotes_are_stripped_and_request_headers_mapped(fixture_template):
    api = fixture_template.apis["ProbeApi"]
    response = render_gateway_response(
        api,
        GatewayError("UNAUTHORIZED", "Unauthorized"),
        context_variables={},
        request_headers=(("Origin", "https://example.test"),),
    )
    assert response.header("WWW-Authenticate") == "Bearer"
    assert response.header("X-Echo-Origin") == "https://example.test"


def test_request_id_is_substituted_into_templates(fixture_template):
    api = fixture_template.apis["ProbeApi"]
    response = render_gateway_response(
        api,
        GatewayError("DEFAULT_5XX", "Internal server error", 502),
        context_variables={"requestId": "r-1"},
    )
    assert body_of(response) == {"info": "failed (request r-1)", "reason": "INTERNAL_ERROR"}


@pytest.mark.parametrize(
    ("error", "status", "body"),
    [
        (GatewayError("UNAUTHORIZED", "Unauthorized"), 401, {"message": "Unauthorized"}),
        (
            GatewayError("MISSING_AUTHENTICATION_TOKEN", "Missing Authentication Token"),
            403,
            {"message": "Missing Authentication Token"},
        ),
        (
            GatewayError("ACCESS_DENIED", "User is not authorized to access this resource"),
            403,
            {"Message": "User is not authorized to access this resource"},
        ),
        (GatewayError("AUTHORIZER_CONFIGURATION_ERROR", None), 500, {"message": None}),
        (
            GatewayError("DEFAULT_5XX", "Internal server error", 502),
            502,
            {"message": "Internal server error"},
        ),
    ],
)
def test_without_gateway_responses_api_gateway_defaults_apply(error, status, body):
    response = render_gateway_response(None, error, context_variables={})
    assert response.status == status
    assert body_of(response) == body


# ---------------------------------------------------------------------------- over HTTP


@pytest.fixture
def served(gateway):
    server = GatewayServer("127.0.0.1", 0)
    server.start(gateway)
    yield server
    server.stop()


def test_oversized_content_length_is_refused_before_the_body_is_read(served, fake_functions):
    # Given a request announcing 10 MB + 1 byte and sending none of it
    with socket.create_connection(("127.0.0.1", served.port), timeout=5) as connection:
        announced = MAX_REQUEST_BODY_BYTES + 1
        connection.sendall(
            f"POST /open HTTP/1.1\r\nHost: x\r\nContent-Length: {announced}\r\n\r\n".encode()
        )
        reply = connection.recv(65536).decode()
    # Then the gateway answers 413 at once and closes the connection
    assert reply.startswith("HTTP/1.1 413")
    assert "Connection: close" in reply
    assert fake_functions.calls == []


def _raw_exchange(port: int, request: bytes) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(request)
        reply = b""
        while chunk := connection.recv(65536):
            reply += chunk
    return reply.decode()


@pytest.mark.parametrize("length", ["-1", "abc", "1e3", "5, 7", " "])
def test_negative_or_malformed_content_length_is_400_error_info(served, fake_functions, length):
    # Given a request whose Content-Length cannot frame a body (-1 used to hang the connection)
    reply = _raw_exchange(
        served.port, f"POST /open HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n".encode()
    )
    # Then it is a 400 ErrorInfo at once, the connection closes, and no function ran
    head, _, body = reply.partition("\r\n\r\n")
    assert head.startswith("HTTP/1.1 400")
    assert "Connection: close" in head
    assert set(json.loads(body)) == {"info", "reason"}
    assert fake_functions.calls == []


@pytest.mark.parametrize("method", ["TRACE", "CONNECT", "PROPFIND", "BREW"])
def test_a_method_api_gateway_has_no_route_for_gets_its_gateway_response(served, method):
    # Given a method no route maps (http.server would answer 501 with an HTML page)
    reply = _raw_exchange(
        served.port, f"{method} /open HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
    )
    # Then the answer is API Gateway's for a route that does not exist, from the template's
    # MISSING_AUTHENTICATION_TOKEN gateway response, exactly as for an unknown path
    unknown_path = httpx.get(f"{served.url}/nowhere")
    head, _, body = reply.partition("\r\n\r\n")
    assert head.startswith(f"HTTP/1.1 {unknown_path.status_code}"), head
    assert "x-amzn-ErrorType: MissingAuthenticationTokenException" in head
    assert json.loads(body) == unknown_path.json()


def test_http_level_refusals_are_error_info_too(served):
    # Given a request line http.server cannot parse
    reply = _raw_exchange(served.port, b"GET /open HTTP/1.1 extra\r\n\r\n")
    head, _, body = reply.partition("\r\n\r\n")
    # Then the 400 is JSON ErrorInfo, not an HTML page
    assert head.startswith("HTTP/1.1 400")
    assert json.loads(body)["reason"] == "BAD_REQUEST"


def test_no_response_names_the_server_software(served):
    # When any request is answered
    replies = [
        httpx.get(f"{served.url}/nowhere"),
        httpx.request("TRACE", f"{served.url}/open"),
    ]
    # Then no Server header tells which software (and version) answered
    assert all("server" not in reply.headers for reply in replies)


def test_a_hundred_simultaneous_connections_are_all_answered(served):
    # Given 100 clients that connect at the same moment (the listen backlog used to be 5)
    barrier = threading.Barrier(100)

    def one_client(_: int) -> int:
        barrier.wait(timeout=10)
        with socket.create_connection(("127.0.0.1", served.port), timeout=30) as connection:
            connection.sendall(b"GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return int(connection.recv(64).split(b" ")[1])

    # The kernel queues at most the listen backlog of connections not yet accepted.
    listening = subprocess.run(
        ["ss", "-Hltn", f"sport = :{served.port}"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert int(listening[2]) >= 100  # LISTEN's Send-Q column is its backlog
    with concurrent.futures.ThreadPoolExecutor(max_workers=100) as pool:
        statuses = list(pool.map(one_client, range(100)))
    # Then none was reset: every one got its answer
    assert statuses == [httpx.get(f"{served.url}/nowhere").status_code] * 100


def test_keep_alive_responses_are_not_held_back_by_nagle(served):
    # Given one keep-alive connection (headers and body leave in separate writes)
    with httpx.Client(base_url=served.url) as client:
        client.get("/nowhere")
        started = time.monotonic()
        for _ in range(20):
            client.get("/nowhere")
        elapsed = time.monotonic() - started
    # Then twenty requests take far less than twenty delayed ACKs (about 40 ms each)
    assert elapsed < 0.4


def test_port_in_use_is_reported_as_such(served):
    from local.aws import PortInUseError

    with pytest.raises(PortInUseError):
        GatewayServer("127.0.0.1", served.port)


def test_full_request_path_through_real_workers(fixture_template, console):
    # Given the probe template served with real worker processes
    runtime = LambdaRuntime(
        fixture_template, "http://127.0.0.1:9", log=console, reload_on_change=False
    )
    server = GatewayServer("127.0.0.1", 0)
    server.start(ApiGateway(fixture_template, runtime.invoke, log=console))
    try:
        # When an allowed request is made over HTTP
        response = httpx.get(
            f"{server.url}/items/42?tag=a",
            headers={"Authorization": "allow", "X-Tenant": "t1"},
            timeout=30,
        )
        denied = httpx.get(
            f"{server.url}/items/42", headers={"Authorization": "deny", "X-Tenant": "t1"}
        )
        refused = httpx.get(
            f"{server.url}/items/42", headers={"Authorization": "unauthorized", "X-Tenant": "t1"}
        )
    finally:
        server.stop()
        runtime.shutdown()
    # Then the echo function saw the proxy event with the authorizer's context
    assert response.status_code == 200
    assert response.headers["X-Probe"] == "echo"
    event = response.json()["event"]
    assert event["pathParameters"] == {"itemId": "42"}
    assert event["requestContext"]["authorizer"]["tenantId"] == "7"
    assert event["requestContext"]["authorizer"]["principalId"] == "probe-user"
    assert denied.status_code == 403
    assert refused.status_code == 401
