"""The seals' verification without any AWS: Merkle paths, signed digests that chain, and
the positions a chain must keep (psap.audit.seals, psap.audit.chain)."""

import json
from collections.abc import Callable
from datetime import date
from typing import Any

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from psap.audit.chain import (
    GENESIS,
    BrokenChain,
    Link,
    head_line,
    link_hash,
    record_line,
    verify_lines,
)
from psap.audit.seals import (
    SealBroken,
    check_seals,
    digest_hash,
    encode_signature,
    leaf_hash,
    merkle_root_and_paths,
    root_from_path,
    signed_text,
)

DAY = date(2026, 11, 27)
KEY = ec.generate_private_key(ec.SECP256R1())


def _valid(message: bytes, signature: bytes) -> bool:
    try:
        KEY.public_key().verify(signature, message, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return False
    return True


def _chain(tenant: int, count: int) -> tuple[list[str], list[Link]]:
    chain, prev, lines, links = f"{tenant}/{DAY.isoformat()}/00", GENESIS, [], []
    for seq in range(1, count + 1):
        record = {"requestId": f"req-{seq}", "status": 200}
        link = Link(chain, seq, prev, link_hash(chain, seq, prev, record=record))
        lines.append(json.dumps(record_line(record, link)))
        links.append(link)
        prev = link.hash
    lines.append(json.dumps(head_line(links[-1])))
    return lines, links


def _sealed(
    owners: dict[tuple[int, date], list[dict[str, Any]]], period: str, prev: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A digest signed with KEY over the owners' heads, and each owner's seal."""
    order = sorted(owners)
    root, paths = merkle_root_and_paths([leaf_hash(t, d, owners[(t, d)]) for t, d in order])
    body: dict[str, Any] = {"period": period, "prev": prev, "root": root, "leaves": len(order)}
    body |= {"keyId": "seal-key", "algorithm": "ECDSA_SHA_256"}
    signature = KEY.sign(signed_text(body), ec.ECDSA(hashes.SHA256()))
    body["signature"] = encode_signature(signature)
    seals = [
        {"period": period, "tenant": t, "day": d.isoformat(), "heads": owners[(t, d)], "path": p}
        for (t, d), p in zip(order, paths, strict=True)
    ]
    return body, seals


def _head(link: Link) -> dict[str, Any]:
    return {"id": link.chain, "seq": link.seq, "hash": link.hash}


@pytest.mark.parametrize("count", [1, 2, 3, 5, 8, 13])
def test_every_leaf_path_leads_to_the_root(count: int) -> None:
    leaves = [leaf_hash(tenant, DAY, []) for tenant in range(count)]
    root, paths = merkle_root_and_paths(leaves)
    assert [root_from_path(leaf, path) for leaf, path in zip(leaves, paths, strict=True)] == [
        root
    ] * count
    # And another leaf's path does not
    if count > 1:
        assert root_from_path(leaves[0], paths[1]) != root


def _two_digests() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    lines, links = _chain(7, 6)
    first, first_seals = _sealed({(7, DAY): [_head(links[2])], (8, DAY): []}, "p1", GENESIS)
    second, second_seals = _sealed({(7, DAY): [_head(links[5])]}, "p2", digest_hash(first))
    return [first, second], [first_seals[0], second_seals[0]], lines


def test_an_intact_sealed_export_verifies_every_sealed_position() -> None:
    digests, seals, lines = _two_digests()
    sealed = check_seals(digests, seals, signature_valid=_valid, key_id="seal-key")
    assert sealed.positions() == {
        f"7/{DAY.isoformat()}/00": {
            3: json.loads(lines[2])["chain"]["hash"],
            6: json.loads(lines[5])["chain"]["hash"],
        }
    }
    verified = verify_lines(lines, sealed=sealed.positions())
    assert (verified.records, verified.unsealed) == (6, {})


Tamper = Callable[[list[dict[str, Any]], list[dict[str, Any]]], None]


@pytest.mark.parametrize(
    ("tamper", "why"),
    [
        (lambda d, s: d.pop(0), "the file has no digest"),
        (lambda d, s: d[1].update(prev=GENESIS), "signature does not verify"),
        (lambda d, s: s[0]["heads"][0].update(seq=2), "not those the digest signed"),
        (lambda d, s: d[0].update(keyId="another-key"), "not seal-key"),
    ],
)
def test_a_digest_or_seal_changed_in_the_file_fails(tamper: Tamper, why: str) -> None:
    digests, seals, _ = _two_digests()
    tamper(digests, seals)
    with pytest.raises(SealBroken, match=why):
        check_seals(digests, seals, signature_valid=_valid, key_id="seal-key")


def test_a_digest_removed_between_two_fails_on_the_chain_of_digests() -> None:
    _, links = _chain(7, 3)
    first, _ = _sealed({(7, DAY): [_head(links[0])]}, "p1", GENESIS)
    second, _ = _sealed({(7, DAY): [_head(links[1])]}, "p2", digest_hash(first))
    third, seals = _sealed({(7, DAY): [_head(links[2])]}, "p3", digest_hash(second))
    with pytest.raises(SealBroken, match="a digest was removed"):
        check_seals([first, third], seals, signature_valid=_valid, key_id=None)


def test_a_record_added_removed_or_rewritten_under_a_seal_fails() -> None:
    digests, seals, lines = _two_digests()
    positions = check_seals(digests, seals, signature_valid=_valid, key_id=None).positions()
    # Removed: the last sealed record and the head cut to the one before
    _, shorter = _chain(7, 5)
    cut = [*lines[:5], json.dumps(head_line(shorter[-1]))]
    with pytest.raises(BrokenChain, match="records removed"):
        verify_lines(cut, sealed=positions)
    # Rewritten: another chain of six records, links correct, content not the sealed one
    other_lines, _ = _chain(7, 6)
    rewritten = [line.replace("req-2", "req-X") for line in other_lines]
    relinked, prev = [], GENESIS
    for line in rewritten[:-1]:
        parsed = json.loads(line)
        link = parsed.pop("chain")
        hashed = link_hash(link["id"], link["seq"], prev, record=parsed)
        relinked.append(
            json.dumps(record_line(parsed, Link(link["id"], link["seq"], prev, hashed)))
        )
        prev = hashed
    relinked.append(json.dumps({"chainHead": {"id": link["id"], "seq": 6, "hash": prev}}))
    assert verify_lines(relinked).records == 6  # the chain alone holds
    with pytest.raises(BrokenChain, match="rewritten"):
        verify_lines(relinked, sealed=positions)
    # Added after the last seal: not a failure, reported as not yet sealed
    more, _ = _chain(7, 8)
    assert verify_lines(more, sealed=positions).unsealed == {f"7/{DAY.isoformat()}/00": 2}
