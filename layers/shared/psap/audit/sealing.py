"""Where the audit trail's signed digests live, how the sealer makes them, and what an
export reads of them (psap.audit.seals says what they are).

Layout (docs/security.md, "Audit"). The writer's markers of the chains that advanced in a
period are in the audit table (psap.audit.seal_markers). In the seal table (AuditSealTable),
written by the sealer alone (its role may only read the audit table, so it cannot overwrite
a record however it is misused):

  AUDITDIGEST#{yyyy-mm-dd}        / {period}     the period's signed digest (`digest`, JSON)
  AUDITDIGEST                     / HEAD         the last period sealed and its digest's hash
  T#{t}#AUDITSEAL#{yyyy-mm-dd}    / {period}     the tenant's heads of that day's chains in
                                                  the digest, and the leaf's Merkle path
  T#{t}#AUDITSEALED#{yyyy-mm-dd}  / {shard}      how far each chain of the day is sealed:
                                                  where the next period's archive starts
  AUDITCLAIM                      / {period}     the run sealing the period: its seals,
                                                  digest and positions are written only
                                                  while the claim is that run's

Each seal's head also names `after`, the chain's position sealed before: the records of
(after, seq] are what the period added, and the archiver (psap.audit.archive) copies them
with the seal and the digest to the write-once archive bucket, one message per seal.

The sealer reads only what changed: the period's markers and one head per marked chain,
never the tenants.
"""

import json
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import cache
from typing import Any, Final, cast

import botocore.session

from psap.audit.chain import GENESIS, canonical
from psap.audit.seal_markers import chain_id_of, head_of, marked_in
from psap.audit.seals import (
    PERIOD,
    SEAL_GRACE,
    SIGNING_ALGORITHM,
    digest_hash,
    encode_signature,
    leaf_hash,
    merkle_root_and_paths,
    parse_period,
    period_of,
    period_text,
    signed_text,
)
from psap.clock import format_timestamp, parse_timestamp, utc_now
from psap.config import audit_archive_queue_url, audit_seal_table, audit_table, client_options
from psap.observability import logger
from psap.storage.aws_errors import ConditionFailed, translated
from psap.storage.dynamodb import dynamodb, read_item, transact_write
from psap.storage.queries import query_pages
from psap.storage.sqs import send_messages

# A claim is read within minutes of its period; a week covers any sealer outage.
_CLAIM_EXPIRY: Final = timedelta(days=7)
# A run seals at most this many periods (four hours): after an outage it catches up in
# bounded steps, one schedule tick after another.
MAX_PERIODS_PER_RUN: Final = 48
_HEAD_PK: Final = "AUDITDIGEST"
_HEAD_SK: Final = "HEAD"
_NEW: Final = "attribute_not_exists(pk)"
_CLAIM_PK: Final = "AUDITCLAIM"
# A claim this old was made by a run that has ended: the sealer's Timeout is 120 s.
_CLAIM_LIFE: Final = timedelta(seconds=180)


def _table() -> str:
    """The audit records and the writer's markers: the sealer only reads them."""
    return audit_table()


def _seal_table() -> str:
    """The digests, the seals and the sealed positions: the sealer's own."""
    return audit_seal_table()


# ---------------------------------------------------------------- the sealer


@cache
def kms() -> Any:
    """One client per warm container, created on first use (after a test's moto is up).
    Untyped: the project carries no KMS stubs for one call."""
    return botocore.session.get_session().create_client("kms", **client_options())


@dataclass(frozen=True)
class SealRun:
    sealed: list[str]  # the periods given a digest
    empty: int  # periods in which no chain advanced (no digest, nothing signed)


def seal_due(now: datetime, *, key_id: str, retention_days: int) -> SealRun:
    """Seals every period that ended SEAL_GRACE ago and is not sealed yet, oldest first, at
    most MAX_PERIODS_PER_RUN. The first run starts at the last closed period."""
    last_closed = period_of(now - SEAL_GRACE) - PERIOD
    head = read_item(_seal_table(), _head_key(), "audit digest head")
    period = parse_period(str(head["period"])) + PERIOD if head else last_closed
    prev = str(head["hash"]) if head else GENESIS
    run = _Run(uuid.uuid4().hex, now)
    sealed: list[str] = []
    empty = 0
    for _ in range(MAX_PERIODS_PER_RUN):
        if period > last_closed:
            break
        try:
            digest = _seal(period, prev, run, key_id=key_id, retention_days=retention_days)
        except _ClaimLost:
            # Another run seals the period: its seals are not overwritten by this one's.
            logger.warning(
                "audit period sealed by another run", extra={"period": period_text(period)}
            )
            break
        if digest is None:
            empty += 1
        else:
            prev = digest_hash(digest)
            sealed.append(period_text(period))
        _put_head(period, prev, after=head)
        head = {"period": period_text(period), "hash": prev}
        period += PERIOD
    return SealRun(sealed, empty)


@dataclass(frozen=True)
class _Run:
    """One sealer run: what its claims name."""

    id: str
    now: datetime


class _ClaimLost(Exception):
    """Another run holds the period (or took it over): this run writes nothing more of it."""


def _claim_key(period: datetime) -> dict[str, dict[str, str]]:
    return {"pk": {"S": _CLAIM_PK}, "sk": {"S": period_text(period)}}


def _claim(period: datetime, run: _Run) -> None:
    """Makes the period this run's before it signs: two runs sealing one period at once
    (a manual invoke beside the schedule) would otherwise mix their seals, and a seal
    that is not its digest's fails every export of it. A run that stopped (an error, its
    Timeout) leaves its claim; the next one takes it over once it is _CLAIM_LIFE old."""
    stale = int((run.now - _CLAIM_LIFE).timestamp())
    item = {
        **_claim_key(period),
        "run": {"S": run.id},
        "claimedAt": {"N": str(int(run.now.timestamp()))},
        "expiresAt": {"N": str(int((period + _CLAIM_EXPIRY).timestamp()))},
    }
    try:
        with translated("audit period claim failed"):
            dynamodb().put_item(
                TableName=_seal_table(),
                Item=item,
                ConditionExpression=f"{_NEW} OR claimedAt < :stale",
                ExpressionAttributeValues={":stale": {"N": str(stale)}},
            )
    except ConditionFailed as error:
        raise _ClaimLost(period_text(period)) from error


def _seal(
    period: datetime, prev: str, run: _Run, *, key_id: str, retention_days: int
) -> dict[str, Any] | None:
    """The period's digest, written with its seals (seals first: a stored digest means
    all its seals are stored); an earlier run's digest when that run stopped after it."""
    stored = read_item(_seal_table(), _digest_key(period), "audit digest")
    if stored is not None:
        return cast(dict[str, Any], json.loads(str(stored["digest"])))
    marked = marked_in(period)
    if not marked:
        return None
    heads: dict[tuple[int, date], list[dict[str, Any]]] = {}
    sealed_before: dict[tuple[int, date], dict[str, int]] = {}
    for chain in sorted(marked, key=lambda entry: entry.chain_key):
        owner = (chain.tenant_id, chain.day)
        if owner not in sealed_before:
            sealed_before[owner] = _sealed_positions(*owner)
        seq, hash_ = head_of(chain.chain_key)
        chain_id = chain_id_of(chain.chain_key)
        after = sealed_before[owner].get(chain_id, 0)
        if seq > after:
            heads.setdefault(owner, []).append(
                {"id": chain_id, "seq": seq, "hash": hash_, "after": after}
            )
    if not heads:
        return None
    _claim(period, run)
    # After the heads are read: an export asked for later holds every one of them.
    sealed_at = format_timestamp(utc_now())
    owners = sorted(heads)
    leaves = [leaf_hash(tenant, day, heads[(tenant, day)]) for tenant, day in owners]
    root, paths = merkle_root_and_paths(leaves)
    body: dict[str, Any] = {
        "period": period_text(period),
        "prev": prev,
        "root": root,
        "leaves": len(leaves),
        "keyId": key_id,
        "algorithm": SIGNING_ALGORITHM,
    }
    with translated("audit digest signing failed"):
        signature = kms().sign(
            KeyId=key_id,
            Message=signed_text(body),
            MessageType="RAW",
            SigningAlgorithm=SIGNING_ALGORITHM,
        )["Signature"]
    body["signature"] = encode_signature(signature)
    expires = {"N": str(int((period + timedelta(days=retention_days + 1)).timestamp()))}
    for (tenant, day), path in zip(owners, paths, strict=True):
        seal = {
            "period": body["period"],
            "tenant": tenant,
            "day": day.isoformat(),
            "heads": sorted(heads[(tenant, day)], key=lambda head: str(head["id"])),
            "path": path,
        }
        _put(
            {
                "pk": {"S": _seal_pk(tenant, day)},
                "sk": {"S": body["period"]},
                "seal": {"S": canonical(seal)},
                "sealedAt": {"S": sealed_at},
                "expiresAt": expires,
            },
            period,
            run,
        )
    # Before the digest: a run that stops after it has sent them (a retry sends them again,
    # and the archiver's copy of a seal is the same object written once more).
    send_messages(
        audit_archive_queue_url(),
        [
            {"period": body["period"], "tenantId": tenant, "day": day.isoformat()}
            for tenant, day in owners
        ],
    )
    _put(
        {**_digest_key(period), "digest": {"S": canonical(body)}, "expiresAt": expires},
        period,
        run,
        new=True,
    )
    for (tenant, day), owned in heads.items():
        for head in owned:
            _put(
                {
                    "pk": {"S": _sealed_pk(tenant, day)},
                    "sk": {"S": str(head["id"]).rsplit("/", 1)[-1]},
                    "chain": {"S": str(head["id"])},
                    "seq": {"N": str(head["seq"])},
                    "expiresAt": expires,
                },
                period,
                run,
            )
    return body


def _sealed_pk(tenant_id: int, day: date) -> str:
    return f"T#{tenant_id}#AUDITSEALED#{day.isoformat()}"


def _sealed_positions(tenant_id: int, day: date) -> dict[str, int]:
    """chain id -> the position sealed last, for the tenant's chains of the day (at most
    SHARDS small items)."""
    request = {
        "TableName": _seal_table(),
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": _sealed_pk(tenant_id, day)}},
        "ConsistentRead": True,
    }
    return {
        item["chain"]["S"]: int(item["seq"]["N"])
        for items in query_pages(request, f"audit sealed positions of tenant {tenant_id}")
        for item in items
    }


def sealed_through() -> datetime | None:
    """The last period the sealer has finished (with a digest or none), if it ever ran."""
    head = read_item(_seal_table(), _head_key(), "audit digest head")
    return None if head is None else parse_period(str(head["period"]))


def read_digest(period: datetime) -> dict[str, Any] | None:
    stored = read_item(_seal_table(), _digest_key(period), "audit digest")
    return None if stored is None else cast(dict[str, Any], json.loads(str(stored["digest"])))


def read_seal(tenant_id: int, day: date, period: datetime) -> dict[str, Any] | None:
    key = {"pk": {"S": _seal_pk(tenant_id, day)}, "sk": {"S": period_text(period)}}
    stored = read_item(_seal_table(), key, "audit seal")
    return None if stored is None else cast(dict[str, Any], json.loads(str(stored["seal"])))


def _put(item: dict[str, Any], period: datetime, run: _Run, *, new: bool = False) -> None:
    """Writes the item while the period's claim is still this run's, in one transaction
    with the claim's check: a run whose claim was taken over stops at its next write."""
    put: dict[str, Any] = {"TableName": _seal_table(), "Item": item}
    if new:
        put["ConditionExpression"] = _NEW
    check = {
        "TableName": _seal_table(),
        "Key": _claim_key(period),
        "ConditionExpression": "#run = :run",
        "ExpressionAttributeNames": {"#run": "run"},
        "ExpressionAttributeValues": {":run": {"S": run.id}},
    }
    transact_write(
        [{"ConditionCheck": check}, {"Put": put}],
        on_cancel=lambda _codes: _ClaimLost(period_text(period)),
    )


def _head_key() -> dict[str, dict[str, str]]:
    return {"pk": {"S": _HEAD_PK}, "sk": {"S": _HEAD_SK}}


def _put_head(period: datetime, digest: str, *, after: Mapping[str, Any] | None) -> None:
    """Moves the pointer on from the one this run read: two runs never both advance it."""
    request: dict[str, Any] = {
        "TableName": _seal_table(),
        "Item": {**_head_key(), "period": {"S": period_text(period)}, "hash": {"S": digest}},
    }
    if after is None:
        request["ConditionExpression"] = _NEW
    else:
        request["ConditionExpression"] = "#period = :after"
        request["ExpressionAttributeNames"] = {"#period": "period"}
        request["ExpressionAttributeValues"] = {":after": {"S": str(after["period"])}}
    with translated("audit digest head write failed"):
        dynamodb().put_item(**request)


def _digest_pk(day: date) -> str:
    return f"{_HEAD_PK}#{day.isoformat()}"


def _digest_key(period: datetime) -> dict[str, dict[str, str]]:
    return {"pk": {"S": _digest_pk(period.date())}, "sk": {"S": period_text(period)}}


def _seal_pk(tenant_id: int, day: date) -> str:
    return f"T#{tenant_id}#AUDITSEAL#{day.isoformat()}"


# ---------------------------------------------------------------- what an export carries


def seal_lines(
    tenant_id: int, first_day: date, last_day: date, *, before: datetime
) -> Iterator[dict[str, Any]]:
    """The digests and the tenant's seals that vouch for its chains of the days, as sealed
    before `before` (when the export was asked for: every head they name is in the file):
    every seal of those days, then the digests from the first seal's period to the last's,
    all of them, so the verifier sees that none is missing."""
    seals: list[dict[str, Any]] = []
    day = first_day
    while day <= last_day:
        request = {
            "TableName": _seal_table(),
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": _seal_pk(tenant_id, day)}},
        }
        for items in query_pages(request, f"audit seals of tenant {tenant_id}"):
            seals.extend(
                json.loads(item["seal"]["S"])
                for item in items
                if parse_timestamp(item["sealedAt"]["S"]) < before
            )
        day += timedelta(days=1)
    if not seals:
        return
    periods = sorted({str(seal["period"]) for seal in seals})
    yield from ({"digest": digest} for digest in _digests_between(periods[0], periods[-1]))
    yield from ({"seal": seal} for seal in seals)


def _digests_between(first: str, last: str) -> Iterator[dict[str, Any]]:
    day, last_day = parse_period(first).date(), parse_period(last).date()
    while day <= last_day:
        request = {
            "TableName": _seal_table(),
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :first AND :last",
            "ExpressionAttributeValues": {
                ":pk": {"S": _digest_pk(day)},
                ":first": {"S": first},
                ":last": {"S": last},
            },
        }
        for items in query_pages(request, "audit digests"):
            yield from (cast(dict[str, Any], json.loads(item["digest"]["S"])) for item in items)
        day += timedelta(days=1)
