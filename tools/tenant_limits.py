"""A tenant's request limits, as the operator sees and changes them (`psap-admin tenant
limits show|set|sync`), without a deploy.

API Gateway enforces them (psap.budgets, docs/limits.md): each tenant has one API key
(`psap-tenant-{id}`, its value derived from the id), which the authorizers return as
`usageIdentifierKey`. The key is in the template's default plan (TenantUsagePlan), or in a
plan of the tenant's own once the operator changed one of its budgets; a plan gives every
method a token bucket sized by the method's budget. The tenant's own limits are also kept
beside its profile (psap.auth.credentials.tenant_limits_key), where the authorizers read
them to name the policy in every answer (RateLimit-Policy).

A change reaches API Gateway's throttling within seconds (the local gateway: within
local.gateway.throttling.REFRESH_SECONDS) and the answers' RateLimit-Policy within the
authorizer's cache time.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import boto3

from psap.auth.credentials import tenant_limits_key
from psap.budgets import (
    Budget,
    LimitsError,
    RateLimit,
    budget_for,
    check_limit,
    format_limits,
    parse_limits,
    usage_key_name,
    usage_key_value,
)
from psap.config import settings
from psap.storage.aws_errors import translated
from psap.storage.dynamodb import dynamodb


@dataclass(frozen=True)
class UsagePlanTarget:
    """Where the tenants' keys and plans are: the API stage and the template's default plan."""

    api_id: str
    stage: str
    default_plan_id: str
    client_options: Mapping[str, Any]

    def client(self) -> Any:
        return boto3.client("apigateway", **self.client_options)


def target_from_outputs(outputs: Mapping[str, str]) -> UsagePlanTarget | None:
    if "TenantUsagePlanId" not in outputs:
        return None
    return UsagePlanTarget(
        api_id=outputs["ServiceApiId"],
        stage=outputs["ServiceApiStage"],
        default_plan_id=outputs["TenantUsagePlanId"],
        client_options={},
    )


def target_from_state(state: Mapping[str, Any]) -> UsagePlanTarget | None:
    """The local stack's (its state file): the embedded AWS, as its operator."""
    plans = state.get("usagePlans") or {}
    api = (state.get("apis") or {}).get("ServiceApi")
    if "TenantUsagePlan" not in plans or api is None:
        return None
    return UsagePlanTarget(
        api_id=api["id"],
        stage=api["stage"],
        default_plan_id=plans["TenantUsagePlan"],
        client_options={
            "endpoint_url": state["awsEndpointUrl"],
            "region_name": state.get("region", "us-east-1"),
            "aws_access_key_id": state["awsAccessKeyId"],
            "aws_secret_access_key": state["awsSecretAccessKey"],
        },
    )


def _key_id(client: Any, tenant_id: int) -> str | None:
    name = usage_key_name(tenant_id)
    for page in client.get_paginator("get_api_keys").paginate(nameQuery=name):
        for key in page.get("items", []):
            if key.get("name") == name:
                return str(key["id"])
    return None


def ensure_usage_key(target: UsagePlanTarget, tenant_id: int) -> str:
    """The tenant's API key, created in the default plan if it has none (idempotent)."""
    client = target.client()
    key_id = _key_id(client, tenant_id)
    if key_id is None:
        key_id = str(
            client.create_api_key(
                name=usage_key_name(tenant_id),
                value=usage_key_value(tenant_id),
                enabled=True,
                description=f"Request budgets of tenant {tenant_id} (docs/limits.md)",
            )["id"]
        )
    if _plan_of(client, target, key_id) is None:
        client.create_usage_plan_key(
            usagePlanId=target.default_plan_id, keyId=key_id, keyType="API_KEY"
        )
    return key_id


def _plan_of(client: Any, target: UsagePlanTarget, key_id: str) -> dict[str, Any] | None:
    """The plan the key is in for the API stage (API Gateway allows one per stage)."""
    for page in client.get_paginator("get_usage_plans").paginate(keyId=key_id):
        for plan in page.get("items", []):
            for stage in plan.get("apiStages", []):
                if (stage.get("apiId"), stage.get("stage")) == (target.api_id, target.stage):
                    return dict(plan)
    return None


def _stage_throttles(plan: Mapping[str, Any], target: UsagePlanTarget) -> dict[str, Any]:
    for stage in plan.get("apiStages", []):
        if (stage.get("apiId"), stage.get("stage")) == (target.api_id, target.stage):
            return dict(stage.get("throttle") or {})
    return {}


def _budget_of_method(method_key: str) -> Budget:
    resource, _, method = method_key.rpartition("/")
    return budget_for(method, resource)


def limits_of_plan(plan: Mapping[str, Any], target: UsagePlanTarget) -> dict[Budget, RateLimit]:
    """Each budget's bucket as the plan sets it on the budget's methods."""
    limits: dict[Budget, RateLimit] = {}
    for method_key, throttle in sorted(_stage_throttles(plan, target).items()):
        budget = _budget_of_method(method_key)
        limits.setdefault(
            budget, RateLimit(int(throttle["rateLimit"]), int(throttle["burstLimit"]))
        )
    return limits


def show(target: UsagePlanTarget, tenant_id: int) -> dict[str, Any]:
    client = target.client()
    key_id = _key_id(client, tenant_id)
    plan = _plan_of(client, target, key_id) if key_id else None
    if plan is None:
        raise LimitsError(
            f"tenant {tenant_id} has no usage plan key: run psap-admin tenant limits sync"
        )
    own = plan["id"] != target.default_plan_id
    limits = limits_of_plan(plan, target)
    return {
        "tenant": tenant_id,
        "usagePlan": plan.get("name") or plan["id"],
        "ownLimits": own,
        "budgets": {
            budget.value: {"rate": limits[budget].rate, "burst": limits[budget].burst}
            for budget in Budget
            if budget in limits
        },
    }


def set_limit(
    target: UsagePlanTarget, tenant_id: int, budget_name: str, *, limit: RateLimit
) -> dict[str, Any]:
    """Gives the tenant's budget its own bucket size on every method of the budget."""
    check_limit(budget_name, limit.rate, limit.burst)
    budget = Budget(budget_name)
    client = target.client()
    key_id = ensure_usage_key(target, tenant_id)
    plan = _plan_of(client, target, key_id)
    if plan is None:  # ensure_usage_key has just put the key in the default plan
        raise LimitsError(f"tenant {tenant_id}'s usage plan key is in no plan of the stage")
    throttles = _stage_throttles(plan, target)
    methods = [key for key in throttles if _budget_of_method(key) == budget]
    if plan["id"] == target.default_plan_id:
        # The first own limit: a plan of the tenant's own, a copy of the default with this
        # budget changed; the key moves to it (API Gateway keeps one plan per key and stage).
        own_throttles = {
            key: ({"rateLimit": limit.rate, "burstLimit": limit.burst} if key in methods else value)
            for key, value in throttles.items()
        }
        own = client.create_usage_plan(
            name=f"{plan.get('name') or 'tenants'}-tenant-{tenant_id}",
            description=f"Request budgets of tenant {tenant_id} (psap-admin tenant limits)",
            apiStages=[{"apiId": target.api_id, "stage": target.stage, "throttle": own_throttles}],
        )
        client.delete_usage_plan_key(usagePlanId=plan["id"], keyId=key_id)
        client.create_usage_plan_key(usagePlanId=own["id"], keyId=key_id, keyType="API_KEY")
    else:
        stage = f"/apiStages/{target.api_id}:{target.stage}/throttle"
        operations = []
        for key in methods:
            resource, _, method = key.rpartition("/")
            path = f"{stage}/{resource.replace('/', '~1')}/{method}"
            operations += [
                {"op": "replace", "path": f"{path}/rateLimit", "value": str(limit.rate)},
                {"op": "replace", "path": f"{path}/burstLimit", "value": str(limit.burst)},
            ]
        client.update_usage_plan(usagePlanId=plan["id"], patchOperations=operations)
    _remember(tenant_id, budget, limit)
    return show(target, tenant_id)


def _remember(tenant_id: int, budget: Budget, limit: RateLimit) -> None:
    """The tenant's own limits beside its profile, for the authorizers' RateLimit-Policy."""
    table = settings().auth_table
    if table is None:
        raise LimitsError("no auth table configured")
    client = dynamodb()
    key = tenant_limits_key(tenant_id)
    with translated(f"cannot read the limits of tenant {tenant_id}"):
        item = client.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
    own = parse_limits(item["limits"]["S"], partial=True) if item else {}
    own[budget] = limit
    text = format_limits(own)
    with translated(f"cannot write the limits of tenant {tenant_id}"):
        client.put_item(TableName=table, Item={**key, "limits": {"S": text}})


def sync(target: UsagePlanTarget, tenant_ids: list[int]) -> list[int]:
    """Gives every tenant without a usage plan key its key in the default plan."""
    client = target.client()
    missing = [tenant for tenant in tenant_ids if _key_id(client, tenant) is None]
    for tenant in tenant_ids:
        ensure_usage_key(target, tenant)
    return missing


def render(limits: Mapping[str, Any]) -> str:
    return json.dumps(limits, indent=2)


__all__ = [
    "UsagePlanTarget",
    "ensure_usage_key",
    "render",
    "set_limit",
    "show",
    "sync",
    "target_from_outputs",
    "target_from_state",
]


def remove_usage_key(target: UsagePlanTarget, tenant_id: int) -> bool:
    """Deletes the tenant's API key (and so its place in any usage plan); False if none."""
    client = target.client()
    key_id = _key_id(client, tenant_id)
    if key_id is None:
        return False
    with translated(f"usage key of tenant {tenant_id}"):
        client.delete_api_key(apiKey=key_id)
    return True
