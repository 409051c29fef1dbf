"""The audit sealer (every five minutes): signs a digest of each closed period's chain heads.

Its own function, not the writer's tail: one run per period makes one digest chain and one
KMS Sign per period whatever the traffic (the writer runs up to AuditWriterConcurrency
batches a second), and the signing key's policy names this role alone, so the role that
appends records cannot sign them (docs/security.md, "Audit").
"""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from psap.audit.sealing import seal_due
from psap.clock import utc_now
from psap.config import audit_retention_days, audit_seal_key
from psap.observability import logger


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    run = seal_due(utc_now(), key_id=audit_seal_key(), retention_days=audit_retention_days())
    logger.info("audit periods sealed", extra={"sealed": run.sealed, "empty": run.empty})
    return {"sealed": run.sealed, "empty": run.empty}
