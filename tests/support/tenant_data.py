"""Calls the tenant-data read functions' handlers in-process, as API Gateway would after the
authorizer, for the users, enrollments, evaluations, incident and event tests."""

import itertools
import json
from typing import Any

from psap.config import tenant_data_table
from psap.storage.dynamodb import dynamodb
from tests.support.harness import HandlerHarness, with_query

# Tenant ids differ from test to test, so no test can pass on another's leftovers.
_TENANTS = itertools.count(1000, 2)

# The function folder, its sample event, and the permission its sample carries.
FUNCTIONS = {
    "users_list": "MANAGE_USERS",
    "enrollments_list": "MANAGE_PHASES",
    "evaluations_list": "VIEW_QA",
    "incident_get": "BROWSE_EVENTS",
    "event_get": "BROWSE_EVENTS",
}


class TenantDataApi(HandlerHarness):
    """The read functions, called for this test's own tenant (`tenant`) by default;
    `other_tenant` is a second tenant of the same test."""

    def prepare(self) -> None:
        self.tenant = next(_TENANTS)
        self.other_tenant = self.tenant + 1

    def call(
        self,
        function: str,
        path: dict[str, str] | None = None,
        query: dict[str, str] | None = None,
        *,
        tenant: int | None = None,
        permissions: str | None = None,
    ) -> tuple[int, Any]:
        event = self.proxy_event(
            function,
            tenant=tenant if tenant is not None else self.tenant,
            permissions=permissions or FUNCTIONS[function],
            path=path,
        )
        with_query(event, query)
        status, body, _ = self.answer(function, event)
        return status, body

    def users(
        self, tenant: int | None = None, query: dict[str, str] | None = None, **params: str
    ) -> tuple[int, Any]:
        return self.call("users_list", query={**(query or {}), **params}, tenant=tenant)

    def enrollments(self, user_id: int | str, tenant: int | None = None) -> tuple[int, Any]:
        return self.call("enrollments_list", path={"userId": str(user_id)}, tenant=tenant)

    def evaluations(
        self,
        user_id: int | str | None,
        tenant: int | None = None,
        query: dict[str, str] | None = None,
        **params: str,
    ) -> tuple[int, Any]:
        return self.call(
            "evaluations_list",
            path={"userId": str(user_id)},
            query={**(query or {}), **params},
            tenant=tenant,
        )

    def incident(self, incident_id: int | str, tenant: int | None = None) -> tuple[int, Any]:
        return self.call("incident_get", path={"incidentId": str(incident_id)}, tenant=tenant)

    def event(self, event_id: int | str, tenant: int | None = None) -> tuple[int, Any]:
        return self.call("event_get", path={"eventId": str(event_id)}, tenant=tenant)


class ItemsRead:
    """Counts DynamoDB items read by kind while installed: full (BatchGetItem and GetItem
    answers) and query items (pointers, counters, chunks)."""

    def __init__(self) -> None:
        self.batch_items = 0
        self.get_items = 0
        self.query_items = 0
        self.calls: list[str] = []
        dynamodb().meta.events.register("after-call.dynamodb", self._count)

    def _count(self, http_response: Any, parsed: dict[str, Any], model: Any, **_: Any) -> None:
        self.calls.append(model.name)
        if model.name == "BatchGetItem":
            self.batch_items += sum(len(items) for items in parsed.get("Responses", {}).values())
        elif model.name == "GetItem":
            self.get_items += 1 if "Item" in parsed else 0
        elif model.name == "Query":
            self.query_items += len(parsed.get("Items", []))

    @property
    def items(self) -> int:
        return self.batch_items + self.get_items + self.query_items

    def close(self) -> None:
        dynamodb().meta.events.unregister("after-call.dynamodb", self._count)


def strict_json(value: Any) -> str:
    """JSON text for exact comparison: 5 and 5.0 differ, key order does not."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def table() -> str:
    return tenant_data_table()
