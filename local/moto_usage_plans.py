"""moto's API Gateway usage plans, as API Gateway changes them.

moto's UpdateUsagePlan ignores the per-method throttle of an API stage
(`/apiStages/{apiId}:{stage}/throttle/{resourcePath}/{httpMethod}/rateLimit`, the resource
path's slashes escaped as `~1`), which is how an operator changes one budget of a tenant's
plan without a deploy (psap-admin tenant limits set). Here those operations apply, and the
rest goes to moto as before.
"""

from typing import Any

_STAGE_THROTTLE = "/apiStages/"


def _apply_stage_throttle(plan: Any, operation: dict[str, Any]) -> bool:
    """Applies one per-method throttle operation; False if it is not one."""
    path = str(operation.get("path", ""))
    if not path.startswith(_STAGE_THROTTLE) or "/throttle" not in path:
        return False
    stage_part, _, rest = path[len(_STAGE_THROTTLE) :].partition("/throttle")
    api_id, _, stage_name = stage_part.partition(":")
    stage = next(
        (
            item
            for item in plan.api_stages
            if (item["apiId"], item["stage"]) == (api_id, stage_name)
        ),
        None,
    )
    if stage is None:
        raise ValueError(f"the usage plan has no API stage {stage_part}")
    throttles: dict[str, dict[str, Any]] = stage.setdefault("throttle", {})
    parts = rest.strip("/").split("/")
    if operation["op"] == "remove" and len(parts) == 2:  # a method's whole throttle
        throttles.pop(f"{parts[0].replace('~1', '/')}/{parts[1]}", None)
        return True
    if len(parts) != 3 or parts[2] not in ("rateLimit", "burstLimit"):
        raise ValueError(f"unsupported usage plan path {path}")
    method_key = f"{parts[0].replace('~1', '/')}/{parts[1]}"
    limits = throttles.setdefault(method_key, {})
    if operation["op"] == "remove":
        limits.pop(parts[2], None)
    else:
        value = operation["value"]
        limits[parts[2]] = float(value) if parts[2] == "rateLimit" else int(value)
    return True


def install() -> None:
    from moto.apigateway.models import UsagePlan  # noqa: PLC0415 - moto loads lazily

    if getattr(UsagePlan, "_psap_stage_throttles", False):
        return
    apply = UsagePlan.apply_patch_operations

    def apply_patch_operations(self: Any, patch_operations: list[dict[str, Any]]) -> None:
        rest = [op for op in patch_operations if not _apply_stage_throttle(self, op)]
        apply(self, rest)

    UsagePlan.apply_patch_operations = apply_patch_operations  # type: ignore[method-assign]
    UsagePlan._psap_stage_throttles = True  # type: ignore[attr-defined]
