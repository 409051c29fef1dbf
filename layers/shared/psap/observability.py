"""The one owner of logging, metrics and tracing (Powertools).

Logger and Metrics are cheap to create. Powertools' Tracer imports the X-Ray SDK whenever it
is instantiated, even when tracing is disabled (about 80 ms of cold start precompiled, 470 ms
without bytecode: `make bench`). So it is created only when detailed tracing is on
(template parameter DetailedTracing); otherwise Lambda's active tracing still records every
invocation, without per-call subsegments.
"""

import warnings
from functools import cache

from aws_lambda_powertools.logging import Logger
from aws_lambda_powertools.metrics import Metrics
from aws_lambda_powertools.tracing import Tracer

from psap.config import settings

# Tokens never reach a log line: the request path logs credential ids, not headers.
logger = Logger(utc=True)
metrics = Metrics()
# A queue worker's run that recorded no metric (an export step that handed over, a digest
# with nothing to do) is normal: Powertools would print a UserWarning on every such flush.
warnings.filterwarnings("ignore", message="No application metrics to publish", category=UserWarning)


def detailed_tracing() -> bool:
    return not settings().powertools_trace_disabled


@cache
def tracer() -> Tracer:
    return Tracer()


def bind_request(tenant_id: int | None, request_id: str | None, credential_id: str | None) -> None:
    """Puts the tenant and request on every later log line of this invocation."""
    logger.append_keys(tenant_id=tenant_id, request_id=request_id, credential_id=credential_id)
