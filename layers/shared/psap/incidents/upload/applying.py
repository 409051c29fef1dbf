"""Applying validated rows to the incidents store: CREATED, UPDATED or UNCHANGED.

Rows go in chunks of distinct numbers: one strongly consistent read of the chunk's
incidents (two BatchGetItem), one sequence write for the chunk's new ids, then a write only
for what differs. A row's fields are laid over the stored incident (fields it does not
carry keep their value); when the result equals what is stored, nothing is written
(UNCHANGED), so re-uploading a file changes nothing. An update is conditional on the
record's updatedAt as read: if the CAD (or another upload) wrote it meanwhile, the row is
laid over the new state instead, so no concurrent update is lost.

An upload is an operator's correction: it applies whatever the CAD's ordering guard holds,
and keeps the stored source order, so a later CAD update still applies over it.
"""

import hashlib
import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from psap.clock import format_timestamp
from psap.errors import StoreUnavailable
from psap.incidents import store as incidents
from psap.incidents.models import Incident
from psap.incidents.upload.models import RowOutcome, RowResult
from psap.incidents.upload.parsing import ParsedRow
from psap.storage.aws_errors import ConditionFailed
from psap.storage.numbered import StoredRecord
from psap.storage.optimistic import optimistic_write
from psap.webhooks import store as webhooks
from psap.webhooks.catalogue import IncidentUpdated, UpdateKind, WebhookUpdate
from psap.webhooks.deliveries import emit_update

CHUNK_ROWS = 100


def _content_hash(document: dict[str, Any]) -> str:
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class Applier:
    """Applies the rows of one upload for one tenant.

    `redo_since`: set when a run takes over from one that died; an UNCHANGED row whose
    incident was written since then may have been written by the dead run before it told
    the CAD, so its update is emitted again (same delivery ids: the CAD gets it once)."""

    def __init__(
        self,
        tenant_id: int,
        upload_id: str,
        clock: Callable[[], datetime],
        *,
        redo_since: datetime | None = None,
    ) -> None:
        self.tenant_id = tenant_id
        self.upload_id = upload_id
        self.clock = clock
        self.redo_since = redo_since
        # One Query per upload: most tenants' uploads then never touch the webhook tables.
        self.notify = any(
            connector.wants(UpdateKind.INCIDENT_UPDATED.value)
            for connector in webhooks.list_connectors(tenant_id)
        )

    def apply(self, rows: Sequence[ParsedRow]) -> list[RowResult]:
        """Rows with fields and distinct numbers; results in the rows' order."""
        numbers = [self._number(row) for row in rows]
        stored = incidents.read_incidents_by_number(self.tenant_id, numbers)
        results: dict[int, RowResult] = {}
        new_rows = [row for row in rows if self._number(row) not in stored]
        new_ids = incidents.reserve_incident_ids(len(new_rows))
        for row in rows:
            record = stored.get(self._number(row))
            if record is not None:
                results[row.line] = self._update(row, record)
        for row, new_id in zip(new_rows, new_ids, strict=True):
            results[row.line] = self._create(row, new_id)
        return [results[row.line] for row in rows]

    @staticmethod
    def _number(row: ParsedRow) -> str:
        if row.number is None or row.fields is None:
            raise ValueError("only accepted rows are applied")
        return row.number

    def _fields(self, row: ParsedRow) -> dict[str, Any]:
        if row.fields is None:
            raise ValueError("only accepted rows are applied")
        return row.fields

    def _create(self, row: ParsedRow, new_id: int) -> RowResult:
        incident = Incident.model_validate(self._fields(row))
        number = self._number(row)
        if incidents.create_incident_with_number(
            self.tenant_id, new_id, incident, now=self.clock()
        ):
            return RowResult(line=row.line, number=number, id=new_id, outcome=RowOutcome.CREATED)
        # Someone created this number since the chunk was read: it is an update now.
        return self._update(row, self._reread(number))

    def _reread(self, number: str) -> StoredRecord:
        found = incidents.read_incidents_by_number(self.tenant_id, [number])
        if number not in found:
            raise StoreUnavailable(f"incident {number} changed hands while uploading; retry")
        return found[number]

    def _update(self, row: ParsedRow, record: StoredRecord) -> RowResult:
        number = self._number(row)

        # The update is emitted after the write loop: a failure to emit is never a lost race.
        def attempt() -> tuple[RowResult, dict[str, Any] | None]:
            nonlocal record
            current = incidents.incident_from_record(record)
            before = incidents.incident_document(current)
            merged = Incident.model_validate({**before, **self._fields(row)})
            after = incidents.incident_document(merged)
            if after == before:
                redone = self.redo_since is not None and record.updated_at >= format_timestamp(
                    self.redo_since
                )
                unchanged = RowResult(
                    line=row.line, number=number, id=record.id, outcome=RowOutcome.UNCHANGED
                )
                return unchanged, after if redone else None
            if incidents.replace_incident_if_unchanged(
                self.tenant_id, record, merged, now=self.clock()
            ):
                updated = RowResult(
                    line=row.line, number=number, id=record.id, outcome=RowOutcome.UPDATED
                )
                return updated, after
            record = self._reread(number)
            raise ConditionFailed(f"incident {number}: written since read")

        result, emitted = optimistic_write(f"incident {number}", attempt)
        if emitted is not None:
            self._emit(row, result.id, emitted)
        return result

    def _emit(self, row: ParsedRow, incident_id: int, document: dict[str, Any]) -> None:
        if not self.notify:
            return
        number = self._number(row)
        emit_update(
            self.tenant_id,
            WebhookUpdate(
                UpdateKind.INCIDENT_UPDATED,
                IncidentUpdated(
                    incident_id=incident_id, number=number, upload_id=self.upload_id, line=row.line
                ),
                subject=number,
            ),
            seed=f"upload:{self.upload_id}:{number}:{_content_hash(document)}",
            now=self.clock(),
        )
