"""The SQS client and message sending shared by every producer (botocore, like DynamoDB).

Every message of a tenant (a JSON object with an integer `tenantId`) carries its tenant as
its MessageGroupId, which makes each standard queue an SQS fair queue: when one tenant's
surge leaves a backlog, SQS delivers the other tenants' messages first, so their dwell time
stays low (docs/capacity.md, "Fair queues"). Order is not changed within a tenant's messages,
and nothing else about a standard queue changes.
"""

import json
from collections.abc import Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, cast

import botocore.session
from botocore.config import Config

from psap.config import client_options
from psap.errors import StoreUnavailable
from psap.storage.aws_errors import translated

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

MAX_DELAY_SECONDS = 900  # SQS's limit: longer waits need a scheduler
_BATCH_LIMIT = 10
_CONFIG = Config(retries={"mode": "standard", "max_attempts": 4}, connect_timeout=2, read_timeout=5)


@cache
def sqs() -> "SQSClient":
    """One client per warm container, created on first use (after a test's moto is up)."""
    return cast(
        "SQSClient",
        botocore.session.get_session().create_client("sqs", config=_CONFIG, **client_options()),
    )


def _text(body: str | Mapping[str, Any]) -> str:
    return body if isinstance(body, str) else json.dumps(body, separators=(",", ":"))


def fairness_group(body: str | Mapping[str, Any]) -> dict[str, str]:
    """The MessageGroupId parameter of a tenant's message (none for other messages)."""
    tenant = None if isinstance(body, str) else body.get("tenantId")
    if isinstance(tenant, int) and not isinstance(tenant, bool):
        return {"MessageGroupId": f"tenant-{tenant}"}
    return {}


def send_message(queue_url: str, body: str | Mapping[str, Any], delay_seconds: int = 0) -> None:
    """Sends one message (a JSON object is serialized compactly); delays cap at 15 minutes."""
    with translated("queue send failed"):
        sqs().send_message(
            QueueUrl=queue_url,
            MessageBody=_text(body),
            DelaySeconds=max(0, min(MAX_DELAY_SECONDS, delay_seconds)),
            **fairness_group(body),  # type: ignore[arg-type]
        )


def send_messages(queue_url: str, bodies: Sequence[str | Mapping[str, Any]]) -> None:
    """Sends up to any number of messages, ten per request; raises if any could not be sent."""
    for first in range(0, len(bodies), _BATCH_LIMIT):
        entries = [
            {"Id": str(index), "MessageBody": _text(body), **fairness_group(body)}
            for index, body in enumerate(bodies[first : first + _BATCH_LIMIT])
        ]
        with translated("queue send failed"):
            answer = sqs().send_message_batch(QueueUrl=queue_url, Entries=entries)  # type: ignore[arg-type]
        if answer.get("Failed"):
            raise StoreUnavailable(f"queue send failed for {len(answer['Failed'])} messages")
