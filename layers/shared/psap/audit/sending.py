"""Hands an audit record to the audit queue, the audit writer's only input.

The queue admits the roles of the API functions (whose shared entrypoint and MCP endpoint
call `emit` once per tenant request), of the authorizers (psap.audit.refusals) and the
operator; no other function's role may send to it (template.yaml, AuditSenderPolicy), and
no role may write the audit table but the writer's. One SendMessage per request: a round
trip on the request path, the price of a trail that log lines (writable by every function)
could not give.

A record that cannot be sent is not lost silently: it is logged whole at ERROR with
`auditUndelivered`, for an operator to replay, and the request still answers.
"""

from collections.abc import Mapping
from typing import Any

from psap.audit.lines import audit_text
from psap.config import ConfigurationError, audit_queue_url
from psap.errors import StoreUnavailable
from psap.observability import logger
from psap.storage.sqs import send_message


def emit(entry: Mapping[str, Any]) -> None:
    try:
        send_message(audit_queue_url(), audit_text(entry))
    except (StoreUnavailable, ConfigurationError) as error:
        logger.error(
            "audit record not delivered",
            extra={"auditUndelivered": dict(entry), "error": str(error)[:500]},
        )
