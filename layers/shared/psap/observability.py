"""The one owner of logging, metrics and tracing (Powertools).

Logger and Metrics are cheap to create. The Tracer is created on first use: instantiating it
imports the X-Ray SDK, which the authorizer (on every request's path) must not pay for.
"""

from functools import cache

from aws_lambda_powertools.logging import Logger
from aws_lambda_powertools.metrics import Metrics
from aws_lambda_powertools.tracing import Tracer

# Tokens never reach a log line: the request path logs credential ids, not headers.
logger = Logger(utc=True)
metrics = Metrics()


@cache
def tracer() -> Tracer:
    return Tracer()


def bind_request(tenant_id: int | None, request_id: str | None, credential_id: str | None) -> None:
    """Puts the tenant and request on every later log line of this invocation."""
    logger.append_keys(tenant_id=tenant_id, request_id=request_id, credential_id=credential_id)
