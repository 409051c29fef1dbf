"""The audit export's hash chains: `psap-admin audit verify` accepts an intact export and
names the first bad line when one record is altered, removed or added (psap.audit.chain)."""

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from psap.audit.chain import (
    GENESIS,
    SHARDS,
    Link,
    chain_id,
    head_line,
    link_hash,
    omitted_line,
    record_line,
    shard_of,
)
from tools.admin import main as admin_cli


def _record(index: int) -> dict[str, Any]:
    return {
        "auditVersion": 1,
        "time": f"2026-11-23T10:{index:02d}:00.000Z",
        "tenantId": 7,
        "credentialId": "cred-reader",
        "operation": "getIncident",
        "status": 200,
        "requestId": f"req-{index}",
        "resourceIds": {"incidentId": str(index)},
    }


def _export(counts: dict[str, int], omit: frozenset[int] = frozenset()) -> list[str]:
    """An export as the worker writes it: each chain's records, then its head."""
    lines: list[dict[str, Any]] = []
    for chain, count in counts.items():
        prev = GENESIS
        link = Link(chain, 0, GENESIS, GENESIS)
        for seq in range(1, count + 1):
            record = _record(seq)
            link = Link(chain, seq, prev, link_hash(chain, seq, prev, record=record))
            lines.append(omitted_line(link) if seq in omit else record_line(record, link))
            prev = link.hash
        lines.append(head_line(link))
    return [json.dumps(line) for line in lines]


def _verify(
    tmp_path: Path, lines: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    path = tmp_path / "audit.ndjson"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    code = admin_cli(["audit", "verify", str(path)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


CHAINS = {"7/2026-11-23/00": 4, "7/2026-11-23/05": 3}


def test_an_intact_export_verifies_with_the_records_not_asked_for_as_links(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = _verify(tmp_path, _export(CHAINS, omit=frozenset({2})), capsys)
    assert code == 0, said
    assert "intact: 5 records and 2 others linked in 2 chains" in said


def test_an_altered_record_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = _export(CHAINS)
    altered = json.loads(lines[1])
    altered["status"] = 404
    lines[1] = json.dumps(altered)
    code, said = _verify(tmp_path, lines, capsys)
    assert code == 1
    assert "line 2 (chain 7/2026-11-23/00, record 2)" in said and "altered" in said


@pytest.mark.parametrize(
    ("removed", "where"),
    [
        (1, "line 2 (chain 7/2026-11-23/00, record 3)"),  # from the middle
        (3, "line 4 (chain 7/2026-11-23/00, head)"),  # the chain's last record
        (4, "chain 7/2026-11-23/00"),  # the head line: the end was cut
    ],
)
def test_a_removed_line_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], removed: int, where: str
) -> None:
    lines = _export(CHAINS)
    del lines[removed]
    code, said = _verify(tmp_path, lines, capsys)
    assert code == 1
    assert where in said


def test_an_added_record_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given a fabricated record linked after the chain's first one, hash and all
    lines = _export(CHAINS)
    first = json.loads(lines[0])["chain"]
    chain = first["id"]
    record = _record(9)
    forged = Link(chain, 2, first["hash"], link_hash(chain, 2, first["hash"], record=record))
    lines.insert(1, json.dumps(record_line(record, forged)))
    # Then the record it displaced no longer follows: named as the first bad line
    code, said = _verify(tmp_path, lines, capsys)
    assert code == 1
    assert "line 3 (chain 7/2026-11-23/00, record 2)" in said


def test_a_record_added_after_a_chains_head_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _export({"7/2026-11-23/00": 2})
    head = json.loads(lines[-1])["chainHead"]
    record = _record(3)
    link = Link(head["id"], 3, head["hash"], link_hash(head["id"], 3, head["hash"], record=record))
    lines.append(json.dumps(record_line(record, link)))
    code, said = _verify(tmp_path, lines, capsys)
    assert code == 1
    assert "line 4" in said and "added" in said


def test_shards_spread_a_tenants_day_over_every_chain() -> None:
    shards = {shard_of(f"request-{index}") for index in range(2000)}
    assert shards == set(range(SHARDS))
    assert chain_id(7, date(2026, 11, 23), 5) == "7/2026-11-23/05"
