"""Raw submissions and their idempotency records in the CAD table.

  T#{t}#SUB#{source}  / ID#{id}     one submission per (tenant, CloudEvents source, id):
                                    the raw body (zlib), its canonical hash, the receipt,
                                    the state and, once processed, the outcome

(`source` and `id` are percent-quoted, so neither can reach into another key.) The first
request writes the record IN_FLIGHT with a condition that it does not exist; a concurrent
duplicate therefore fails that condition and finds it IN_FLIGHT (409), a later replay finds
it ACCEPTED (the same 202). An IN_FLIGHT record whose writer died is taken over after
IN_FLIGHT_SECONDS. Records expire (DynamoDB TTL) after RETENTION_DAYS: the idempotency
window, and how long the raw submission can be read back.
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
from psap.storage.attributes import to_item
from psap.storage.aws import ConditionFailed, translated
from psap.storage.dynamodb import dynamodb, read_item
from psap.storage.partitions import PartitionKind, register

IN_FLIGHT_SECONDS = 30
RETENTION_DAYS = 30


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

    def key(self) -> dict[str, dict[str, str]]:
        return {
            "pk": {"S": f"T#{self.tenant_id}#SUB#{quote(self.source, safe='')}"},
            "sk": {"S": f"ID#{quote(self.event_id, safe='')}"},
        }


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
    raw: bytes,
    now: datetime,
) -> SubmissionRecord | None:
    """Writes a new IN_FLIGHT record; None when one exists already (read it to decide)."""
    epoch = int(now.timestamp())
    item = {
        **key.key(),
        **to_item(
            {
                "receiptId": receipt_id,
                "payloadHash": payload_hash,
                "state": SubmissionState.IN_FLIGHT.value,
                "inFlightUntil": epoch + IN_FLIGHT_SECONDS,
                "receivedAt": format_timestamp(now),
                "raw": zlib.compress(raw),
                "tenantId": key.tenant_id,
                "source": key.source,
                "eventId": key.event_id,
                "expiresAtEpoch": int((now + timedelta(days=RETENTION_DAYS)).timestamp()),
            }
        ),
    }
    # Registered first, so no submission (a raw CAD body) is ever out of offboarding's reach.
    register(_table(), key.tenant_id, item["pk"]["S"], PartitionKind.CAD_SUBMISSIONS)
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
    item = read_item(_table(), key.key(), "submission read failed")
    if item is None:
        return None
    return SubmissionRecord(
        key=key,
        receipt_id=str(item["receiptId"]),
        payload_hash=str(item["payloadHash"]),
        state=SubmissionState(item["state"]),
        in_flight_until=int(item.get("inFlightUntil", 0)),
        received_at=str(item["receivedAt"]),
        raw=zlib.decompress(bytes(item["raw"])),
        outcome=item.get("outcome"),
        prior=item.get("priorWrite"),
    )


def _set_state(
    key: SubmissionKey,
    receipt_id: str,
    state: SubmissionState,
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
    key: SubmissionKey, receipt_id: str, state: SubmissionState, outcome: dict[str, Any]
) -> None:
    _set_state(key, receipt_id, state, outcome)


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
    """Removes an IN_FLIGHT record whose request failed, so the CAD's retry starts afresh."""
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
