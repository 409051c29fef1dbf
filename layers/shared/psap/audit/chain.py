"""The audit trail's hash chains, and the verification of an export against them.

Every record is appended to one chain: (tenant, day of its time, shard), the shard taken
from its request id, so a busy tenant's day is SHARDS independent chains on SHARDS keys
(docs/design.md, "Audit records"). A record's link is SHA-256 over the chain id, its
sequence number, the previous link and the record's canonical JSON: changing, removing or
inserting a record breaks every later link of its chain.

An NDJSON export carries each chain it touches whole: the records asked for as
`{...record, "chain": {id, seq, prev, hash}}`, the others as `{"chain": {...}, "omitted":
true}` (their link, not their content), and one `{"chainHead": {id, seq, hash}}` line after
the chain's last record. `verify_lines` checks a file without any store or key; given the
positions the file's signed seals name (psap.audit.seals), it also checks that the chains
still hold them. Standard library only: the authorizer and the admin CLI import it.
"""

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Final

SHARDS: Final = 16
GENESIS: Final = "0" * 64


def shard_of(request_id: str) -> int:
    return int.from_bytes(hashlib.sha256(request_id.encode()).digest()[:4], "big") % SHARDS


def chain_id(tenant_id: int, day: date, shard: int) -> str:
    return f"{tenant_id}/{day.isoformat()}/{shard:02d}"


def canonical(record: Mapping[str, Any]) -> str:
    """One text per record whatever its key order: what the link hashes."""
    return json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def link_hash(chain: str, seq: int, prev: str, *, record: Mapping[str, Any]) -> str:
    text = f"{chain}\n{seq}\n{prev}\n{canonical(record)}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Link:
    chain: str
    seq: int
    prev: str
    hash: str

    def as_json(self) -> dict[str, Any]:
        return {"id": self.chain, "seq": self.seq, "prev": self.prev, "hash": self.hash}


def record_line(record: Mapping[str, Any], link: Link) -> dict[str, Any]:
    return {**record, "chain": link.as_json()}


def omitted_line(link: Link) -> dict[str, Any]:
    return {"chain": link.as_json(), "omitted": True}


def head_line(link: Link) -> dict[str, Any]:
    return {"chainHead": {"id": link.chain, "seq": link.seq, "hash": link.hash}}


class BrokenChain(Exception):
    """The first line of an export that does not verify, and why."""

    def __init__(self, line: int, what: str, why: str) -> None:
        super().__init__(f"line {line} ({what}): {why}")
        self.line = line


@dataclass
class _ChainState:
    seq: int = 0
    hash: str = GENESIS
    closed: bool = False


# Lines of an export that are not chains: the signed digests and the tenant's seals
# (psap.audit.seals), checked apart.
SEAL_LINES: Final = ("digest", "seal")


@dataclass
class Verified:
    records: int = 0
    omitted: int = 0
    chains: dict[str, _ChainState] = field(default_factory=dict)
    unsealed: dict[str, int] = field(default_factory=dict)  # chain -> records after its seal


def verify_lines(
    lines: Iterable[str], *, sealed: Mapping[str, Mapping[int, str]] | None = None
) -> Verified:
    """Checks every link and head of an NDJSON export; raises BrokenChain at the first
    line that does not hold (an altered, removed or added record). With `sealed` (chain ->
    {seq: hash} from the file's verified seals), every sealed position must be in the file
    with that hash: a chain rewritten, even with correct links, fails there."""
    result = Verified()
    sealed = sealed or {}
    number = 0
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        _verify_line(result, number, text, sealed=sealed)
    for chain, state in result.chains.items():
        if not state.closed:
            raise BrokenChain(
                number + 1,
                f"chain {chain}",
                f"no chainHead line after record {state.seq}: the chain's end was cut",
            )
    for chain, positions in sealed.items():
        last_sealed = max(positions)
        found = result.chains.get(chain)
        if found is None or found.seq < last_sealed:
            ends = "has no record of it" if found is None else f"ends it at {found.seq}"
            raise BrokenChain(
                number + 1,
                f"chain {chain}",
                f"sealed up to record {last_sealed}, the file {ends}: records removed",
            )
    for chain, state in result.chains.items():
        last_sealed = max(sealed.get(chain, {0: ""}))
        if state.seq > last_sealed:
            result.unsealed[chain] = state.seq - last_sealed
    return result


def _verify_line(
    result: Verified, number: int, text: str, *, sealed: Mapping[str, Mapping[int, str]]
) -> None:
    try:
        line = json.loads(text)
    except ValueError as error:
        raise BrokenChain(number, "not JSON", str(error)) from error
    if not isinstance(line, dict):
        raise BrokenChain(number, "not an object", "every line is a JSON object")
    if any(name in line for name in SEAL_LINES):
        return
    if "chainHead" in line:
        _verify_head(result, number, line["chainHead"])
        return
    link = line.get("chain")
    if not isinstance(link, dict) or not {"id", "seq", "prev", "hash"} <= link.keys():
        raise BrokenChain(number, "no chain link", "a record line carries chain {id,seq,prev,hash}")
    chain, seq = str(link["id"]), link["seq"]
    what = f"chain {chain}, record {seq}"
    state = result.chains.setdefault(chain, _ChainState())
    if state.closed:
        raise BrokenChain(number, what, "a record after its chain's head: added")
    if seq != state.seq + 1:
        why = "missing record(s) before it" if seq > state.seq + 1 else "repeated or added"
        raise BrokenChain(number, what, f"expected record {state.seq + 1}: {why}")
    if link["prev"] != state.hash:
        raise BrokenChain(number, what, "does not follow the previous record: removed or added")
    if line.get("omitted") is True:
        result.omitted += 1
    else:
        record = {name: value for name, value in line.items() if name != "chain"}
        if link_hash(chain, seq, str(link["prev"]), record=record) != link["hash"]:
            raise BrokenChain(number, what, "its content does not match its hash: altered")
        result.records += 1
    expected = sealed.get(chain, {}).get(seq)
    if expected is not None and expected != link["hash"]:
        raise BrokenChain(
            number, what, "not the link its signed seal names: the chain was rewritten"
        )
    state.seq, state.hash = seq, str(link["hash"])


def _verify_head(result: Verified, number: int, head: Any) -> None:
    if not isinstance(head, dict):
        raise BrokenChain(number, "chainHead", "not an object")
    chain = str(head.get("id"))
    state = result.chains.get(chain)
    what = f"chain {chain}, head"
    if state is None or state.closed:
        raise BrokenChain(number, what, "a head without its chain's records")
    if head.get("seq") != state.seq or head.get("hash") != state.hash:
        raise BrokenChain(
            number,
            what,
            f"the head names record {head.get('seq')}, the file ends the chain at {state.seq}: "
            "records removed or added at its end",
        )
    state.closed = True
