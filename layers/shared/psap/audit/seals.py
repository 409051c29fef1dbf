"""Signed digests over the audit trail's hash chains: what makes a rewritten chain visible.

A chain alone is unkeyed: whoever can write the audit table can rewrite a chain and
recompute every link. So every PERIOD, the sealer (functions/audit_sealer) reads the chains
that advanced in the period (the writer's markers) and their heads, and writes one signed
digest for the whole platform:

  digest = {period, prev (the previous digest's hash), root, leaves, keyId, algorithm,
            signature}

`root` is a Merkle root over one leaf per (tenant, day) that advanced: the leaf hashes that
tenant's heads of that day's chains `[{id, seq, hash}]`. The tenant's "seal" keeps its heads
and the leaf's Merkle path, so a tenant's export carries its own heads and the digests only,
never another tenant's chain ids or activity. The signature is made by a KMS key only the
sealer's role may use (ECDSA P-256, template.yaml's AuditSealKey): rewriting a chain after
its seal breaks the sealed head's hash, and no one without the key can sign a new digest.

Standard library only, as psap.audit.chain; the signature check is passed in by the caller
(the admin CLI brings a P-256 verifier).
"""

import base64
import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any, Final

from psap.audit.chain import GENESIS, canonical

PERIOD: Final = timedelta(minutes=5)
# A period is sealed this long after it ends: longer than the writer's Timeout (30 s), so an
# append whose marker is in the period has finished before its head is read.
SEAL_GRACE: Final = timedelta(seconds=60)
SIGNING_ALGORITHM: Final = "ECDSA_SHA_256"


def period_of(moment: datetime) -> datetime:
    """The start of the period holding `moment` (UTC, on a PERIOD boundary)."""
    epoch = int(moment.astimezone(UTC).timestamp())
    step = int(PERIOD.total_seconds())
    return datetime.fromtimestamp(epoch - epoch % step, UTC)


def period_text(period: datetime) -> str:
    return period.astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ")


def parse_period(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%MZ").replace(tzinfo=UTC)


# ---------------------------------------------------------------- Merkle tree


def _node(left: str, right: str) -> str:
    return hashlib.sha256(f"node\n{left}\n{right}".encode()).hexdigest()


def leaf_hash(tenant_id: int, day: date, heads: Sequence[Mapping[str, Any]]) -> str:
    """One (tenant, day)'s heads in a digest: their order does not matter."""
    ordered = sorted(heads, key=lambda head: str(head["id"]))
    text = canonical({"tenant": tenant_id, "day": day.isoformat(), "heads": ordered})
    return hashlib.sha256(f"leaf\n{text}".encode()).hexdigest()


def merkle_root_and_paths(leaves: Sequence[str]) -> tuple[str, list[list[list[str]]]]:
    """The root over `leaves` (in their order) and each leaf's path: [side, sibling] pairs
    from the leaf up, side "L" when the sibling is on the left. An odd node is carried up
    as it is."""
    if not leaves:
        return GENESIS, []
    paths: list[list[list[str]]] = [[] for _ in leaves]
    level = [(hash_, [index]) for index, hash_ in enumerate(leaves)]
    while len(level) > 1:
        upper: list[tuple[str, list[int]]] = []
        for start in range(0, len(level), 2):
            if start + 1 == len(level):
                upper.append(level[start])
                continue
            (left, left_leaves), (right, right_leaves) = level[start], level[start + 1]
            for index in left_leaves:
                paths[index].append(["R", right])
            for index in right_leaves:
                paths[index].append(["L", left])
            upper.append((_node(left, right), left_leaves + right_leaves))
        level = upper
    return level[0][0], paths


def root_from_path(leaf: str, path: Iterable[Sequence[str]]) -> str:
    node = leaf
    for side, sibling in path:
        node = _node(sibling, node) if side == "L" else _node(node, sibling)
    return node


# ---------------------------------------------------------------- digests


def signed_text(body: Mapping[str, Any]) -> bytes:
    """What the key signs: the digest without its signature, canonical."""
    unsigned = {name: value for name, value in body.items() if name != "signature"}
    return canonical(unsigned).encode("utf-8")


def digest_hash(body: Mapping[str, Any]) -> str:
    """What the next digest's `prev` names: the whole signed digest."""
    return hashlib.sha256(canonical(body).encode("utf-8")).hexdigest()


def encode_signature(signature: bytes) -> str:
    return base64.b64encode(signature).decode("ascii")


# ---------------------------------------------------------------- verification


class SealBroken(Exception):
    """An export whose digests or seals do not hold; the message says which and why."""


SignatureCheck = Callable[[bytes, bytes], bool]  # (message, signature) -> verified


@dataclass(frozen=True)
class SealedHead:
    chain: str
    seq: int
    hash: str
    period: str


@dataclass
class SealCheck:
    """What an export's digests and seals say: every sealed position of each chain."""

    digests: int = 0
    seals: int = 0
    heads: dict[str, dict[int, SealedHead]] = field(default_factory=dict)
    last_period: str | None = None

    def positions(self) -> dict[str, dict[int, str]]:
        """chain -> {seq: the hash its seal names}: what the chains must show."""
        return {
            chain: {seq: head.hash for seq, head in sealed.items()}
            for chain, sealed in self.heads.items()
        }


def check_seals(
    digests: Sequence[Mapping[str, Any]],
    seals: Sequence[Mapping[str, Any]],
    *,
    signature_valid: SignatureCheck,
    key_id: str | None,
) -> SealCheck:
    """Checks that the digests are signed and chain to each other, and that every seal's
    leaf leads to its digest's root; returns every sealed head of each chain."""
    result = SealCheck()
    by_period: dict[str, Mapping[str, Any]] = {}
    previous: str | None = None
    for digest in digests:
        period = str(digest.get("period"))
        if key_id is not None and digest.get("keyId") != key_id:
            raise SealBroken(f"digest {period}: signed by {digest.get('keyId')}, not {key_id}")
        try:
            signature = base64.b64decode(str(digest.get("signature", "")), validate=True)
        except ValueError as error:
            raise SealBroken(f"digest {period}: its signature is not base64") from error
        if not signature_valid(signed_text(digest), signature):
            raise SealBroken(f"digest {period}: its signature does not verify: forged or altered")
        if previous is not None and digest.get("prev") != previous:
            raise SealBroken(
                f"digest {period}: does not follow the digest before it: a digest was removed"
            )
        previous = digest_hash(digest)
        by_period[period] = digest
        result.last_period = period
    result.digests = len(by_period)
    for seal in seals:
        period = str(seal.get("period"))
        sealing = by_period.get(period)
        if sealing is None:
            raise SealBroken(f"seal of {period}: the file has no digest of that period")
        heads = list(seal.get("heads") or [])
        day = date.fromisoformat(str(seal.get("day")))
        leaf = leaf_hash(int(seal.get("tenant", -1)), day, heads)
        if root_from_path(leaf, seal.get("path") or []) != sealing.get("root"):
            raise SealBroken(
                f"seal of {period}, day {day}: its heads are not those the digest signed: altered"
            )
        for head in heads:
            sealed = SealedHead(str(head["id"]), int(head["seq"]), str(head["hash"]), period)
            known = result.heads.setdefault(sealed.chain, {}).get(sealed.seq)
            if known is not None and known.hash != sealed.hash:
                raise SealBroken(
                    f"chain {sealed.chain}, record {sealed.seq}: sealed as two different links"
                )
            result.heads[sealed.chain][sealed.seq] = sealed
        result.seals += 1
    return result
