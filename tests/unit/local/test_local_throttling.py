"""API Gateway's throttles in the local gateway: the stage's method throttling, usage plans
whose key comes from the authorizer, token-bucket semantics, and the 429 it answers."""

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from moto import mock_aws

from local import moto_usage_plans
from local.gateway import ApiGateway, HttpRequest, HttpResponse
from local.gateway.throttling import Buckets, TokenBucket, UsagePlanDirectory
from local.runtime import InvokeResult
from local.template import StackTemplate, TemplateError, Throttle, load_template, load_yaml

FIXTURES = Path(__file__).parent / "fixtures"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def tenant_authorizer(event: dict[str, Any]) -> InvokeResult:
    """Allows any call; the tenant is the Authorization header, its key derived from it."""
    tenant = event["headers"]["Authorization"]
    return InvokeResult(
        status="ok",
        payload={
            "principalId": tenant,
            "policyDocument": {
                "Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Action": "execute-api:Invoke", "Resource": "*"}],
            },
            "usageIdentifierKey": f"key-of-{tenant}-0123456789abcdef",
            "context": {"budget": "reads", "policy": f'"reads";q=1;w=1;tenant={tenant}'},
        },
    )


def throttled_template(
    tmp_path: Path, *, stage_rate: float = 1000, stage_burst: int = 1000
) -> Path:
    """The fixture template with a stage throttle, keys from the authorizer, a usage plan
    (2 requests burst, 1/s, on GET /items/{itemId}) and a THROTTLED response from context."""
    shutil.copytree(FIXTURES / "functions", tmp_path / "functions")
    document = load_yaml(FIXTURES / "template.yaml")
    api = document["Resources"]["ProbeApi"]["Properties"]
    api["ApiKeySourceType"] = "AUTHORIZER"
    api["MethodSettings"] = [
        {
            "ResourcePath": "/*",
            "HttpMethod": "*",
            "ThrottlingRateLimit": stage_rate,
            "ThrottlingBurstLimit": stage_burst,
        }
    ]
    api["Auth"]["ApiKeyRequired"] = True
    api["Auth"]["Authorizers"]["HeaderAuthorizer"]["Identity"] = {
        "Headers": ["Authorization"],
        "Context": ["httpMethod", "resourcePath"],
        "ReauthorizeEvery": 60,
    }
    api["GatewayResponses"]["THROTTLED"] = {
        "StatusCode": 429,
        "ResponseParameters": {
            "Headers": {"Retry-After": "'1'", "RateLimit-Policy": "context.authorizer.policy"}
        },
        "ResponseTemplates": {
            "application/json": (
                '{"info": "slow down", "reason": "RATE_LIMITED_$context.authorizer.budget"}'
            )
        },
    }
    open_event = document["Resources"]["EchoFunction"]["Properties"]["Events"]["Open"]
    open_event["Properties"]["Auth"]["ApiKeyRequired"] = False
    document["Resources"]["ItemsPlan"] = {
        "Type": "AWS::ApiGateway::UsagePlan",
        "Properties": {
            "UsagePlanName": "items",
            "ApiStages": [
                {
                    "ApiId": {"Ref": "ProbeApi"},
                    "Stage": {"Ref": "ProbeApi.Stage"},
                    "Throttle": {"/items/{itemId}/GET": {"RateLimit": 1, "BurstLimit": 2}},
                }
            ],
            "Throttle": {"RateLimit": 100, "BurstLimit": 100},
        },
    }
    path = tmp_path / "template.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def call(gateway: ApiGateway, target: str, tenant: str = "t1", method: str = "GET") -> HttpResponse:
    return gateway.handle(
        HttpRequest(method=method, target=target, headers=(("Authorization", tenant),), body=b"")
    )


@pytest.fixture
def apigateway() -> Any:
    moto_usage_plans.install()
    with mock_aws():
        yield boto3.client("apigateway", region_name="us-east-1")


def deploy_plans(template: Any, client: Any, tenants: list[str]) -> str:
    """What the local stack does at start-up, and `psap-admin tenant create` per tenant."""
    plan = template.usage_plans["ItemsPlan"]
    stage = plan.stages[0]
    created = client.create_usage_plan(
        name=plan.name,
        apiStages=[
            {
                "apiId": template.apis[stage.api_id].api_id,
                "stage": stage.stage,
                "throttle": {
                    key: {"rateLimit": value.rate, "burstLimit": value.burst}
                    for key, value in stage.method_throttles.items()
                },
            }
        ],
        throttle={"rateLimit": plan.throttle.rate, "burstLimit": plan.throttle.burst},
    )
    for tenant in tenants:
        key = client.create_api_key(
            name=tenant, value=f"key-of-{tenant}-0123456789abcdef", enabled=True
        )
        client.create_usage_plan_key(usagePlanId=created["id"], keyId=key["id"], keyType="API_KEY")
    return str(created["id"])


def echo(_event: Any) -> InvokeResult:
    return InvokeResult(status="ok", payload={"statusCode": 200, "headers": {}, "body": "{}"})


class Functions:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, function_id: str, event: Any) -> InvokeResult:
        self.calls.append(function_id)
        return (tenant_authorizer if function_id == "AuthorizerFunction" else echo)(event)


def metered_gateway(
    template: StackTemplate,
    functions: Any,
    apigateway: Any,
    clock: Callable[[], float] = time.monotonic,
) -> ApiGateway:
    """The gateway of `template`, metering callers by the usage plans deployed in `apigateway`."""
    return ApiGateway(
        template,
        functions,
        clock=clock,
        log=lambda _line: None,
        usage_plans=UsagePlanDirectory(lambda: apigateway, clock),
    )


# ---------------------------------------------------------------------------- the bucket


def test_a_bucket_starts_full_serves_its_burst_then_refills_at_its_rate() -> None:
    bucket = TokenBucket(Throttle(rate=2, burst=3), now=0.0)
    assert [bucket.take(0.0) for _ in range(4)] == [True, True, True, False]
    assert bucket.take(0.49) is False  # 0.98 of a token
    assert bucket.take(0.5) is True
    # A long pause refills to the burst, not beyond
    assert [bucket.take(100.0) for _ in range(4)] == [True, True, True, False]


def test_a_retuned_bucket_keeps_what_is_left_within_the_new_burst() -> None:
    clock = FakeClock()
    buckets = Buckets(clock)
    assert buckets.take(("k",), Throttle(rate=1, burst=10))
    assert buckets.take(("k",), Throttle(rate=1, burst=2))  # 9 left, capped to 2: one taken
    assert buckets.take(("k",), Throttle(rate=1, burst=2))
    assert not buckets.take(("k",), Throttle(rate=1, burst=2))


# ---------------------------------------------------------------------------- the template


def test_the_template_gives_the_gateway_its_throttles_plans_and_key_rules(tmp_path: Path) -> None:
    template = load_template(throttled_template(tmp_path, stage_rate=5, stage_burst=7))
    api = template.apis["ProbeApi"]
    assert api.api_key_source == "AUTHORIZER"
    assert api.method_throttle == Throttle(rate=5, burst=7)
    assert api.authorizers["HeaderAuthorizer"].identity_context == ("httpMethod", "resourcePath")
    events = {event.name: event for _, event in template.api_events()}
    assert events["GetItem"].api_key_required is True
    assert events["Open"].api_key_required is False
    plan = template.usage_plans["ItemsPlan"]
    assert plan.stages[0].method_throttles == {"/items/{itemId}/GET": Throttle(rate=1, burst=2)}
    assert plan.throttle == Throttle(rate=100, burst=100)


@pytest.mark.parametrize(
    ("value", "problem"), [("0", "not less than 1"), ("20000", "not greater than 10000")]
)
def test_a_limit_parameter_out_of_bounds_stops_the_stack_naming_it(
    value: str, problem: str
) -> None:
    with pytest.raises(TemplateError, match=f"ReadsRateLimit.*{problem}"):
        load_template(parameter_overrides={"ReadsRateLimit": value})


# ---------------------------------------------------------------------------- the gateway


def test_the_usage_plan_throttles_each_tenant_key_on_its_own(
    tmp_path: Path, apigateway: Any
) -> None:
    template = load_template(throttled_template(tmp_path))
    deploy_plans(template, apigateway, ["t1", "t2"])
    functions = Functions()
    clock = FakeClock()
    gateway = metered_gateway(template, functions, apigateway, clock)
    # Tenant 1 spends its burst of 2 on GET /items/{itemId}
    statuses = [call(gateway, "/items/1", "t1").status for _ in range(3)]
    assert statuses == [200, 200, 429]
    throttled = call(gateway, "/items/1", "t1")
    assert throttled.status == 429
    assert throttled.header("Retry-After") == "1"
    # The authorizer's context fills THROTTLED's headers and body, as API Gateway does
    assert throttled.header("RateLimit-Policy") == '"reads";q=1;w=1;tenant=t1'
    assert json.loads(throttled.body)["reason"] == "RATE_LIMITED_reads"
    # Tenant 2's bucket is its own; another method of tenant 1 has the plan's own bucket
    assert call(gateway, "/items/1", "t2").status == 200
    assert call(gateway, "/items/search", "t1").status == 200
    # A second later, one token is back
    clock.now += 1.0
    assert [call(gateway, "/items/1", "t1").status for _ in range(2)] == [200, 429]


def test_a_key_in_no_plan_is_refused_before_the_function_runs(
    tmp_path: Path, apigateway: Any
) -> None:
    template = load_template(throttled_template(tmp_path))
    deploy_plans(template, apigateway, ["t1"])
    functions = Functions()
    gateway = metered_gateway(template, functions, apigateway)
    response = call(gateway, "/items/1", "stranger")
    assert response.status == 403
    assert "EchoFunction" not in functions.calls
    # A route without ApiKeyRequired needs no key
    assert call(gateway, "/open", "stranger", method="POST").status == 200


def test_a_changed_plan_takes_effect_within_the_refresh_time(
    tmp_path: Path, apigateway: Any
) -> None:
    template = load_template(throttled_template(tmp_path))
    plan_id = deploy_plans(template, apigateway, ["t1"])
    clock = FakeClock()
    gateway = metered_gateway(template, Functions(), apigateway, clock)
    assert [call(gateway, "/items/1").status for _ in range(3)] == [200, 200, 429]
    # The operator gives the method a bucket of 5 (UpdateUsagePlan, as on AWS)
    stage = template.apis["ProbeApi"]
    path = f"/apiStages/{stage.api_id}:{stage.stage_name}/throttle/~1items~1{{itemId}}/GET"
    apigateway.update_usage_plan(
        usagePlanId=plan_id,
        patchOperations=[
            {"op": "replace", "path": f"{path}/burstLimit", "value": "5"},
            {"op": "replace", "path": f"{path}/rateLimit", "value": "5"},
        ],
    )
    clock.now += 2.0  # the gateway re-reads the plans; the bucket refills at the new rate
    assert [call(gateway, "/items/1").status for _ in range(6)] == [200] * 5 + [429]


def test_the_stage_throttle_refuses_before_the_authorizer_runs(
    tmp_path: Path, apigateway: Any
) -> None:
    template = load_template(throttled_template(tmp_path, stage_rate=1, stage_burst=1))
    deploy_plans(template, apigateway, ["t1", "t2"])
    functions = Functions()
    gateway = metered_gateway(template, functions, apigateway)
    assert call(gateway, "/items/search", "t1").status == 200
    calls_before = len(functions.calls)
    refused = call(gateway, "/items/search", "t2")
    assert refused.status == 429
    assert len(functions.calls) == calls_before  # neither the authorizer nor the function
    # Without an authorizer's context the reason names no budget
    assert json.loads(refused.body)["reason"] == "RATE_LIMITED_"
