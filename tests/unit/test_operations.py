"""The permission table and the template's routes must agree, both ways."""

import pytest

from local.template import load_template
from psap.auth.permissions import Permission
from psap.console.paths import api_resource, is_console_api
from psap.http.operations import ADMIN_API_PREFIX, OPERATIONS


def template_routes() -> set[tuple[str, str]]:
    """The template's declared methods; ANY (every resource's 405 answer) is not one."""
    template = load_template()
    return {
        (event.method.upper(), event.path)
        for _, event in template.api_events()
        if event.method.upper() != "ANY"
    }


@pytest.mark.spec("data-auth-rule-2")
def test_every_route_of_the_template_declares_its_permissions() -> None:
    # A console API route is its admin operation (psap.console.paths).
    missing = {(method, api_resource(path)) for method, path in template_routes()} - set(OPERATIONS)
    assert not missing, f"routes without an entry in psap.http.operations: {missing}"


def test_every_declared_operation_is_a_route_of_the_template() -> None:
    stale = set(OPERATIONS) - template_routes()
    assert not stale, f"operations no route serves: {stale}"


@pytest.mark.spec("endpoints-permission-knowledge-list")
def test_knowledge_list_needs_view_or_manage_knowledge() -> None:
    operation = OPERATIONS[("GET", "/api/v1/external/knowledge")]
    assert operation.any_of == (Permission.VIEW_KNOWLEDGE, Permission.MANAGE_KNOWLEDGE)
    assert not operation.public


def test_operation_ids_are_unique() -> None:
    ids = [operation.operation_id for operation in OPERATIONS.values()]
    assert len(ids) == len(set(ids))


def test_the_console_reaches_every_admin_operation_but_the_sign_in_link_and_nothing_else() -> None:
    routes = template_routes()
    console = {(method, api_resource(path)) for method, path in routes if is_console_api(path)}
    admin = {
        key
        for key in OPERATIONS
        if key[1].startswith(ADMIN_API_PREFIX) or key[1].startswith("/api/v1/external/audit-log/")
    }
    assert console == admin - {("POST", "/api/v1/external/admin/console-links")}
