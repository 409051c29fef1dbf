"""The sign-in link's address: the console of the stack that answered the request."""

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from psap.console.paths import CONSOLE_PREFIX

_EXECUTE_API_SUFFIX = ".amazonaws.com"


def header_value(headers: Mapping[str, Any] | None, name: str) -> str | None:
    for key, value in (headers or {}).items():
        if key.lower() == name.lower() and isinstance(value, str):
            return value
    return None


def request_is_https(event: Mapping[str, Any]) -> bool:
    """API Gateway says how the caller reached it in X-Forwarded-Proto (always https in AWS)."""
    return (header_value(event.get("headers"), "X-Forwarded-Proto") or "https").lower() == "https"


def base_url(event: Mapping[str, Any]) -> str:
    """Where the caller reached the API: on API Gateway's own host the stage is the first
    path segment; on a custom domain (and the local stack) it is not."""
    host = header_value(event.get("headers"), "Host") or "localhost"
    scheme = "https" if request_is_https(event) else "http"
    stage = str((event.get("requestContext") or {}).get("stage") or "")
    if host.split(":")[0].endswith(_EXECUTE_API_SUFFIX) and stage:
        return f"{scheme}://{host}/{stage}"
    return f"{scheme}://{host}"


def console_path(event: Mapping[str, Any]) -> str:
    """The console's path as the browser sees it (the cookie's Path): with the stage on API
    Gateway's own host, without it elsewhere."""
    return urlsplit(base_url(event)).path + CONSOLE_PREFIX


def sign_in_url(console_base: str, code: str) -> str:
    """The code rides in the fragment: browsers never send it to a server nor in a Referer;
    the page spends it at once and removes it from the address bar."""
    return f"{console_base.rstrip('/')}{CONSOLE_PREFIX}/#code={code}"
