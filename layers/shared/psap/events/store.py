"""Events in the tenant-data table (layout: psap.storage.numbered, prefix EVT).

The write API, stable for its callers (the CAD intake worker, the import command):

- `upsert_event(tenant_id, event, order, now, incident_id=None) -> UpsertResult`:
  as psap.incidents.store.upsert_incident, keyed by the event's `number`, with the same
  ordering guard. With `incident_id`, the event is then linked to that incident (below),
  also when the update itself was STALE (linking is idempotent).
- `link_event_to_incident(tenant_id, event_id, incident_id)`: the event's
  `incident` and the incident's `event` then name each other, in one transaction. An event
  has one incident and an incident one event: a previous partner on either side is
  unlinked in the same transaction. NotFound if either does not exist in the tenant.
- `find_event_id(tenant_id, number) -> int | None`
- `get_event(tenant_id, event_id) -> Event | None`: one strongly consistent Query of
  the event's partition: the record, and the media links that media ingest writes beside it
  (`T#{t}#EVT#{id}` / `MEDIA#{mediaId:012d}`: id, type). Uploads are never in the document,
  which CAD updates replace whole; `media` is the document's media, then the uploaded ones
  by id, without duplicates by id.
- `media_link_item(tenant_id, event_id, media_id, media_type)`: the link item, for media
  ingest to write in the same transaction as its media record.
- `import_event(tenant_id, event, now) -> UpsertOutcome`: writes under `event.id`
  (the platform's id); re-importing updates. Its `incident` reference is stored as given.
  An import batch ends with `finish_event_import(highest_id)` (one sequence write).
"""

from datetime import datetime
from typing import Any

from psap.config import tenant_data_table
from psap.errors import InvalidInput, NotFound
from psap.events.models import Event, EventMedia, IncidentReference
from psap.incidents.store import incident_records
from psap.storage import numbered
from psap.storage.dynamodb import transact_write
from psap.storage.numbered import Link, NewRecord, NumberedRecords, RecordKind, StoredRecord
from psap.storage.optimistic import optimistic_write
from psap.storage.ordering import SourceOrder, UpsertOutcome, UpsertResult
from psap.storage.queries import partition_request, query_all


def _table() -> str:
    """This store's table, from the settings read at cold start (psap.config)."""
    return tenant_data_table()


EVENTS = RecordKind(name="event", prefix="EVT", sequence="EVENT")


def event_records() -> NumberedRecords:
    """The events of this store's table (bound per call: a test may change the table)."""
    return NumberedRecords(_table(), EVENTS)


_SERVICE_FIELDS = frozenset({"id", "created_at", "incident"})
MEDIA_LINK_PREFIX = "MEDIA#"


def _number(event: Event) -> str:
    number = (event.number or "").strip()
    if not number:
        raise InvalidInput("an event needs its number")
    return number


def _document(event: Event) -> dict[str, Any]:
    return event.model_dump(mode="json", by_alias=True, exclude=set(_SERVICE_FIELDS))


def event_from_record(record: StoredRecord) -> Event:
    incident = (
        IncidentReference(id=record.link.id, number=record.link.number)
        if record.link is not None
        else None
    )
    return Event.model_validate(
        {**record.document, "id": record.id, "createdAt": record.created_at, "incident": incident}
    )


def upsert_event(
    tenant_id: int,
    event: Event,
    order: SourceOrder,
    *,
    now: datetime,
    incident_id: int | None = None,
) -> UpsertResult:
    result = event_records().upsert_by_number(
        tenant_id,
        _number(event),
        _document(event),
        created_at=event.created_at,
        order=order,
        now=now,
    )
    if incident_id is not None:
        link_event_to_incident(tenant_id, result.id, incident_id)
    return result


def find_event_id(tenant_id: int, number: str) -> int | None:
    return event_records().find_id(tenant_id, number)


def get_event(tenant_id: int, event_id: int) -> Event | None:
    record, uploaded = _read_partition(tenant_id, event_id)
    if record is None:
        return None
    event = event_from_record(record)
    if not uploaded:
        return event
    known = {media.id for media in event.media}
    extra = [media for media in uploaded if media.id not in known]
    return event.model_copy(update={"media": [*event.media, *extra]})


def media_link_item(
    tenant_id: int, event_id: int, media_id: int, *, media_type: str
) -> dict[str, Any]:
    pk = numbered.record_key(EVENTS, tenant_id, event_id)["pk"]
    return {
        "pk": pk,
        "sk": {"S": f"{MEDIA_LINK_PREFIX}{media_id:012d}"},
        "id": {"N": str(media_id)},
        "type": {"S": media_type},
    }


def _read_partition(tenant_id: int, event_id: int) -> tuple[StoredRecord | None, list[EventMedia]]:
    """The event's record and its uploaded media links, in sort-key (= media id) order."""
    pk = numbered.record_key(EVENTS, tenant_id, event_id)["pk"]
    record: StoredRecord | None = None
    uploaded: list[EventMedia] = []
    for item in query_all(partition_request(_table(), pk), "event"):
        sk = str(item["sk"])
        if sk.startswith(MEDIA_LINK_PREFIX):
            uploaded.append(EventMedia(id=int(item["id"]), type=str(item["type"])))
        elif sk == "RECORD":
            record = numbered.stored_record(item)
    return record, uploaded


def import_event(tenant_id: int, event: Event, now: datetime) -> UpsertOutcome:
    """Call finish_event_import with the batch's highest id when a batch is done."""
    return event_records().put_by_id(tenant_id, _imported(event), now)


def finish_event_import(highest_id: int) -> None:
    """New event ids start above every imported one: once per import batch."""
    event_records().raise_floor(highest_id)


def bulk_load_events(tenant_id: int, events: list[Event], now: datetime) -> None:
    """NEW events with their ids, fast (demo data, benchmarks): see numbered.bulk_load."""
    records = [_imported(event) for event in events]
    event_records().bulk_load(tenant_id, records, now)


def _imported(event: Event) -> NewRecord:
    """The record of an imported event, under the platform's id."""
    return NewRecord(
        id=_imported_id(event),
        number=_number(event),
        document=_document(event),
        created_at=event.created_at,
        link=_link(event),
    )


def _imported_id(event: Event) -> int:
    if event.id is None:
        raise InvalidInput("an imported event needs its id")
    return event.id


def _link(event: Event) -> Link | None:
    return Link(event.incident.id, event.incident.number) if event.incident is not None else None


def link_event_to_incident(tenant_id: int, event_id: int, incident_id: int) -> None:
    def attempt() -> None:
        event = event_records().read(tenant_id, event_id)
        if event is None:
            raise NotFound(f"event {event_id} not found")
        incident = incident_records().read(tenant_id, incident_id)
        if incident is None:
            raise NotFound(f"incident {incident_id} not found")
        linked = (
            event.link is not None
            and event.link.id == incident_id
            and event.link.number == incident.number
            and incident.link is not None
            and incident.link.id == event_id
            and incident.link.number == event.number
        )
        if linked:
            return
        writes = [
            event_records().link_write(tenant_id, event, Link(incident_id, incident.number)),
            incident_records().link_write(tenant_id, incident, Link(event_id, event.number)),
        ]
        # One event per incident and one incident per event: release previous partners.
        if incident.link is not None and incident.link.id not in (None, event_id):
            previous_event = event_records().read(tenant_id, int(incident.link.id or 0))
            if previous_event is not None and _points_to(previous_event, incident_id):
                writes.append(event_records().link_write(tenant_id, previous_event, None))
        if event.link is not None and event.link.id not in (None, incident_id):
            previous_incident = incident_records().read(tenant_id, int(event.link.id or 0))
            if previous_incident is not None and _points_to(previous_incident, event_id):
                writes.append(incident_records().link_write(tenant_id, previous_incident, None))
        transact_write(writes)  # cancelled when a link changed since read: read again

    optimistic_write(f"event {event_id}", attempt, gave_up="links kept changing, retry later")


def _points_to(record: StoredRecord, other_id: int) -> bool:
    return record.link is not None and record.link.id == other_id
