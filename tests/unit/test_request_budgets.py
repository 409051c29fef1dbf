"""Per-tenant request budgets: every operation has one, the template's usage plan gives each
authorized route its budget's bucket, and limits are checked where they are set."""

import re

import pytest

from psap.auth.issuing import AUTHORIZER_CACHE_SECONDS
from psap.budgets import (
    Budget,
    LimitsError,
    RateLimit,
    budget_for,
    check_limit,
    exhausted_field,
    parse_limits,
    policy_field,
    usage_key_value,
)
from psap.http.operations import OPERATIONS
from tests.conftest import TEMPLATE

_PARAMETER = {budget: budget.value.capitalize() for budget in Budget}


def test_every_operation_draws_on_one_budget_cad_intake_on_its_own() -> None:
    budgets = {key: budget_for(*key) for key in OPERATIONS}
    assert budgets[("POST", "/cad/v1/incidents")] is Budget.CAD
    assert [key for key, budget in budgets.items() if budget is Budget.CAD] == [
        ("POST", "/cad/v1/incidents")
    ]
    assert budgets[("GET", "/api/v1/external/knowledge")] is Budget.READS
    assert budgets[("POST", "/api/v1/external/knowledge")] is Budget.WRITES
    assert budgets[("POST", "/mcp")] is Budget.SEARCH
    assert budgets[("POST", "/api/v1/external/audit-log/exports")] is Budget.BULK
    assert budgets[("GET", "/api/v1/external/admin/credentials")] is Budget.ADMIN


def test_the_default_usage_plan_gives_every_authorized_route_its_budgets_bucket() -> None:
    # Given the template's default plan (TenantUsagePlan) and its parameters' defaults
    (stage,) = TEMPLATE.usage_plans["TenantUsagePlan"].stages
    parameters = TEMPLATE.parameters
    keyed = {
        f"{event.path}/{event.method}": budget_for(event.method, event.path)
        for _, event in TEMPLATE.api_events()
        if event.api_key_required
    }
    # Then every route that needs the tenant's key has its budget's rate and burst, no more
    assert set(stage.method_throttles) == set(keyed)
    for method_key, budget in keyed.items():
        throttle = stage.method_throttles[method_key]
        assert throttle.rate == float(parameters[f"{_PARAMETER[budget]}RateLimit"]), method_key
        assert throttle.burst == int(parameters[f"{_PARAMETER[budget]}BurstLimit"]), method_key


def test_only_routes_without_an_authorizer_go_without_a_key() -> None:
    for _, event in TEMPLATE.api_events():
        assert event.api_key_required == (event.authorizer is not None), event.path


def test_the_authorizers_defaults_are_the_templates_parameters() -> None:
    for function_id in ("PartnerAuthorizerFunction", "CadAuthorizerFunction"):
        limits = parse_limits(TEMPLATE.functions[function_id].environment["TENANT_RATE_LIMITS"])
        for budget, limit in limits.items():
            name = _PARAMETER[budget]
            assert limit == RateLimit(
                int(TEMPLATE.parameters[f"{name}RateLimit"]),
                int(TEMPLATE.parameters[f"{name}BurstLimit"]),
            )


@pytest.mark.parametrize(
    ("budget", "rate", "burst", "problem"),
    [
        ("reads", 0, 10, "rate must be 1 to 10000"),
        ("reads", -1, 10, "rate must be 1 to 10000"),
        ("reads", 10, 0, "burst must be 1 to 5000"),
        ("reads", 10**6, 10, "rate must be 1 to 10000"),
        ("everything", 1, 1, "unknown budget 'everything'"),
    ],
)
def test_a_zero_negative_absurd_or_unknown_limit_is_refused_naming_it(
    budget: str, rate: int, burst: int, problem: str
) -> None:
    with pytest.raises(LimitsError, match=re.escape(problem)):
        check_limit(budget, rate, burst)


def test_defaults_must_name_every_budget_a_tenants_own_only_some() -> None:
    with pytest.raises(LimitsError, match="no limit for"):
        parse_limits("reads=1/2")
    assert parse_limits("reads=1/2", partial=True) == {Budget.READS: RateLimit(1, 2)}


def test_the_answer_fields_follow_the_ratelimit_headers_draft() -> None:
    assert policy_field(Budget.READS, RateLimit(100, 200)) == '"reads";q=100;w=1;burst=200'
    assert exhausted_field(Budget.SEARCH) == '"search";r=0;t=1'


def test_a_tenants_api_key_value_is_one_api_gateway_accepts_and_its_own() -> None:
    values = {usage_key_value(tenant) for tenant in range(1, 200)}
    assert len(values) == 199
    assert all(re.fullmatch(r"[A-Za-z0-9]{20,128}", value) for value in values)


def test_the_revocation_bound_the_answers_state_is_the_authorizers_cache() -> None:
    # The data interface's revocation bound (authorizerCacheSeconds) is ReauthorizeEvery
    # (the console's session authorizer caches nothing: docs/console.md).
    for authorizer in TEMPLATE.apis["ServiceApi"].authorizers.values():
        expected = 0 if authorizer.name == "ConsoleAuthorizer" else AUTHORIZER_CACHE_SECONDS
        assert authorizer.reauthorize_every == expected, authorizer.name
