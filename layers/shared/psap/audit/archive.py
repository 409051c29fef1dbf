"""The write-once archive: each tenant's sealed records of a period, with their seal and
digest, in an S3 bucket under Object Lock, so the trail outlives the table's TTL, its
35-day backups and anyone who can rewrite the table.

One object per seal, `tenants/{t}/{yyyy-mm-dd}/{period}.ndjson`: for each chain the seal
names, its records (after, seq] as an export writes them (`{...record, "chain": {...}}`,
the first one's `prev` the hash of the record sealed before), then `{"seal": ...}` and
`{"digest": ...}`. The bucket's default retention (COMPLIANCE, AuditRetentionDays) applies
to every object version: nobody, the account root included, deletes or overwrites one
before it ends; writing the same object again adds a version.
"""

import json
from datetime import date, timedelta
from typing import Any, Final

from psap.audit.chain import Link, record_line
from psap.audit.sealing import read_digest, read_seal, sealed_through
from psap.audit.seals import parse_period
from psap.audit.store import chain_key
from psap.clock import utc_now
from psap.config import audit_archive_bucket, audit_table
from psap.errors import StoreUnavailable
from psap.models import WireModel
from psap.observability import logger
from psap.storage.queries import query_pages
from psap.storage.s3 import put_object

_PAGE: Final = 500
# A digest is written within the sealer's run that sent the message (its Timeout: 120 s);
# a run that stopped before it is retried by the next tick, 5 minutes on. An hour without
# it: the period has nothing to archive under that message (a later run sent its own).
_WAIT_FOR_DIGEST: Final = timedelta(hours=1)


class ArchiveMessage(WireModel):
    """What the archive queue carries: one tenant's seal of one period (psap.audit.sealing)."""

    period: str
    tenant_id: int
    day: date


def archive_key(message: ArchiveMessage) -> str:
    return f"tenants/{message.tenant_id}/{message.day.isoformat()}/{message.period}.ndjson"


def archive_seal(message: ArchiveMessage) -> int:
    """Writes the seal's object; returns how many records it holds. Raises StoreUnavailable
    while the period's digest is not stored yet (the sealer sends before it writes it); a
    period the sealer has passed, or long ago, without that digest or seal has nothing to
    archive (0)."""
    period = parse_period(message.period)
    digest = read_digest(period)
    seal = read_seal(message.tenant_id, message.day, period) if digest is not None else None
    if digest is None or seal is None:
        through = sealed_through()
        passed = through is not None and through >= period
        if digest is None and not passed and utc_now() - period < _WAIT_FOR_DIGEST:
            raise StoreUnavailable(
                f"audit seal {message.period} of tenant {message.tenant_id}: not sealed yet"
            )
        logger.warning(
            "audit seal without its digest or seal: nothing to archive",
            extra={"period": message.period, "tenant_id": message.tenant_id},
        )
        return 0
    lines: list[dict[str, Any]] = []
    for head in seal["heads"]:
        lines.extend(_segment(message.tenant_id, message.day, head))
    lines += [{"seal": seal}, {"digest": digest}]
    text = "".join(
        json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines
    )
    put_object(
        audit_archive_bucket(),
        archive_key(message),
        text.encode("utf-8"),
        content_type="application/x-ndjson",
    )
    return len(lines) - 2


def _segment(tenant_id: int, day: date, head: dict[str, Any]) -> list[dict[str, Any]]:
    chain = str(head["id"])
    shard = int(chain.rsplit("/", 1)[-1])
    request = {
        "TableName": audit_table(),
        "KeyConditionExpression": "pk = :pk AND sk BETWEEN :first AND :last",
        "ExpressionAttributeValues": {
            ":pk": {"S": chain_key(tenant_id, day, shard)},
            ":first": {"S": f"{int(head.get('after', 0)) + 1:012d}"},
            ":last": {"S": f"{int(head['seq']):012d}"},
        },
        "ExpressionAttributeNames": {"#record": "record", "#hash": "hash"},
        "ProjectionExpression": "#record, sk, prev, #hash",
        "ConsistentRead": True,
        "Limit": _PAGE,
    }
    return [
        record_line(
            json.loads(item["record"]["S"]),
            Link(chain, int(item["sk"]["S"]), item["prev"]["S"], item["hash"]["S"]),
        )
        for items in query_pages(request, f"audit chain {chain}")
        for item in items
    ]
