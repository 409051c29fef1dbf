"""A submission's incident document -> the service's incident and event records.

Flat form: field for field. NENA EIDO form (the fields read; others are ignored):

  Incident field          EIDO source
  number                  incidentComponent.incidentTrackingIdentifier
  sysId                   incidentComponent.componentIdentifier
  caseNumber              incidentComponent.caseIdentifier, else localIncidentIdentifier
  incidentType            incidentComponent.incidentTypeCommonRegistryText (first)
  priority                incidentComponent.incidentCommonPriorityNumber
  disposition             incidentComponent.disposition[0] registry text, else code
  responseArea            incidentComponent.responseAreaText
  incidentDate            incidentComponent.incidentCreationTimeStamp, else first call start
  closedAt                incidentComponent.incidentClosedTimeStamp (or the envelope time
                          of an incident.closed)
  location, lat/long      the locationComponent the incident references (else the first):
                          civicAddressText or a string locationByValue; latitude/longitude
  agency, agencyType      agencyComponent[0].agencyName, agencyTypeCommonRegistryText
  callerNumber/Name, callReceivedTime, callPickupTime, callHangupTime, callSource,
  callPosition, callTakerId/Name
                          callComponent[0] (callbackNumber, callerName, callStartTimeStamp,
                          callAnswerTimeStamp, callEndTimeStamp, ...)
  notes                   notesComponent[] (noteIdentifier, noteText, author, noteDateTimeStamp)
  responders              emergencyResourceComponent[] (unitIdentifier, personnel, the
                          dispatched / en-route / on-scene / cleared time stamps)
  event                   callComponent[0] with a callIdentifier becomes the event record
                          (number, type, summary, eventDate = call start)

`initialIncidentType` and `initialLocation` are what the first submission said unless a
flat submission sets them; a later update keeps them.
"""

from dataclasses import dataclass

from psap.cad.envelope import CadEventType, EidoIncident, FlatIncident, Submission
from psap.events.models import Event, EventPersonnel
from psap.incidents.models import Incident, IncidentNote, IncidentResponder
from psap.storage.ordering import SourceOrder


@dataclass(frozen=True)
class MappedSubmission:
    incident: Incident
    event: Event | None
    order: SourceOrder


def map_submission(submission: Submission) -> MappedSubmission:
    envelope = submission.envelope
    order = SourceOrder(envelope.time, envelope.sequence or 0)
    if isinstance(submission.incident, EidoIncident):
        incident, event = _from_eido(submission.incident)
    else:
        incident, event = _from_flat(submission.incident)
    if envelope.type is CadEventType.CLOSED and incident.closed_at is None:
        incident = incident.model_copy(update={"closed_at": envelope.time})
    return MappedSubmission(incident, event, order)


def carry_forward(new: Incident, stored: Incident | None) -> Incident:
    """Keeps what only the first submission says: the initial type and location."""
    initial_type = new.initial_incident_type or (
        stored.initial_incident_type if stored is not None else new.incident_type
    )
    initial_location = new.initial_location or (
        stored.initial_location if stored is not None else new.location
    )
    return new.model_copy(
        update={"initial_incident_type": initial_type, "initial_location": initial_location}
    )


def _from_flat(flat: FlatIncident) -> tuple[Incident, Event | None]:
    fields = flat.model_dump(exclude={"event"})
    incident = Incident.model_validate(fields)
    event = None
    if flat.event is not None:
        event = Event(
            number=flat.event.number,
            event_type=flat.event.event_type,
            summary=flat.event.summary,
            location=flat.event.location,
            event_date=flat.event.event_date,
            personnel=[
                EventPersonnel.model_validate(person.model_dump())
                for person in flat.event.personnel
            ],
        )
    return incident, event


def _from_eido(eido: EidoIncident) -> tuple[Incident, Event | None]:
    core = eido.incident_component[0]
    locations = {loc.component_identifier: loc for loc in eido.location_component}
    location = locations.get(core.location_reference) or (
        eido.location_component[0] if eido.location_component else None
    )
    address = latitude = longitude = None
    if location is not None:
        address = location.civic_address_text
        latitude, longitude = location.latitude, location.longitude
        by_value = location.location_by_value
        if isinstance(by_value, str):
            address = address or by_value
        elif by_value is not None:
            latitude = latitude or by_value.latitude
            longitude = longitude or by_value.longitude
    call = eido.call_component[0] if eido.call_component else None
    agency = eido.agency_component[0] if eido.agency_component else None
    disposition = core.disposition[0] if core.disposition else None
    incident = Incident(
        number=core.incident_tracking_identifier,
        sys_id=core.component_identifier,
        case_number=core.case_identifier or core.local_incident_identifier,
        priority=core.priority,
        incident_type=core.incident_type,
        location=address,
        latitude=latitude,
        longitude=longitude,
        response_area=core.response_area,
        disposition=(
            disposition.disposition_common_registry_text
            or disposition.disposition_common_registry_code
            or disposition.disposition_internal_text
        )
        if disposition is not None
        else None,
        agency=agency.agency_name or agency.agency_identifier if agency is not None else None,
        agency_type=agency.agency_type if agency is not None else None,
        incident_date=core.creation_time or (call.call_start if call is not None else None),
        closed_at=core.closed_time,
        caller_number=call.callback_number if call is not None else None,
        caller_name=call.caller_name if call is not None else None,
        call_received_time=call.call_start if call is not None else None,
        call_pickup_time=call.call_answer if call is not None else None,
        call_hangup_time=call.call_end if call is not None else None,
        call_source=call.call_source if call is not None else None,
        call_position=call.call_position if call is not None else None,
        call_taker_id=call.call_taker_id if call is not None else None,
        call_taker_name=call.call_taker_name if call is not None else None,
        notes=[
            IncidentNote(
                note_id=note.note_identifier,
                note=note.note_text,
                note_by=note.author,
                note_at=note.note_date_time_stamp,
            )
            for note in eido.notes_component
        ],
        responders=[
            IncidentResponder(
                personnel_id=unit.personnel_identifier,
                personnel_first_name=unit.personnel_first_name,
                personnel_last_name=unit.personnel_last_name,
                unit_name=unit.unit_identifier,
                dispatched_by=unit.dispatched_by,
                dispatched_at=unit.dispatched_at,
                enroute_at=unit.enroute_at,
                arrived_at=unit.arrived_at,
                cleared_at=unit.cleared_at,
            )
            for unit in eido.emergency_resource_component
        ],
    )
    event = None
    if call is not None and call.call_identifier:
        event = Event(
            number=call.call_identifier,
            event_type=call.call_type,
            summary=call.summary,
            location=address,
            event_date=call.call_start,
        )
    return incident, event
