"""The tenant admin API's functions in-process on moto, called as API Gateway calls them after
the partner authorizer. Each operation's function is the one template.yaml routes
to, found from the template's events, so a test cannot call a route the template lacks."""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from types import ModuleType
from typing import Any

from local.template import load_template
from psap.auth import store as auth_store
from psap.auth.credentials import OPERATOR, CredentialKind
from psap.auth.permissions import parse_permissions
from psap.clock import utc_now
from tests.support.harness import (
    HandlerHarness,
    answer_of,
    json_body,
    with_caller,
    with_headers,
    with_path,
    with_query,
)

TEMPLATE = load_template()
ADMIN_PREFIX = "/api/v1/external/admin"
# The label of the credentials the harness calls with (tests that compare the auth table
# before and after a call leave them out: a caller is issued at its first call).
CALLER_LABEL = "test caller"


def admin_routes() -> dict[tuple[str, str], str]:
    """(method, resource) -> the function directory template.yaml routes it to."""
    routes: dict[tuple[str, str], str] = {}
    for function in TEMPLATE.functions.values():
        for route in function.api_events:
            # ANY is every resource's 405 answer (functions/method_not_allowed), not an operation
            if route.path.startswith(ADMIN_PREFIX) and route.method.upper() != "ANY":
                routes[(route.method.upper(), route.path)] = function.code_dir.name
    return routes


@dataclass
class Reply:
    status: int
    body: Any
    headers: dict[str, str]
    raw: str = field(repr=False)


class AdminApi(HandlerHarness):
    """Calls an admin operation as a tenant's credential: permissions and tenant chosen per
    call, each pair a real credential of the auth table (the admin API re-reads its caller's
    credential). Every raw answer is kept, for the test that scans them for secrets."""

    def __init__(
        self,
        import_function: Callable[[str], ModuleType],
        load_event: Callable[[str], dict[str, Any]],
        lambda_context: Any,
        *,
        tenant: int,
    ) -> None:
        super().__init__(import_function, load_event, lambda_context)
        self.routes = admin_routes()
        self.tenant = tenant
        self.answers: list[str] = []
        self.callers: dict[tuple[int, str], str] = {}

    def caller(self, tenant: int, permissions: str) -> str:
        """The id of the harness's credential of `tenant` holding `permissions`."""
        if (tenant, permissions) not in self.callers:
            issued = auth_store.issue_credential(
                tenant,
                CredentialKind.PARTNER,
                parse_permissions(permissions),
                label=CALLER_LABEL,
                expires_at=utc_now() + timedelta(days=1),
                issued_by=OPERATOR,
            )
            self.callers[(tenant, permissions)] = issued.credential.credential_id
        return self.callers[(tenant, permissions)]

    def call(
        self,
        method: str,
        resource: str,
        *,
        path: dict[str, str] | None = None,
        query: dict[str, str] | None = None,
        body: Any = None,
        tenant: int | None = None,
        permissions: str = "ADMIN",
        raw_body: str | None = None,
        credential_id: str | None = None,
    ) -> Reply:
        """`credential_id`: call as that credential (its permissions must be `permissions`)
        rather than the harness's own."""
        directory = self.routes[(method, ADMIN_PREFIX + resource)]
        event = self.load_event(directory)
        event["resource"] = ADMIN_PREFIX + resource
        event["httpMethod"] = method
        event["requestContext"]["httpMethod"] = method
        with_path(event, path or {})
        if not path:
            event["pathParameters"] = None
        with_query(event, query)
        event["body"] = json_body(body, raw_body)
        headers = dict(event["headers"])
        if event["body"] is not None:
            headers["Content-Type"] = "application/json"
        with_headers(event, headers)
        tenant = self.tenant if tenant is None else tenant
        caller = credential_id or self.caller(tenant, permissions)
        with_caller(event, tenant, permissions, credential_id=caller)
        answer = self.call_handler(directory, event)
        self.answers.append(str(answer.get("body") or ""))
        status, parsed, answer_headers = answer_of(answer)
        return Reply(status, parsed, answer_headers, str(answer.get("body") or ""))
