"""The incident and event write API the CAD connection and imports use (psap.incidents.store,
psap.events.store), on moto tables built from template.yaml."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from psap.config import tenant_data_table
from psap.errors import Conflict, InvalidInput, NotFound
from psap.events.models import Event, EventPersonnel
from psap.events.store import (
    find_event_id,
    get_event,
    import_event,
    link_event_to_incident,
    upsert_event,
)
from psap.incidents.models import EventReference, Incident, IncidentNote
from psap.incidents.store import (
    find_incident_id,
    finish_incident_import,
    get_incident,
    import_incident,
    upsert_incident,
)
from psap.storage.ordering import SourceOrder, UpsertOutcome

TENANT, OTHER_TENANT = 3, 4
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
NOW = datetime(2026, 3, 1, 12, 5, tzinfo=UTC)


def at(seconds: int, sequence: int = 0) -> SourceOrder:
    return SourceOrder(T0 + timedelta(seconds=seconds), sequence)


def table() -> str:
    return tenant_data_table()


def test_first_write_of_a_number_creates_an_incident_with_a_service_id(aws: None) -> None:
    result = upsert_incident(TENANT, Incident(number="24-000117", priority="P1"), at(0), now=NOW)
    assert result.outcome is UpsertOutcome.CREATED
    stored = get_incident(TENANT, result.id)
    assert stored is not None
    assert (stored.id, stored.number, stored.priority) == (result.id, "24-000117", "P1")
    assert stored.created_at == NOW  # no createdAt from the source: first store time
    assert find_incident_id(TENANT, "24-000117") == result.id


def test_a_later_update_with_the_same_number_updates_the_same_incident(aws: None) -> None:
    first = upsert_incident(TENANT, Incident(number="N-1", priority="P3"), at(0), now=NOW)
    later = upsert_incident(
        TENANT,
        Incident(number="N-1", priority="P1", notes=[IncidentNote(note_id="1", note="upgraded")]),
        at(10),
        now=NOW + timedelta(minutes=1),
    )
    assert (later.id, later.outcome) == (first.id, UpsertOutcome.UPDATED)
    stored = get_incident(TENANT, first.id)
    assert stored is not None
    assert stored.priority == "P1" and stored.notes[0].note == "upgraded"
    assert stored.created_at == NOW  # kept from the first store


def test_an_older_update_never_overwrites_newer_data(aws: None) -> None:
    created = upsert_incident(TENANT, Incident(number="N-2", priority="P1"), at(20), now=NOW)
    older = upsert_incident(TENANT, Incident(number="N-2", priority="P4"), at(5), now=NOW)
    assert (older.id, older.outcome) == (created.id, UpsertOutcome.STALE)
    stored = get_incident(TENANT, created.id)
    assert stored is not None and stored.priority == "P1"


def test_a_replay_of_the_same_order_is_stale_and_a_higher_sequence_at_the_same_time_wins(
    aws: None,
) -> None:
    created = upsert_incident(TENANT, Incident(number="N-3", priority="A"), at(0, 1), now=NOW)
    replay = upsert_incident(TENANT, Incident(number="N-3", priority="B"), at(0, 1), now=NOW)
    newer = upsert_incident(TENANT, Incident(number="N-3", priority="C"), at(0, 2), now=NOW)
    assert replay.outcome is UpsertOutcome.STALE
    assert newer.outcome is UpsertOutcome.UPDATED
    stored = get_incident(TENANT, created.id)
    assert stored is not None and stored.priority == "C"


def test_a_writer_that_loses_the_race_for_a_new_number_updates_the_winners_incident(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a writer that looked the number up before a concurrent writer created it
    from psap.storage.numbered import NumberedRecords

    real_find = NumberedRecords.find_id
    looked_up: list[str] = []

    def find_before_the_winner(*args: Any) -> int | None:
        if not looked_up:
            looked_up.append("stale read")
            winner = Incident(number="RACE-1", priority="P5")
            monkeypatch.setattr(NumberedRecords, "find_id", real_find)
            upsert_incident(TENANT, winner, at(5), now=NOW)
            monkeypatch.setattr(NumberedRecords, "find_id", find_before_the_winner)
            return None
        return real_find(*args)

    monkeypatch.setattr(NumberedRecords, "find_id", find_before_the_winner)
    # When it writes the same new number with an older order
    loser = upsert_incident(TENANT, Incident(number="RACE-1", priority="P9"), at(1), now=NOW)
    monkeypatch.setattr(NumberedRecords, "find_id", real_find)
    # Then its create fails on the number index and it finds the winner's incident: one
    # incident, holding the newer update
    assert loser.outcome is UpsertOutcome.STALE
    assert find_incident_id(TENANT, "RACE-1") == loser.id
    stored = get_incident(TENANT, loser.id)
    assert stored is not None and stored.priority == "P5"


def test_numbers_and_ids_are_per_tenant(aws: None) -> None:
    mine = upsert_incident(TENANT, Incident(number="SAME"), at(0), now=NOW)
    theirs = upsert_incident(OTHER_TENANT, Incident(number="SAME"), at(0), now=NOW)
    assert mine.id != theirs.id
    assert get_incident(OTHER_TENANT, mine.id) is None
    assert find_incident_id(OTHER_TENANT, "SAME") == theirs.id


def test_an_incident_without_a_number_is_invalid_input(aws: None) -> None:
    with pytest.raises(InvalidInput):
        upsert_incident(TENANT, Incident(number="  "), at(0), now=NOW)


def test_import_keeps_the_platforms_id_and_later_service_ids_do_not_collide(aws: None) -> None:
    outcome = import_incident(TENANT, Incident(id=5000, number="IMP-1"), NOW)
    again = import_incident(TENANT, Incident(id=5000, number="IMP-1", agency="EMS"), NOW)
    assert (outcome, again) == (UpsertOutcome.CREATED, UpsertOutcome.UPDATED)
    stored = get_incident(TENANT, 5000)
    assert stored is not None and stored.agency == "EMS"
    finish_incident_import(5000)  # the import batch's end: one sequence write
    # The connector finds the imported incident by its number, and new ids come after it.
    assert upsert_incident(TENANT, Incident(number="IMP-1"), at(0), now=NOW).id == 5000
    assert upsert_incident(TENANT, Incident(number="NEW"), at(0), now=NOW).id > 5000


def test_import_refuses_a_number_held_by_another_incident(aws: None) -> None:
    import_incident(TENANT, Incident(id=10, number="DUP"), NOW)
    with pytest.raises(Conflict):
        import_incident(TENANT, Incident(id=11, number="DUP"), NOW)
    assert get_incident(TENANT, 11) is None


def test_reimport_with_a_new_number_moves_the_number(aws: None) -> None:
    import_incident(TENANT, Incident(id=20, number="OLD"), NOW)
    import_incident(TENANT, Incident(id=20, number="RENUMBERED"), NOW)
    assert find_incident_id(TENANT, "OLD") is None
    assert find_incident_id(TENANT, "RENUMBERED") == 20


def test_import_keeps_the_ordering_guard_of_connector_updates(aws: None) -> None:
    result = upsert_incident(TENANT, Incident(number="G-1", priority="P1"), at(30), now=NOW)
    import_incident(TENANT, Incident(id=result.id, number="G-1", priority="P2"), NOW)
    stale = upsert_incident(TENANT, Incident(number="G-1", priority="P9"), at(1), now=NOW)
    assert stale.outcome is UpsertOutcome.STALE


def test_event_upsert_links_the_incident_both_ways(aws: None) -> None:
    incident = upsert_incident(TENANT, Incident(number="INC-9"), at(0), now=NOW)
    event = upsert_event(
        TENANT,
        Event(number="EV-9", personnel=[EventPersonnel(id=1, user_id=7, type="CALL_TAKER")]),
        at(0),
        now=NOW,
        incident_id=incident.id,
    )
    stored_event = get_event(TENANT, event.id)
    stored_incident = get_incident(TENANT, incident.id)
    assert stored_event is not None and stored_incident is not None
    assert stored_event.incident is not None
    assert (stored_event.incident.id, stored_event.incident.number) == (incident.id, "INC-9")
    assert stored_incident.event == EventReference(id=event.id, number="EV-9")
    assert stored_event.personnel[0].user_id == 7
    # An incident update keeps the link (the service owns it).
    upsert_incident(TENANT, Incident(number="INC-9", priority="P2"), at(9), now=NOW)
    again = get_incident(TENANT, incident.id)
    assert again is not None and again.event == EventReference(id=event.id, number="EV-9")


def test_relinking_an_incident_releases_its_previous_event(aws: None) -> None:
    incident = upsert_incident(TENANT, Incident(number="INC-R"), at(0), now=NOW).id
    first = upsert_event(TENANT, Event(number="EV-A"), at(0), now=NOW, incident_id=incident).id
    second = upsert_event(TENANT, Event(number="EV-B"), at(0), now=NOW, incident_id=incident).id
    released = get_event(TENANT, first)
    linked = get_event(TENANT, second)
    assert released is not None and released.incident is None
    assert linked is not None and linked.incident is not None
    assert linked.incident.id == incident
    stored = get_incident(TENANT, incident)
    assert stored is not None and stored.event is not None and stored.event.id == second


def test_linking_to_another_tenants_incident_is_not_found(aws: None) -> None:
    theirs = upsert_incident(OTHER_TENANT, Incident(number="X"), at(0), now=NOW).id
    event = upsert_event(TENANT, Event(number="EV-X"), at(0), now=NOW).id
    with pytest.raises(NotFound):
        link_event_to_incident(TENANT, event, theirs)


def test_event_ordering_guard_and_import(aws: None) -> None:
    created = upsert_event(TENANT, Event(number="E-1", summary="new"), at(10), now=NOW)
    stale = upsert_event(TENANT, Event(number="E-1", summary="old"), at(1), now=NOW)
    assert stale.outcome is UpsertOutcome.STALE
    stored = get_event(TENANT, created.id)
    assert stored is not None and stored.summary == "new"
    assert import_event(TENANT, Event(id=900, number="E-2"), NOW) is UpsertOutcome.CREATED
    assert find_event_id(TENANT, "E-2") == 900
