"""Lambda REQUEST authorizer of the console's API paths: the session cookie and its CSRF
header (psap.console.authorizer). Uncached (ReauthorizeEvery 0): each request slides the
session's idle limit and sees a revoked credential or an ended session at once."""

from typing import Any

from psap.auth.authorizer import Unauthorized, with_usage_plan
from psap.auth.credentials import tenant_limits_key
from psap.auth.tenant_limits import TenantLimits
from psap.clock import utc_now
from psap.config import auth_table
from psap.console.authorizer import authorize_console
from psap.observability import logger
from psap.storage.dynamodb import read_item


def own_limits(tenant_id: int) -> str:
    item = read_item(
        auth_table(), tenant_limits_key(tenant_id), "limits read failed", consistent=False
    )
    return str(item.get("limits", "")) if item else ""


tenant_limits = TenantLimits(own_limits).of


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    try:
        answer = authorize_console(event, utc_now())
    except Unauthorized as refusal:
        logger.info(
            "console session refused",
            extra={"why": refusal.why, "reason": refusal.reason.value, "interface": "console"},
        )
        raise
    tenant_id = int(answer["context"]["tenantId"])
    logger.append_keys(tenant_id=tenant_id, credential_id=answer["principalId"])
    logger.info("console session accepted", extra={"interface": "console"})
    return with_usage_plan(answer, event, tenant_id, limits=tenant_limits(tenant_id))
