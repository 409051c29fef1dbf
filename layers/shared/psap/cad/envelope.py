"""What a CAD submits: a CloudEvents 1.0 structured JSON event whose `data` is an incident.

    {"specversion": "1.0", "id": "A-1", "source": "urn:cad:riverside", "type":
     "incident.created", "time": "2026-11-23T02:32:15.123Z", "subject": "2026-000123",
     "tenantId": 7, "sequence": "12", "data": {...}}

- `tenantId` (or `tenantid`, the CloudEvents spelling) is a cross-check only: the tenant is
  the credential's. Absent is accepted; a different value is refused (403).
- `type` is `incident.created`, `incident.updated` or `incident.closed`.
- `time` (required, with an offset or Z) orders updates of one incident: an update older
  than what is stored never overwrites it. `sequence` (optional, a non-negative integer as
  a string or number) breaks ties between updates with the same time.
- `data` is a NENA EIDO incident (NENA-STA-021: it has `incidentComponent`) or a flat
  incident whose fields are the spec's Incident fields (it has `number`). Each submission
  carries the incident's full current state, as an EIDO does: a field left out is empty.

Validation errors name the JSON path of the offending field (`$.data.notes[2].noteAt`).
"""

import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)
from pydantic.alias_generators import to_camel

from psap.errors import InvalidInput

MAX_ID = 256
MAX_SOURCE = 512
MAX_TEXT = 4000  # one note, one free-text field
MAX_SHORT = 512  # identifiers, names, codes
MAX_ITEMS = 1000  # notes, responders, components

_NO_CONTROL = re.compile(r"^[^\x00-\x1f\x7f]*$")
ShortText = Annotated[str, StringConstraints(max_length=MAX_SHORT, pattern=_NO_CONTROL)]
LongText = Annotated[str, StringConstraints(max_length=MAX_TEXT)]
Identifier = Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID, pattern=_NO_CONTROL)]


class CadEventType(StrEnum):
    CREATED = "incident.created"
    UPDATED = "incident.updated"
    CLOSED = "incident.closed"


def _coordinate(value: Any) -> Any:
    """Latitude/longitude are strings in the spec; a CAD may send numbers."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return repr(float(value)) if isinstance(value, float) else str(value)
    return value


Coordinate = Annotated[ShortText, BeforeValidator(_coordinate)]


def _as_list(value: Any) -> Any:
    """EIDO components may be one object or an array of them."""
    return [value] if isinstance(value, dict) else value


# ---------------------------------------------------------------- flat form


class _Flat(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class FlatNote(_Flat):
    note_id: ShortText | None = None
    note: LongText | None = None
    note_by: ShortText | None = None
    note_at: AwareDatetime | None = None


class FlatResponder(_Flat):
    personnel_id: ShortText | None = None
    personnel_first_name: ShortText | None = None
    personnel_last_name: ShortText | None = None
    unit_name: ShortText | None = None
    dispatched_by: ShortText | None = None
    dispatched_at: AwareDatetime | None = None
    enroute_at: AwareDatetime | None = None
    arrived_at: AwareDatetime | None = None
    cleared_at: AwareDatetime | None = None


class FlatPersonnel(_Flat):
    id: int | None = None
    user_id: int | None = None
    first_name: ShortText | None = None
    last_name: ShortText | None = None
    personnel_id: ShortText | None = None
    type: ShortText | None = None


class FlatEvent(_Flat):
    """The event (call) the incident belongs to, as the spec's Event fields."""

    number: Identifier
    event_type: ShortText | None = None
    summary: LongText | None = None
    location: ShortText | None = None
    event_date: AwareDatetime | None = None
    personnel: list[FlatPersonnel] = Field(default_factory=list, max_length=MAX_ITEMS)


class FlatIncident(_Flat):
    """The flat form: the spec's Incident fields (no `id`: the service assigns it)."""

    number: Identifier = Field(description="The CAD's incident number")
    sys_id: ShortText | None = None
    case_number: ShortText | None = None
    priority: ShortText | None = None
    incident_type: ShortText | None = None
    initial_incident_type: ShortText | None = None
    initial_location: ShortText | None = None
    caller_number: ShortText | None = None
    caller_name: ShortText | None = None
    agency: ShortText | None = None
    agency_type: ShortText | None = None
    location: ShortText | None = None
    response_area: ShortText | None = None
    disposition: ShortText | None = None
    additional_context: LongText | None = None
    latitude: Coordinate | None = None
    longitude: Coordinate | None = None
    call_position: ShortText | None = None
    call_taker_id: ShortText | None = None
    call_taker_name: ShortText | None = None
    call_source: ShortText | None = None
    radio_channel: ShortText | None = None
    incident_date: AwareDatetime | None = None
    dispatch_queue_at: AwareDatetime | None = None
    call_received_time: AwareDatetime | None = None
    call_pickup_time: AwareDatetime | None = None
    call_hangup_time: AwareDatetime | None = None
    closed_at: AwareDatetime | None = None
    created_at: AwareDatetime | None = None
    notes: list[FlatNote] = Field(default_factory=list, max_length=MAX_ITEMS)
    responders: list[FlatResponder] = Field(default_factory=list, max_length=MAX_ITEMS)
    event: FlatEvent | None = None


# ---------------------------------------------------------------- NENA EIDO form


class _Eido(BaseModel):
    # EIDO is large and extensible: fields we do not map are allowed and ignored.
    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)


def _reference(value: Any) -> Any:
    """An EIDO reference: {"$ref": "x"}, "$ref:x" or a plain string."""
    if isinstance(value, dict):
        return value.get("$ref")
    if isinstance(value, list):
        return _reference(value[0]) if value else None
    if isinstance(value, str) and value.startswith("$ref:"):
        return value[5:]
    return value


Reference = Annotated[ShortText | None, BeforeValidator(_reference)]


def _text_or_first(value: Any) -> Any:
    """Registry texts may be one string or a list of them; the first is the primary one."""
    if isinstance(value, list):
        return value[0] if value else None
    return value


RegistryText = Annotated[ShortText | None, BeforeValidator(_text_or_first)]


def _priority(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class EidoDisposition(_Eido):
    disposition_common_registry_text: ShortText | None = Field(
        None, alias="dispositionCommonRegistryText"
    )
    disposition_common_registry_code: ShortText | None = Field(
        None, alias="dispositionCommonRegistryCode"
    )
    disposition_internal_text: ShortText | None = Field(None, alias="dispositionInternalText")


class EidoIncidentComponent(_Eido):
    component_identifier: ShortText | None = Field(
        None, validation_alias=AliasChoices("componentIdentifier", "$id")
    )
    incident_tracking_identifier: Identifier = Field(alias="incidentTrackingIdentifier")
    local_incident_identifier: ShortText | None = Field(
        None, validation_alias=AliasChoices("localIncidentIdentifier", "internalIncidentId")
    )
    case_identifier: ShortText | None = Field(
        None, validation_alias=AliasChoices("caseIdentifier", "incidentCaseIdentifier")
    )
    incident_type: RegistryText = Field(
        None,
        validation_alias=AliasChoices(
            "incidentTypeCommonRegistryText", "incidentTypeInternalText", "localIncidentTypeText"
        ),
    )
    priority: Annotated[ShortText | None, BeforeValidator(_priority)] = Field(
        None, validation_alias=AliasChoices("incidentCommonPriorityNumber", "incidentPriority")
    )
    creation_time: AwareDatetime | None = Field(
        None, validation_alias=AliasChoices("incidentCreationTimeStamp", "incidentCreatedTimeStamp")
    )
    closed_time: AwareDatetime | None = Field(
        None, validation_alias=AliasChoices("incidentClosedTimeStamp", "incidentCloseTimeStamp")
    )
    disposition: Annotated[list[EidoDisposition], BeforeValidator(_as_list)] = Field(
        default_factory=list, max_length=MAX_ITEMS
    )
    response_area: ShortText | None = Field(
        None, validation_alias=AliasChoices("responseAreaText", "responseArea")
    )
    location_reference: Reference = Field(None, alias="locationReference")


class EidoGeoPoint(_Eido):
    latitude: Coordinate | None = None
    longitude: Coordinate | None = None


class EidoLocationComponent(_Eido):
    component_identifier: ShortText | None = Field(
        None, validation_alias=AliasChoices("componentIdentifier", "$id")
    )
    civic_address_text: ShortText | None = Field(
        None, validation_alias=AliasChoices("civicAddressText", "locationDescriptionText")
    )
    # A plain address string, or an object with latitude/longitude (and maybe an address).
    location_by_value: ShortText | EidoGeoPoint | None = Field(None, alias="locationByValue")
    latitude: Coordinate | None = None
    longitude: Coordinate | None = None


class EidoNoteComponent(_Eido):
    note_identifier: ShortText | None = Field(
        None, validation_alias=AliasChoices("noteIdentifier", "componentIdentifier", "$id")
    )
    note_text: LongText | None = Field(None, alias="noteText")
    note_date_time_stamp: AwareDatetime | None = Field(None, alias="noteDateTimeStamp")
    author: Reference = Field(
        None, validation_alias=AliasChoices("noteAuthorText", "authorReference")
    )


class EidoResourceComponent(_Eido):
    unit_identifier: ShortText | None = Field(
        None,
        validation_alias=AliasChoices(
            "unitIdentifier", "resourceIdentifier", "componentIdentifier"
        ),
    )
    personnel_identifier: ShortText | None = Field(None, alias="personnelIdentifier")
    personnel_first_name: ShortText | None = Field(None, alias="personnelFirstName")
    personnel_last_name: ShortText | None = Field(None, alias="personnelLastName")
    dispatched_by: Reference = Field(
        None, validation_alias=AliasChoices("dispatchedByText", "dispatchedByReference")
    )
    dispatched_at: AwareDatetime | None = Field(None, alias="dispatchedTimeStamp")
    enroute_at: AwareDatetime | None = Field(
        None, validation_alias=AliasChoices("enrouteTimeStamp", "enRouteTimeStamp")
    )
    arrived_at: AwareDatetime | None = Field(
        None, validation_alias=AliasChoices("arrivedTimeStamp", "onSceneTimeStamp")
    )
    cleared_at: AwareDatetime | None = Field(
        None, validation_alias=AliasChoices("clearedTimeStamp", "availableTimeStamp")
    )


class EidoCallComponent(_Eido):
    call_identifier: ShortText | None = Field(
        None,
        validation_alias=AliasChoices(
            "callIdentifier", "callTrackingIdentifier", "componentIdentifier"
        ),
    )
    call_type: RegistryText = Field(
        None, validation_alias=AliasChoices("callTypeCommonRegistryText", "callTypeDescription")
    )
    call_start: AwareDatetime | None = Field(None, alias="callStartTimeStamp")
    call_answer: AwareDatetime | None = Field(
        None, validation_alias=AliasChoices("callAnswerTimeStamp", "callAnsweredTimeStamp")
    )
    call_end: AwareDatetime | None = Field(None, alias="callEndTimeStamp")
    callback_number: ShortText | None = Field(
        None, validation_alias=AliasChoices("callbackNumber", "callerNumber", "callBackNumber")
    )
    caller_name: ShortText | None = Field(None, alias="callerName")
    call_source: RegistryText = Field(
        None, validation_alias=AliasChoices("callSourceText", "callSourceCommonRegistryText")
    )
    call_position: ShortText | None = Field(
        None, validation_alias=AliasChoices("callPositionText", "positionIdentifier")
    )
    call_taker_id: ShortText | None = Field(
        None, validation_alias=AliasChoices("callTakerIdentifier", "agentIdentifier")
    )
    call_taker_name: ShortText | None = Field(None, alias="callTakerName")
    summary: LongText | None = Field(
        None, validation_alias=AliasChoices("callSummaryText", "summaryText")
    )


class EidoAgencyComponent(_Eido):
    agency_identifier: ShortText | None = Field(None, alias="agencyIdentifier")
    agency_name: ShortText | None = Field(None, alias="agencyName")
    agency_type: RegistryText = Field(
        None, validation_alias=AliasChoices("agencyTypeCommonRegistryText", "agencyTypeText")
    )


class EidoIncident(_Eido):
    """The parts of a NENA-STA-021 EIDO the service maps (others are accepted, ignored)."""

    eido_message_identifier: ShortText | None = Field(None, alias="eidoMessageIdentifier")
    last_update_time_stamp: AwareDatetime | None = Field(None, alias="lastUpdateTimeStamp")
    incident_component: Annotated[list[EidoIncidentComponent], BeforeValidator(_as_list)] = Field(
        alias="incidentComponent", min_length=1, max_length=1
    )
    location_component: Annotated[list[EidoLocationComponent], BeforeValidator(_as_list)] = Field(
        default_factory=list, alias="locationComponent", max_length=MAX_ITEMS
    )
    notes_component: Annotated[list[EidoNoteComponent], BeforeValidator(_as_list)] = Field(
        default_factory=list, alias="notesComponent", max_length=MAX_ITEMS
    )
    emergency_resource_component: Annotated[
        list[EidoResourceComponent], BeforeValidator(_as_list)
    ] = Field(default_factory=list, alias="emergencyResourceComponent", max_length=MAX_ITEMS)
    call_component: Annotated[list[EidoCallComponent], BeforeValidator(_as_list)] = Field(
        default_factory=list, alias="callComponent", max_length=MAX_ITEMS
    )
    agency_component: Annotated[list[EidoAgencyComponent], BeforeValidator(_as_list)] = Field(
        default_factory=list, alias="agencyComponent", max_length=MAX_ITEMS
    )


# ---------------------------------------------------------------- the envelope


def _sequence(value: Any) -> Any:
    if isinstance(value, str) and value.isdigit() and len(value) <= 18:
        return int(value)
    return value


class CadEnvelope(BaseModel):
    """The CloudEvents attributes of a submission (`data` is parsed on its own). Only these
    attributes are accepted: an unknown one (a misspelling, an extension we do not read) is
    refused naming it, never dropped."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    specversion: Literal["1.0"]
    id: Identifier
    source: Annotated[
        str, StringConstraints(min_length=1, max_length=MAX_SOURCE, pattern=_NO_CONTROL)
    ]
    type: CadEventType
    time: AwareDatetime
    subject: ShortText | None = None
    datacontenttype: Literal["application/json"] | None = None
    dataschema: ShortText | None = None
    sequence: Annotated[int | None, BeforeValidator(_sequence)] = Field(None, ge=0)
    data: dict[str, Any]

    @field_validator("time")
    @classmethod
    def _not_absurd(cls, moment: datetime) -> datetime:
        if not 2000 <= moment.year <= 2200:
            raise ValueError("the year must be between 2000 and 2200")
        return moment


type IncidentDocument = EidoIncident | FlatIncident


class Submission(BaseModel):
    """A validated submission: the envelope, the tenant cross-check and the incident."""

    model_config = ConfigDict(frozen=True)

    envelope: CadEnvelope
    claimed_tenant_id: int | None
    incident: EidoIncident | FlatIncident

    @property
    def incident_number(self) -> str:
        if isinstance(self.incident, EidoIncident):
            return self.incident.incident_component[0].incident_tracking_identifier
        return self.incident.number


def json_path(location: Sequence[int | str]) -> str:
    path = "$"
    for part in location:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def describe(error: ValidationError, prefix: Sequence[int | str] = ()) -> str:
    """`Invalid field '$.data.notes[2].noteAt': Input should be a valid datetime; ...`"""
    problems = []
    for detail in error.errors()[:5]:
        location = [*prefix, *detail.get("loc", ())]
        problems.append(f"Invalid field '{json_path(location)}': {detail.get('msg')}")
    extra = len(error.errors()) - 5
    if extra > 0:
        problems.append(f"and {extra} more")
    return "; ".join(problems)


def _claimed_tenant(document: Mapping[str, Any]) -> int | None:
    """`tenantId` or `tenantid` (CloudEvents attribute names are lowercase)."""
    spellings = [document[name] for name in ("tenantId", "tenantid") if name in document]
    values: set[int] = set()
    for value in spellings:
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise InvalidInput("Invalid field '$.tenantId': must be an integer")
        text = str(value).strip()
        if not text.isdigit() or len(text) > 18:
            raise InvalidInput("Invalid field '$.tenantId': must be an integer")
        values.add(int(text))
    if len(values) > 1:
        raise InvalidInput("Invalid field '$.tenantId': tenantId and tenantid disagree")
    return values.pop() if values else None


def parse_document(raw: bytes) -> dict[str, Any]:
    try:
        document = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InvalidInput(f"The body is not valid UTF-8 JSON: {error}") from error
    if not isinstance(document, dict):
        raise InvalidInput("Invalid field '$': the body must be a JSON object")
    return document


def parse_envelope(document: Mapping[str, Any]) -> tuple[CadEnvelope, int | None]:
    """The envelope's attributes and the tenant it claims (checked before `data` is read)."""
    claimed = _claimed_tenant(document)
    attributes = {k: v for k, v in document.items() if k not in ("tenantId", "tenantid")}
    try:
        envelope = CadEnvelope.model_validate(attributes)
    except ValidationError as error:
        raise InvalidInput(describe(error)) from error
    return envelope, claimed


def parse_incident(envelope: CadEnvelope) -> IncidentDocument:
    data = envelope.data
    model: type[EidoIncident] | type[FlatIncident] = (
        EidoIncident if "incidentComponent" in data else FlatIncident
    )
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise InvalidInput(describe(error, ("data",))) from error


def parse_submission(raw: bytes) -> Submission:
    envelope, claimed = parse_envelope(parse_document(raw))
    return Submission(
        envelope=envelope, claimed_tenant_id=claimed, incident=parse_incident(envelope)
    )
