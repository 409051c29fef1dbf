"""Raw submissions and their idempotency records in the CAD table.

  T#{t}#SUB#{source}#{id}  / STATE   the submission's record: its canonical hash, the
                                     receipt, the state and, once processed, the outcome
  T#{t}#SUB#{source}#{id}  / BODY    the raw body (zlib), written once

One partition per submission (tenant, CloudEvents source, id): a CAD sending 200 updates/s
from one source spreads them over as many keys, instead of one per source (docs/design.md,
"Capacity"). The body is written once; the state changes (ACCEPTED, then PROCESSED) rewrite
only the small record, not the body with it. (`source` and `id` are percent-quoted, so
neither can reach into another key.) The first request writes the record IN_FLIGHT with a
condition that it does not exist, then the body; a concurrent duplicate therefore fails
that condition and finds it IN_FLIGHT (409), a later replay finds it ACCEPTED (the same
202). An IN_FLIGHT record whose writer died is taken over after IN_FLIGHT_SECONDS (its body
written again). Both items, and the partition's registry entry (offboarding's way to them),
expire (DynamoDB TTL) after RETENTION_DAYS: the idempotency window, and how long the raw
submission can be read back.
"""

import contextlib
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any
from urllib.parse import quote

from psap.clock import format_timestamp
from psap.config import cad_table
from psap.errors import StoreUnavailable
from psap.storage.attributes import from_item, to_item
from psap.storage.aws_errors import ConditionFailed, translated
from psap.storage.dynamodb import dynamodb
from psap.storage.partitions import PartitionKind, register
from psap.storage.queries import partition_request, query_page

IN_FLIGHT_SECONDS = 30
RETENTION_DAYS = 30
_STATE_SK = "STATE"
_BODY_SK = "BODY"


def _table() -> str:
    """This store's table, from the settings read at cold start (psap.config)."""
    return cad_table()


class SubmissionState(StrEnum):
    IN_FLIGHT = "IN_FLIGHT"  # being stored and enqueued by a request
    ACCEPTED = "ACCEPTED"  # answered 202, waiting for the worker
    PROCESSED = "PROCESSED"  # mapped into the incident (or recognised as stale)
    REJECTED = "REJECTED"  # could not be applied; the CAD was told why


@dataclass(frozen=True)
class SubmissionKey:
    tenant_id: int
    source: str
    event_id: str

    def partition(self) -> str:
        source, event_id = quote(self.source, safe=""), quote(self.event_id, safe="")
        return f"T#{self.tenant_id}#SUB#{source}#{event_id}"

    def key(self) -> dict[str, dict[str, str]]:
        """The submission's record (its state); the body is beside it, under BODY."""
        return {"pk": {"S": self.partition()}, "sk": {"S": _STATE_SK}}

    def body_key(self) -> dict[str, dict[str, str]]:
        return {"pk": {"S": self.partition()}, "sk": {"S": _BODY_SK}}


@dataclass(frozen=True)
class SubmissionRecord:
    key: SubmissionKey
    receipt_id: str
    payload_hash: str
    state: SubmissionState
    in_flight_until: int
    received_at: str
    raw: bytes
    outcome: dict[str, Any] | None
    # What the worker saw before its first write of the incident (note_prior).
    prior: dict[str, Any] | None = None


def begin(
    key: SubmissionKey,
    receipt_id: str,
    payload_hash: str,
    *,
    raw: bytes,
    now: datetime,
) -> SubmissionRecord | None:
    """Writes a new IN_FLIGHT record, then the body; None when a record exists already
    (read it to decide)."""
    epoch = int(now.timestamp())
    expires = int((now + timedelta(days=RETENTION_DAYS)).timestamp())
    identity = {
        "tenantId": key.tenant_id,
        "source": key.source,
        "eventId": key.event_id,
        "receiptId": receipt_id,
        "expiresAtEpoch": expires,
    }
    item = {
        **key.key(),
        **to_item(
            {
                **identity,
                "payloadHash": payload_hash,
                "state": SubmissionState.IN_FLIGHT.value,
                "inFlightUntil": epoch + IN_FLIGHT_SECONDS,
                "receivedAt": format_timestamp(now),
            }
        ),
    }
    # Registered first, so no submission (a raw CAD body) is ever out of offboarding's reach;
    # the entry expires with the submission.
    register(
        _table(),
        key.tenant_id,
        key.partition(),
        kind=PartitionKind.CAD_SUBMISSIONS,
        expires_at_epoch=expires,
    )
    try:
        with translated("submission write failed"):
            dynamodb().put_item(
                TableName=_table(),
                Item=item,
                # A record abandoned IN_FLIGHT by a writer that died is taken over.
                ConditionExpression=(
                    "attribute_not_exists(pk) OR (#state = :inflight AND inFlightUntil < :now)"
                ),
                ExpressionAttributeNames={"#state": "state"},
                ExpressionAttributeValues={
                    ":inflight": {"S": SubmissionState.IN_FLIGHT.value},
                    ":now": {"N": str(epoch)},
                },
            )
    except ConditionFailed:
        return None
    # After the record: a duplicate never overwrites the body of the submission it repeats.
    # A writer that dies here leaves an IN_FLIGHT record, taken over (body and all) later.
    with translated("submission write failed"):
        dynamodb().put_item(
            TableName=_table(),
            Item={**key.body_key(), **to_item({**identity, "raw": zlib.compress(raw)})},
        )
    return SubmissionRecord(
        key,
        receipt_id,
        payload_hash,
        SubmissionState.IN_FLIGHT,
        epoch + IN_FLIGHT_SECONDS,
        format_timestamp(now),
        raw,
        None,
    )


def get(key: SubmissionKey) -> SubmissionRecord | None:
    """The record and its body (one Query of the submission's partition); None without a
    record. A record still IN_FLIGHT may have no body yet: its `raw` is then empty."""
    answer = query_page(partition_request(_table(), key.partition()), "submission read failed")
    items = {str(raw["sk"]["S"]): from_item(raw) for raw in answer.get("Items", [])}
    item, body = items.get(_STATE_SK), items.get(_BODY_SK)
    if item is None:
        return None
    return SubmissionRecord(
        key=key,
        receipt_id=str(item["receiptId"]),
        payload_hash=str(item["payloadHash"]),
        state=SubmissionState(item["state"]),
        in_flight_until=int(item.get("inFlightUntil", 0)),
        received_at=str(item["receivedAt"]),
        raw=zlib.decompress(bytes(body["raw"])) if body is not None else b"",
        outcome=item.get("outcome"),
        prior=item.get("priorWrite"),
    )


def _set_state(
    key: SubmissionKey,
    receipt_id: str,
    state: SubmissionState,
    *,
    outcome: dict[str, Any] | None = None,
) -> None:
    values: dict[str, Any] = {":receipt": receipt_id, ":state": state.value}
    expression = "SET #state = :state"
    if outcome is not None:
        expression += ", outcome = :outcome"
        values[":outcome"] = outcome
    with translated("submission update failed"):
        dynamodb().update_item(
            TableName=_table(),
            Key=key.key(),
            UpdateExpression=expression,
            ConditionExpression="receiptId = :receipt",
            ExpressionAttributeNames={"#state": "state"},
            ExpressionAttributeValues=to_item(values),
        )


def mark_accepted(key: SubmissionKey, receipt_id: str) -> None:
    _set_state(key, receipt_id, SubmissionState.ACCEPTED)


def mark_done(
    key: SubmissionKey, receipt_id: str, state: SubmissionState, *, outcome: dict[str, Any]
) -> None:
    _set_state(key, receipt_id, state, outcome=outcome)


def note_prior(key: SubmissionKey, receipt_id: str, prior: dict[str, Any]) -> None:
    """Records, once, what the worker saw before it first wrote the incident, so a run that
    dies after that write can still answer what the write did (psap.cad.worker)."""
    try:
        with translated("submission note failed"):
            dynamodb().update_item(
                TableName=_table(),
                Key=key.key(),
                UpdateExpression="SET priorWrite = :prior",
                ConditionExpression="receiptId = :receipt AND attribute_not_exists(priorWrite)",
                ExpressionAttributeValues=to_item({":receipt": receipt_id, ":prior": prior}),
            )
    except ConditionFailed:
        pass  # noted by an earlier try: that note is the one that counts


def abandon(key: SubmissionKey, receipt_id: str) -> None:
    """Removes an IN_FLIGHT record whose request failed, so the CAD's retry starts afresh
    (its body stays until the retry writes it again, or expires)."""
    # On failure it expires as IN_FLIGHT and is taken over by the CAD's next attempt.
    with contextlib.suppress(StoreUnavailable), translated("submission abandon"):
        dynamodb().delete_item(
            TableName=_table(),
            Key=key.key(),
            ConditionExpression="receiptId = :receipt AND #state = :inflight",
            ExpressionAttributeNames={"#state": "state"},
            ExpressionAttributeValues={
                ":receipt": {"S": receipt_id},
                ":inflight": {"S": SubmissionState.IN_FLIGHT.value},
            },
        )
