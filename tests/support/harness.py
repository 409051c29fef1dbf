"""One way for the tests to call a function's handler in-process: `HandlerHarness`.

The event is a sample of events/ (the `load_event` fixture) shaped for the call as API
Gateway fills it after the authorizer, or as SQS delivers it; the handler is the function's
app.py imported on first use, as a cold start would, running under its function's role (the
`import_function` fixture). The helpers below shape a proxy event and read its answer back;
each area's harness (KnowledgeApi, TenantDataApi, MediaApi, AdminApi, ApiCaller, CadFunctions,
McpHarness, in the modules beside this one) is a HandlerHarness with its own operations. A
test module's `api` fixture (tests/integration/conftest.py) is the one its `harness` mark names.
"""

import json
from collections.abc import Callable
from types import ModuleType
from typing import Any


def with_path(event: dict[str, Any], path: dict[str, str]) -> None:
    """Path parameters, and the concrete path the client called."""
    event["pathParameters"] = path
    concrete = str(event["resource"])
    for name, value in path.items():
        concrete = concrete.replace("{" + name + "}", value)
    event["path"] = concrete


def with_query(event: dict[str, Any], query: dict[str, str] | None) -> None:
    event["queryStringParameters"] = query or None
    event["multiValueQueryStringParameters"] = (
        {name: [value] for name, value in query.items()} if query else None
    )


def with_caller(
    event: dict[str, Any],
    tenant: int,
    permissions: str | None,
    *,
    credential_id: str | None = None,
    kind: str | None = None,
) -> None:
    """What the authorizer put in the request context for this credential (a value left
    None keeps the sample's)."""
    authorizer = event["requestContext"]["authorizer"]
    authorizer["tenantId"] = str(tenant)
    if permissions is not None:
        authorizer["permissions"] = permissions
    if kind is not None:
        authorizer["kind"] = kind
    if credential_id is not None:
        authorizer["credentialId"] = credential_id


def with_headers(event: dict[str, Any], headers: dict[str, str]) -> None:
    """The request's headers, one value each."""
    event["headers"] = headers
    event["multiValueHeaders"] = {name: [value] for name, value in headers.items()}


def json_body(body: Any, raw_body: str | None = None) -> str | None:
    """A request body: `raw_body` as sent, else `body` as JSON, else none."""
    if raw_body is not None:
        return raw_body
    return None if body is None else json.dumps(body)


def answer_of(answer: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
    """Status, parsed JSON body, and headers (multi-value ones by their last value)."""
    headers = dict(answer.get("headers") or {})
    for name, values in (answer.get("multiValueHeaders") or {}).items():
        headers[name] = values[-1]
    return answer["statusCode"], json.loads(answer.get("body") or "null"), headers


class HandlerHarness:
    """Calls functions' handlers with their sample events; built from the conftest fixtures
    import_function, load_event and lambda_context."""

    def __init__(
        self,
        import_function: Callable[[str], ModuleType],
        load_event: Callable[[str], dict[str, Any]],
        lambda_context: Any,
    ) -> None:
        self.load_event = load_event
        self.context = lambda_context
        self._import = import_function
        self._handlers: dict[str, Any] = {}
        self.prepare()

    def prepare(self) -> None:
        """What a harness sets up for itself once it can call handlers (nothing here)."""

    def handler(self, directory: str) -> Any:
        """The handler of functions/<directory>, imported on first use (as a cold start)."""
        if directory not in self._handlers:
            self._handlers[directory] = self._import(directory).handler
        return self._handlers[directory]

    def call_handler(self, directory: str, event: dict[str, Any]) -> Any:
        """The handler's raw answer to `event`."""
        return self.handler(directory)(event, self.context)

    def proxy_event(
        self,
        name: str,
        *,
        tenant: int,
        permissions: str | None,
        credential_id: str | None = None,
        kind: str | None = None,
        path: dict[str, str] | None = None,
        body: str | None = None,
    ) -> dict[str, Any]:
        """The sample event events/<name>.json as this caller's request (path and body
        replaced only when given)."""
        event = self.load_event(name)
        # The sample event's `${UNIQUE}` makes each `psap-local invoke` a new record; here
        # every test has a fresh table, so the plain value is what the tests name.
        if isinstance(event.get("body"), str):
            event["body"] = event["body"].replace("-${UNIQUE}", "")
        if path is not None:
            with_path(event, path)
        if body is not None:
            event["body"] = body
        with_caller(event, tenant, permissions, credential_id=credential_id, kind=kind)
        return event

    def answer(self, directory: str, event: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        """Status, parsed JSON body and headers of the handler's answer to `event`."""
        return answer_of(self.call_handler(directory, event))
