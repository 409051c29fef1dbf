"""The local API gateway over real HTTP: routing, the missing-token short cut, open routes."""

import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.e2e

LIST = "/api/v1/external/knowledge"


def _request_line(log: str, request_id: str) -> str:
    lines = [line for line in log.splitlines() if f"requestId={request_id}" in line]
    assert len(lines) == 1, f"expected one request line for {request_id}"
    return lines[0]


def test_unknown_path_is_404_error_info(stack: dict[str, Any]) -> None:
    answer = httpx.get(stack["baseUrl"] + "/api/v1/external/no-such-thing", timeout=30)
    assert answer.status_code == 404
    assert answer.json() == {"info": "No such operation", "reason": "NOT_FOUND"}


def test_unknown_method_on_a_known_path_is_404_error_info(stack: dict[str, Any]) -> None:
    answer = httpx.request("PATCH", stack["baseUrl"] + LIST, timeout=30)
    assert answer.status_code == 404
    assert answer.json() == {"info": "No such operation", "reason": "NOT_FOUND"}


def test_missing_authorization_is_401_without_calling_the_authorizer(
    stack: dict[str, Any], stack_log: Callable[[], str]
) -> None:
    # When the knowledge list is called without an Authorization header
    answer = httpx.get(stack["baseUrl"] + LIST, timeout=30)
    # Then the body is exactly the spec's ErrorInfo
    assert answer.status_code == 401
    assert answer.json() == {"info": "Authentication required", "reason": "UNAUTHENTICATED"}
    assert answer.headers["WWW-Authenticate"] == "Bearer"
    # And the gateway answered from the identity-source check, not from the authorizer
    line = _request_line(stack_log(), answer.headers["x-amzn-RequestId"])
    assert re.match(rf"GET {LIST} 401 \d+ms ", line)
    assert line.endswith("auth=missing-identity")


def test_openapi_document_is_served_without_authentication(
    stack: dict[str, Any], stack_log: Callable[[], str]
) -> None:
    answer = httpx.get(stack["baseUrl"] + "/api/v1/external/openapi.json", timeout=30)
    assert answer.status_code == 200
    assert answer.json()["openapi"].startswith("3.")
    line = _request_line(stack_log(), answer.headers["x-amzn-RequestId"])
    assert line.endswith("auth=none")


def test_state_file_names_the_template_resources(stack: dict[str, Any]) -> None:
    assert stack["baseUrl"].startswith("http://127.0.0.1:")
    assert stack["awsEndpointUrl"].startswith("http://127.0.0.1:")
    assert stack["region"] == "us-east-1"
    assert stack["resources"]["AuthTable"] == "psap-local-AuthTable"
    assert stack["resources"]["KnowledgeTable"] == "psap-local-KnowledgeTable"
