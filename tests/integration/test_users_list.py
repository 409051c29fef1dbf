"""GET /api/v1/external/user through its Lambda handler, on moto tables built from
template.yaml: the User shape, the Spring-style page, sorting, filters, permissions and
tenant isolation."""

from typing import Any

import pytest

from psap.storage.dynamodb import dynamodb
from psap.users.models import User
from psap.users.store import bulk_load_users, put_user
from tests.support.spec_examples import SPEC_FIELDS, USER
from tests.support.tenant_data import (
    ItemsRead,
    TenantDataApi,
    strict_json,
    table,
)

pytestmark = pytest.mark.harness(api=TenantDataApi)


def user(user_id: int, last: str = "Smith", first: str = "Sam", **fields: Any) -> User:
    email = fields.pop("email", f"{first}.{last}.{user_id}@example.org".lower())
    return User(id=user_id, first_name=first, last_name=last, email=email, **fields)


def load(tenant: int, users: list[User]) -> None:
    bulk_load_users(tenant, users)


def ids(body: dict[str, Any]) -> list[int]:
    return [item["id"] for item in body["content"]]


@pytest.mark.spec("resources-user-fields")
def test_user_shape_is_the_specs_field_for_field(api: TenantDataApi) -> None:
    # Given a user with every field of the spec's User table set
    put_user(api.tenant, User.model_validate(USER))
    # When the tenant lists its users
    status, body = api.users()
    # Then the user reads back exactly, with the spec's names and types
    assert status == 200
    (listed,) = body["content"]
    assert set(listed) == SPEC_FIELDS["user"]
    assert strict_json(listed) == strict_json({**USER, "tenantId": api.tenant})


@pytest.mark.spec("resources-user-fields")
def test_absent_user_fields_are_null_not_missing(api: TenantDataApi) -> None:
    put_user(api.tenant, User(id=5))
    _, body = api.users()
    (listed,) = body["content"]
    assert set(listed) == SPEC_FIELDS["user"]
    assert listed["email"] is None and listed["lastLoginAt"] is None
    assert listed["tenantId"] == api.tenant  # the tenant written to, whatever the record said


@pytest.mark.spec("resources-spring-page-fields")
def test_spring_page_of_an_empty_tenant(api: TenantDataApi) -> None:
    status, body = api.users()
    assert status == 200
    assert body == {
        "totalElements": 0,
        "totalPages": 0,
        "first": True,
        "last": True,
        "size": 20,
        "content": [],
        "number": 0,
        "numberOfElements": 0,
        "empty": True,
        "sort": {"empty": True, "sorted": False, "unsorted": True},
        "pageable": {
            "offset": 0,
            "sort": {"empty": True, "sorted": False, "unsorted": True},
            "pageNumber": 0,
            "pageSize": 20,
            "paged": True,
            "unpaged": False,
        },
    }


@pytest.mark.spec("resources-spring-page-fields")
def test_spring_page_arithmetic_first_middle_last_and_past_the_end(api: TenantDataApi) -> None:
    load(api.tenant, [user(n) for n in range(1, 26)])  # 25 users, pages of 10: 10, 10, 5
    _, first = api.users(size="10")
    _, middle = api.users(page="1", size="10")
    _, last = api.users(page="2", size="10")
    _, past = api.users(page="7", size="10")
    assert set(first) == SPEC_FIELDS["page"]
    assert (first["first"], first["last"], first["numberOfElements"]) == (True, False, 10)
    assert (middle["first"], middle["last"], middle["number"]) == (False, False, 1)
    assert (last["first"], last["last"], last["numberOfElements"]) == (False, True, 5)
    assert ids(first) + ids(middle) + ids(last) == list(range(1, 26))
    assert past["content"] == [] and past["empty"] is True
    assert (past["last"], past["totalElements"], past["totalPages"]) == (True, 25, 3)
    assert past["pageable"]["offset"] == 70
    assert middle["pageable"] == {
        "offset": 10,
        "sort": {"empty": True, "sorted": False, "unsorted": True},
        "pageNumber": 1,
        "pageSize": 10,
        "paged": True,
        "unpaged": False,
    }


@pytest.mark.spec("resources-spring-page-fields")
def test_exactly_full_pages_have_no_extra_page(api: TenantDataApi) -> None:
    load(api.tenant, [user(n) for n in range(1, 21)])
    _, body = api.users()
    assert (body["totalPages"], body["last"], body["size"]) == (1, True, 20)


def test_size_above_200_is_reduced_to_200(api: TenantDataApi) -> None:
    load(api.tenant, [user(n) for n in range(1, 202)])
    status, body = api.users(size="1000")
    assert status == 200
    assert (body["size"], body["numberOfElements"], body["totalPages"]) == (200, 200, 2)
    assert body["pageable"]["pageSize"] == 200


SORTS = {
    "lastName": [3, 2, 4, 1],
    "lastName,asc": [3, 2, 4, 1],
    "lastName,desc": [1, 4, 2, 3],
    "firstName,asc": [4, 1, 3, 2],
    "email,asc": [2, 1, 3, 4],
    "id,desc": [4, 3, 2, 1],
}


def test_sort_by_an_allowed_property_and_direction(api: TenantDataApi) -> None:
    # Given names that differ in case and by a suffix ("Brooks" before "Brooks Jr")
    load(
        api.tenant,
        [
            user(1, "Young", "Brian", email="c@x.org"),
            user(2, "brooks", "Olga", email="a@x.org"),
            user(3, "Alvarez", "Diego", email="d@x.org"),
            user(4, "Brooks Jr", "Aisha", email="e@x.org"),
        ],
    )
    for sort, expected in SORTS.items():
        status, body = api.users(sort=sort)
        assert (status, ids(body)) == (200, expected), sort
        assert body["sort"] == {"empty": False, "sorted": True, "unsorted": False}
        assert body["pageable"]["sort"] == body["sort"]


BAD_PARAMETERS = [
    ({"sort": "password"}, "sort"),
    ({"sort": "lastName,sideways"}, "sort"),
    ({"sort": "lastName,asc,again"}, "sort"),
    ({"sort": "lastName,DESC"}, "sort"),  # the documented enum, exactly
    ({"sort": ""}, "sort"),
    ({"page": "-1"}, "page"),
    ({"size": "0"}, "size"),
    ({"size": "many"}, "size"),
    ({"loginEnabled": "perhaps"}, "loginEnabled"),
    ({"isSupervisor": "2"}, "isSupervisor"),
]


@pytest.mark.spec("errors-error-info")
def test_bad_parameters_are_400_error_info_naming_the_parameter(api: TenantDataApi) -> None:
    for query, parameter in BAD_PARAMETERS:
        status, body = api.users(query=query)
        assert status == 400, query
        assert set(body) == {"info", "reason"}
        assert f"'{parameter}'" in body["info"], body


def test_filters_combine_and_totals_follow_them(api: TenantDataApi) -> None:
    load(
        api.tenant,
        [
            user(1, login_enabled=True, is_supervisor=True),
            user(2, login_enabled=True, is_supervisor=False),
            user(3, login_enabled=False, is_supervisor=True),
            user(4, login_enabled=None, is_supervisor=None),
            user(5, email="Dispatch.Lead@Example.org", login_enabled=True),
        ],
    )
    assert ids(api.users(loginEnabled="true")[1]) == [1, 2, 5]
    assert ids(api.users(isSupervisor="true")[1]) == [1, 3]
    _, both = api.users(loginEnabled="true", isSupervisor="false")
    assert (ids(both), both["totalElements"]) == ([2], 1)
    _, by_email = api.users(email="dispatch.lead@example.ORG")
    assert (ids(by_email), by_email["totalElements"]) == ([5], 1)
    assert api.users(email="dispatch.lead@example.org", isSupervisor="true")[1]["content"] == []
    assert api.users()[1]["totalElements"] == 5


def test_reimport_moves_the_user_in_sorts_and_filters_and_keeps_totals(
    api: TenantDataApi,
) -> None:
    put_user(api.tenant, user(1, "Adams", login_enabled=True))
    put_user(api.tenant, user(2, "Baker", login_enabled=True))
    # When user 1 is re-imported renamed and disabled
    put_user(api.tenant, user(1, "Zimmer", login_enabled=False))
    assert ids(api.users(sort="lastName")[1]) == [2, 1]
    assert ids(api.users(loginEnabled="true")[1]) == [2]
    assert ids(api.users(loginEnabled="false")[1]) == [1]
    assert api.users()[1]["totalElements"] == 2
    assert api.users(sort="lastName")[1]["content"][1]["lastName"] == "Zimmer"


def test_put_user_and_bulk_load_store_the_same_items(api: TenantDataApi) -> None:
    # The fast loader used for demo data must not drift from the import path.
    def items(tenant: int) -> set[tuple[str, str]]:
        scanned = dynamodb().scan(TableName=table())["Items"]
        prefix = f"T#{tenant}#"
        return {
            (item["pk"]["S"].removeprefix(prefix), item["sk"]["S"])
            for item in scanned
            if item["pk"]["S"].startswith(prefix)
        }

    sample = user(9, "Ito", email="ito@x.org", login_enabled=True, is_supervisor=False)
    put_user(api.tenant, sample)
    load(api.other_tenant, [sample])
    assert items(api.tenant) == items(api.other_tenant)
    assert len(items(api.tenant)) == 1 + 8 * 4 + 8  # user, pointers, counters


@pytest.mark.spec("endpoints-permission-users", "data-auth-rule-2")
def test_permission_manage_users_is_required_with_the_naming_message(
    api: TenantDataApi,
) -> None:
    status, body = api.call("users_list", permissions="VIEW_KNOWLEDGE,MANAGE_PHASES,VIEW_QA")
    assert status == 403
    assert body == {
        "info": "Access denied — Manage Users permission required",
        "reason": "FORBIDDEN",
    }


@pytest.mark.spec("service-tenant-from-credential")
def test_tenant_isolation_a_token_sees_only_its_tenants_users(api: TenantDataApi) -> None:
    load(api.tenant, [user(1)])
    load(api.other_tenant, [user(2), user(3)])
    assert (ids(api.users()[1]), api.users()[1]["totalElements"]) == ([1], 1)
    assert ids(api.users(tenant=api.other_tenant)[1]) == [2, 3]


def test_a_late_page_reads_size_plus_one_full_items(api: TenantDataApi) -> None:
    load(api.tenant, [user(n) for n in range(1, 131)])
    reads = ItemsRead()
    try:
        status, body = api.users(page="5", size="20", sort="lastName,desc")
    finally:
        reads.close()
    assert status == 200 and body["numberOfElements"] == 20
    # One counter and 20 users; the pointers walked are keys only.
    assert reads.batch_items + reads.get_items <= 20 + 2
