"""Incidents in the tenant-data table (layout: psap.storage.numbered, prefix INC).

The write API, stable for its callers (the CAD intake worker, the import command):

- `upsert_incident(tenant_id, incident, order, now) -> UpsertResult`: the CAD's
  incident number identifies the incident. The first write of a number creates an incident
  with a new service id; every later write with the same number updates that incident
  (never a second one, even when two writers race). `order` (SourceOrder: the source's event
  time, then a sequence) guards the update: it is written only if newer than the stored
  order, so an older or replayed update changes nothing and answers STALE. The document is
  replaced as a whole by the given fields; `id` and `event` of the argument are ignored (the
  service owns them; link with psap.events.store). `createdAt`, when given, is kept as the
  source's; when absent, the time of the first store stands.
- `find_incident_id(tenant_id, number) -> int | None`
- `get_incident(tenant_id, incident_id) -> Incident | None`: one GetItem.
- `import_incident(tenant_id, incident, now) -> UpsertOutcome`: writes under
  `incident.id` (the platform's id); re-importing updates. Conflict if the number belongs
  to another incident. Its `event` reference is stored as given. An import batch ends with
  `finish_incident_import(highest_id)` (one sequence write per batch, not per record).

For uploads (psap.incidents.upload), which compare before they write:

- `read_incidents_by_number(tenant_id, numbers) -> {number: StoredRecord}`: two
  BatchGetItem, strongly consistent.
- `reserve_incident_ids(count)`, then `create_incident_with_number(...) -> bool`:
  False when the number was taken meanwhile (read again; it is an update now).
- `replace_incident_if_unchanged(tenant_id, record, incident, now) -> bool`: the
  document only (id, number, event link, createdAt and the CAD's source order are kept),
  conditional on the record's updatedAt as read; False when someone wrote it since.

Every call takes the tenant: an id or number of another tenant is simply not found.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from psap.config import tenant_data_table
from psap.errors import InvalidInput
from psap.incidents.models import EventReference, Incident
from psap.storage.numbered import Link, NewRecord, NumberedRecords, RecordKind, StoredRecord
from psap.storage.ordering import SourceOrder, UpsertOutcome, UpsertResult


def _table() -> str:
    """This store's table, from the settings read at cold start (psap.config)."""
    return tenant_data_table()


INCIDENTS = RecordKind(name="incident", prefix="INC", sequence="INCIDENT")


def incident_records() -> NumberedRecords:
    """The incidents of this store's table (bound per call: a test may change the table)."""
    return NumberedRecords(_table(), INCIDENTS)


# Kept outside the compressed document: the service owns them.
_SERVICE_FIELDS = frozenset({"id", "created_at", "event"})


def _number(incident: Incident) -> str:
    number = (incident.number or "").strip()
    if not number:
        raise InvalidInput("an incident needs its number")
    return number


def _document(incident: Incident) -> dict[str, Any]:
    return incident.model_dump(mode="json", by_alias=True, exclude=set(_SERVICE_FIELDS))


def incident_document(incident: Incident) -> dict[str, Any]:
    """What the store keeps of an incident: its fields without the service-owned ones."""
    return _document(incident)


def incident_from_record(record: StoredRecord) -> Incident:
    event = (
        EventReference(id=record.link.id, number=record.link.number)
        if record.link is not None
        else None
    )
    return Incident.model_validate(
        {**record.document, "id": record.id, "createdAt": record.created_at, "event": event}
    )


def upsert_incident(
    tenant_id: int, incident: Incident, order: SourceOrder, *, now: datetime
) -> UpsertResult:
    return incident_records().upsert_by_number(
        tenant_id,
        _number(incident),
        _document(incident),
        created_at=incident.created_at,
        order=order,
        now=now,
    )


def find_incident_id(tenant_id: int, number: str) -> int | None:
    return incident_records().find_id(tenant_id, number)


def get_incident(tenant_id: int, incident_id: int) -> Incident | None:
    record = read_incident_record(tenant_id, incident_id)
    return incident_from_record(record) if record is not None else None


def read_incident_record(tenant_id: int, incident_id: int) -> StoredRecord | None:
    """The stored record, with the source order of the update it holds."""
    return incident_records().read(tenant_id, incident_id)


def import_incident(tenant_id: int, incident: Incident, now: datetime) -> UpsertOutcome:
    """Call finish_incident_import with the batch's highest id when a batch is done."""
    return incident_records().put_by_id(tenant_id, _imported(incident), now)


def finish_incident_import(highest_id: int) -> None:
    """New incident ids start above every imported one: once per import batch."""
    incident_records().raise_floor(highest_id)


def bulk_load_incidents(tenant_id: int, incidents: list[Incident], now: datetime) -> None:
    """NEW incidents with their ids, fast (demo data, benchmarks): see numbered.bulk_load."""
    records = [_imported(incident) for incident in incidents]
    incident_records().bulk_load(tenant_id, records, now)


def _imported(incident: Incident) -> NewRecord:
    """The record of an imported incident, under the platform's id."""
    return NewRecord(
        id=_imported_id(incident),
        number=_number(incident),
        document=_document(incident),
        created_at=incident.created_at,
        link=_link(incident),
    )


def _imported_id(incident: Incident) -> int:
    if incident.id is None:
        raise InvalidInput("an imported incident needs its id")
    return incident.id


def _link(incident: Incident) -> Link | None:
    return Link(incident.event.id, incident.event.number) if incident.event is not None else None


def read_incidents_by_number(tenant_id: int, numbers: Sequence[str]) -> dict[str, StoredRecord]:
    return incident_records().read_by_numbers(tenant_id, numbers)


def reserve_incident_ids(count: int) -> list[int]:
    """`count` new incident ids in one sequence write (an unused one is only a gap)."""
    return incident_records().reserve_ids(count)


def create_incident_with_number(
    tenant_id: int, incident_id: int, incident: Incident, *, now: datetime
) -> bool:
    record = NewRecord(incident_id, _number(incident), _document(incident), None, None)
    return incident_records().create_with_number(tenant_id, record, now)


def replace_incident_if_unchanged(
    tenant_id: int, record: StoredRecord, incident: Incident, *, now: datetime
) -> bool:
    return incident_records().replace_document_if_unchanged(
        tenant_id, record, _document(incident), now=now
    )
