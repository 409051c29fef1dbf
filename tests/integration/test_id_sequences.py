"""Id sequences hand ids out in blocks: one write of a kind's platform-wide counter item per
BLOCK_SIZE ids, not per id (docs/design.md, "Ids, counters and exports"), and an import
moves a sequence past its ids once per file, not once per record."""

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from psap.auth import store as tenants
from psap.config import tenant_data_table
from psap.incidents.models import Incident
from psap.incidents.store import upsert_incident
from psap.storage import numbered, sequences
from psap.storage.dynamodb import read_item
from psap.storage.ordering import SourceOrder
from psap.storage.sequences import BLOCK_SIZE, forget_blocks, next_id, sequence_key
from tools.tenant_import import import_files

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _sequence_value(kind: str) -> int:
    item = read_item(tenant_data_table(), sequence_key(kind), "sequence")
    return int(item["value"]) if item else 0


def test_ids_come_in_blocks_one_counter_write_per_block(aws: None) -> None:
    # Given a container drawing ids of one kind
    table = tenant_data_table()
    # When it draws two and a half blocks' worth
    ids = [next_id(table, "PROBE") for _ in range(BLOCK_SIZE * 5 // 2)]
    # Then the ids are unique and increasing, and the counter item moved once per block
    assert ids == sorted(set(ids))
    assert _sequence_value("PROBE") == 3 * BLOCK_SIZE


def test_a_new_container_starts_after_every_block_handed_out(aws: None) -> None:
    # Given a container that drew one id of its block
    table = tenant_data_table()
    first = next_id(table, "PROBE")
    # When another container (this process with its blocks forgotten) draws one
    forget_blocks()
    second = next_id(table, "PROBE")
    # Then it gets an id past the first container's whole block: no id is handed out twice
    assert second == first + BLOCK_SIZE


def test_an_import_moves_the_sequence_once_per_file_past_its_highest_id(
    aws: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a file of 6 incidents that keep the platform's ids
    tenant = tenants.create_tenant("Import floor").tenant_id
    floors: list[int] = []
    real_floor = sequences.raise_floor

    def counted(table: str, kind: str, at_least: int) -> None:
        floors.append(at_least)
        real_floor(table, kind, at_least)

    monkeypatch.setattr(numbered, "raise_floor", counted)
    ids = [5000, 5003, 5001, 5005, 5002, 5004]
    rows: list[dict[str, Any]] = [{"id": value, "number": f"IMP-{value}"} for value in ids]
    path = tmp_path / "incidents.jsonl"
    path.write_text("".join(f"{json.dumps(row)}\n" for row in rows), encoding="utf-8")
    # When it is imported
    (report,) = import_files([path], tenant)
    # Then the sequence moved once, to the highest id, and a new incident's id is past it
    assert (report.created, report.errors) == (6, [])
    assert floors == [5005]
    created = upsert_incident(
        tenant, Incident(number="CAD-1"), SourceOrder(NOW, 0), now=NOW + timedelta(seconds=1)
    )
    assert created.id > 5005
