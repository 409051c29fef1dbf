"""The audit writer's markers: which chains advanced in which sealing period.

  AUDITADV#{period}#{b}           / {chain key}  a chain that advanced in the period: the
                                                  writer's marker, once per warm writer,
                                                  chain and period, before the append

In the audit table, beside the chains, written by the writer alone; the sealer
(psap.audit.sealing) reads a closed period's markers and one head per marked chain, never
the tenants. The markers are spread over MARKER_BUCKETS keys per period: a period's busiest
key takes 1/MARKER_BUCKETS of the chains that advanced (at most SHARDS per tenant and day),
so even 5 000 busy tenants (80 000 chains) are ~33 writes/s a key over a period.
"""

import hashlib
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Final

from psap.audit.chain import GENESIS
from psap.audit.seals import period_of, period_text
from psap.config import audit_table
from psap.storage.aws_errors import translated
from psap.storage.dynamodb import dynamodb
from psap.storage.queries import query_pages

MARKER_BUCKETS: Final = 8
# Markers are read within minutes of their period; a week covers any sealer outage.
_MARKER_LIFE: Final = timedelta(days=7)
_NEW: Final = "attribute_not_exists(pk)"


def _table() -> str:
    return audit_table()


def _marker_pk(period: datetime, chain_key: str) -> str:
    bucket = int.from_bytes(hashlib.sha256(chain_key.encode()).digest()[:4], "big")
    return f"AUDITADV#{period_text(period)}#{bucket % MARKER_BUCKETS}"


# (chain key, period) markers this warm writer wrote. Bounded; forgetting costs one write.
_MARKED_MAX: Final = 10_000
_marked: set[tuple[str, datetime]] = set()


def mark_advanced(chain_key: str, *, tenant_id: int, day: date, now: datetime) -> None:
    """Notes that the chain advances in the period of `now`, before the append: the sealer
    reads the chain's head after the period (and SEAL_GRACE), so the append is in it."""
    period = period_of(now)
    if (chain_key, period) in _marked:
        return
    item = {
        "pk": {"S": _marker_pk(period, chain_key)},
        "sk": {"S": chain_key},
        "tenantId": {"N": str(tenant_id)},
        "day": {"S": day.isoformat()},
        "expiresAt": {"N": str(int((period + _MARKER_LIFE).timestamp()))},
    }
    with translated("audit chain marker write failed"):
        try:
            dynamodb().put_item(TableName=_table(), Item=item, ConditionExpression=_NEW)
        except dynamodb().exceptions.ConditionalCheckFailedException:
            pass  # another writer marked it this period
    if len(_marked) >= _MARKED_MAX:
        _marked.clear()
    _marked.add((chain_key, period))


def forget_marked_chains() -> None:
    """For tests: a fresh table needs its markers written again."""
    _marked.clear()


@dataclass(frozen=True)
class Marked:
    chain_key: str
    tenant_id: int
    day: date


def marked_in(period: datetime) -> list[Marked]:
    marked: list[Marked] = []
    for bucket in range(MARKER_BUCKETS):
        request = {
            "TableName": _table(),
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": f"AUDITADV#{period_text(period)}#{bucket}"}},
            "ConsistentRead": True,
        }
        for items in query_pages(request, f"audit markers of {period_text(period)}"):
            marked.extend(
                Marked(
                    item["sk"]["S"],
                    int(item["tenantId"]["N"]),
                    date.fromisoformat(item["day"]["S"]),
                )
                for item in items
            )
    return marked


def chain_id_of(chain_key: str) -> str:
    """T#{t}#DAY#{day}#S#{shard} -> {t}/{day}/{shard} (psap.audit.chain.chain_id)."""
    _, tenant, _, day, _, shard = chain_key.split("#")
    return f"{tenant}/{day}/{shard}"


def head_of(chain_key: str) -> tuple[int, str]:
    """The chain's last position and link (0 and GENESIS for a new chain): what the writer
    appends after and what the sealer seals."""
    with translated(f"audit chain {chain_key}"):
        answer = dynamodb().query(
            TableName=_table(),
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": chain_key}},
            ProjectionExpression="sk, #hash",
            ExpressionAttributeNames={"#hash": "hash"},
            ScanIndexForward=False,
            Limit=1,
            ConsistentRead=True,
        )
    items = answer.get("Items", [])
    if not items:
        return 0, GENESIS
    return int(items[0]["sk"]["S"]), str(items[0]["hash"]["S"])
