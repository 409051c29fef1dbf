"""The console's sign-in link and cookie follow the address the browser used (docs/console.md)."""

from datetime import timedelta
from typing import Any

from psap.console.links import base_url, console_path, request_is_https, sign_in_url
from psap.console.sessions import set_cookie_header


def event(host: str, proto: str = "https", stage: str = "Prod") -> dict[str, Any]:
    return {
        "headers": {"Host": host, "X-Forwarded-Proto": proto},
        "requestContext": {"stage": stage},
    }


def test_on_api_gateways_own_host_the_stage_is_in_the_link_and_the_cookie_path() -> None:
    gateway = event("abc123.execute-api.us-east-1.amazonaws.com")
    assert base_url(gateway) == "https://abc123.execute-api.us-east-1.amazonaws.com/Prod"
    assert console_path(gateway) == "/Prod/console"
    assert sign_in_url(base_url(gateway), "c0de") == (
        "https://abc123.execute-api.us-east-1.amazonaws.com/Prod/console/#code=c0de"
    )


def test_on_a_custom_domain_or_the_local_stack_there_is_no_stage() -> None:
    assert base_url(event("psap.riverside.example")) == "https://psap.riverside.example"
    local = event("127.0.0.1:3000", proto="http")
    assert base_url(local) == "http://127.0.0.1:3000"
    assert console_path(local) == "/console"
    assert not request_is_https(local)


def test_the_cookie_is_http_only_strict_and_secure_over_https() -> None:
    cookie = set_cookie_header(
        "tok", secure=True, max_age=timedelta(hours=12), path="/Prod/console"
    )
    parts = cookie.split("; ")
    assert parts[0] == "psap_console=tok"
    assert {"Path=/Prod/console", "Max-Age=43200", "HttpOnly", "SameSite=Strict", "Secure"} <= set(
        parts
    )
    assert "Secure" not in set_cookie_header("tok", secure=False, max_age=timedelta(hours=1))
