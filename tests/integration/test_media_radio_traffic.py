"""Media ingest: POST /api/v1/external/media/radio-traffic and
GET /api/v1/external/mcp/resources/media/{mediaId} through their Lambda handlers, on moto
tables and buckets built from template.yaml."""

import base64
import codecs
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from psap.config import media_bucket
from psap.events.models import Event
from psap.events.store import import_event, upsert_event
from psap.incidents.models import Incident
from psap.incidents.store import import_incident, upsert_incident
from psap.limits import MAX_SRT_BYTES, MAX_UPLOAD_BODY_BYTES
from psap.media import ingest, store
from psap.storage.ordering import SourceOrder
from psap.storage.s3 import get_object
from tests.support.media import (
    RADIO_TRAFFIC,
    MediaApi,
    media_objects,
    srt_file,
    stored_media_items,
)

NOW = datetime(2026, 1, 5, 14, tzinfo=UTC)
EVENT_ID = 6101
DOCUMENT_MEDIA = [{"id": 61, "type": "AUDIO"}]


pytestmark = pytest.mark.harness(api=MediaApi)


def given_event(tenant: int, event_id: int = EVENT_ID, number: str = "EV-26-1") -> None:
    event = Event(
        id=event_id,
        number=number,
        summary="Structure fire",
        incident={"id": 5001, "number": "26-0100001"},
        media=DOCUMENT_MEDIA,
    )
    import_event(tenant, event, NOW)


def assert_nothing_stored(api: MediaApi) -> None:
    assert stored_media_items(api.tenant) == []
    assert media_objects() == []
    _, event = api.event(EVENT_ID)
    assert event["media"] == DOCUMENT_MEDIA


# ------------------------------------------------------------------ upload and read back


def test_raw_srt_upload_creates_a_media_record_with_segments_and_speakers(api: MediaApi) -> None:
    given_event(api.tenant)
    status, media = api.upload_srt(RADIO_TRAFFIC, EVENT_ID, started="2026-01-05T09:00:00-05:00")
    assert status == 201
    assert media["type"] == "RADIO_TRAFFIC"
    assert (media["eventId"], media["incidentId"], media["incidentNumber"]) == (
        EVENT_ID,
        5001,
        "26-0100001",
    )
    assert media["channel"] == "FIRE-DISPATCH-1"
    assert media["recordingStartedAt"] == "2026-01-05T14:00:00.000Z"
    assert (media["cueCount"], media["durationSeconds"]) == (4, 226.75)
    assert media["sizeBytes"] == len(RADIO_TRAFFIC.encode())
    assert len(media["contentSha256"]) == 64
    first, second, _, last = media["segments"]
    assert first == {
        "cue": 1,
        "startSeconds": 2.0,
        "endSeconds": 5.5,
        "startAt": "2026-01-05T14:00:02.000Z",
        "endAt": "2026-01-05T14:00:05.500Z",
        "speaker": "DISPATCH",
        "text": "Engine 5, Medic 12, respond to 4410 Canyon Road, structure fire.",
    }
    assert (second["speaker"], second["text"]) == ("ENGINE 5", "Engine 5 copies, responding.")
    # A cue that names no unit has no speaker and keeps its whole text.
    assert (last["speaker"], last["text"]) == (
        None,
        "On scene, two-story residential, smoke showing.",
    )
    assert last["endAt"] == "2026-01-05T14:03:46.750Z"


def test_the_media_get_returns_the_stored_record_with_its_segments(api: MediaApi) -> None:
    given_event(api.tenant)
    _, created = api.upload_srt(RADIO_TRAFFIC, EVENT_ID)
    status, read = api.media(created["id"])
    assert (status, read) == (200, created)


def test_the_original_file_is_stored_in_s3_as_uploaded(api: MediaApi) -> None:
    given_event(api.tenant)
    data = codecs.BOM_UTF8 + RADIO_TRAFFIC.encode()
    _, media = api.upload(
        data, eventId=EVENT_ID, channel="C1", recordingStartedAt="2026-01-05T14:00:00Z"
    )
    key = store.original_key(api.tenant, EVENT_ID, media["contentSha256"])
    assert get_object(media_bucket(), key) == data


def test_uploaded_media_appears_in_the_events_media_array_after_the_documents(
    api: MediaApi,
) -> None:
    given_event(api.tenant)
    _, first = api.upload_srt(RADIO_TRAFFIC, EVENT_ID)
    _, second = api.upload_srt(RADIO_TRAFFIC + "\n5\n00:10:00,000 --> 00:10:01,000\nOK\n", EVENT_ID)
    status, event = api.event(EVENT_ID)
    assert status == 200
    assert event["media"] == [
        *DOCUMENT_MEDIA,
        {"id": first["id"], "type": "RADIO_TRAFFIC"},
        {"id": second["id"], "type": "RADIO_TRAFFIC"},
    ]


def test_a_cad_update_that_replaces_the_event_document_keeps_uploaded_media(
    api: MediaApi,
) -> None:
    created = upsert_event(api.tenant, Event(number="EV-9"), SourceOrder(NOW), now=NOW)
    _, media = api.upload_srt(RADIO_TRAFFIC, created.id)
    upsert_event(
        api.tenant,
        Event(number="EV-9", summary="updated by the CAD"),
        SourceOrder(datetime(2026, 1, 5, 15, tzinfo=UTC)),
        now=NOW,
    )
    _, event = api.event(created.id)
    assert event["summary"] == "updated by the CAD"
    assert event["media"] == [{"id": media["id"], "type": "RADIO_TRAFFIC"}]


def test_json_upload_with_base64_content_is_the_same_upload(api: MediaApi) -> None:
    given_event(api.tenant)
    status, media = api.upload_json(
        {
            "eventId": EVENT_ID,
            "channel": "FIRE-TAC-2",
            "recordingStartedAt": "2026-01-05T14:00:00Z",
            "contentBase64": base64.b64encode(RADIO_TRAFFIC.encode()).decode(),
        }
    )
    assert status == 201
    assert (media["channel"], media["cueCount"]) == ("FIRE-TAC-2", 4)
    assert api.media(media["id"])[1] == media


def test_an_api_gateway_base64_body_is_decoded(api: MediaApi) -> None:
    given_event(api.tenant)
    status, media = api.upload(
        RADIO_TRAFFIC.encode(),  # bytes: sent base64-encoded, as API Gateway passes binary
        eventId=EVENT_ID,
        channel="C1",
        recordingStartedAt="2026-01-05T14:00:00Z",
    )
    assert (status, media["sizeBytes"]) == (201, len(RADIO_TRAFFIC.encode()))


# ------------------------------------------------------------------ resolution by incident


def test_an_incident_number_resolves_to_the_incidents_event(api: MediaApi) -> None:
    incident = upsert_incident(api.tenant, Incident(number="26-77"), SourceOrder(NOW), now=NOW)
    event = upsert_event(
        api.tenant, Event(number="EV-77"), SourceOrder(NOW), now=NOW, incident_id=incident.id
    )
    status, media = api.upload(
        RADIO_TRAFFIC,
        incidentNumber="26-77",
        channel="C1",
        recordingStartedAt="2026-01-05T14:00:00Z",
    )
    assert status == 201
    assert (media["eventId"], media["incidentId"], media["incidentNumber"]) == (
        event.id,
        incident.id,
        "26-77",
    )
    assert api.event(event.id)[1]["media"] == [{"id": media["id"], "type": "RADIO_TRAFFIC"}]


def test_an_unknown_incident_number_is_404(api: MediaApi) -> None:
    status, body = api.upload(
        RADIO_TRAFFIC,
        incidentNumber="26-404",
        channel="C1",
        recordingStartedAt="2026-01-05T14:00:00Z",
    )
    assert (status, body["reason"]) == (404, "NOT_FOUND")
    assert "26-404" in body["info"]


def test_an_incident_without_an_event_is_409_and_stores_nothing(api: MediaApi) -> None:
    import_incident(api.tenant, Incident(id=5100, number="26-50"), NOW)
    status, body = api.upload(
        RADIO_TRAFFIC,
        incidentNumber="26-50",
        channel="C1",
        recordingStartedAt="2026-01-05T14:00:00Z",
    )
    assert (status, body["reason"]) == (409, "CONFLICT")
    assert "no event" in body["info"]
    assert stored_media_items(api.tenant) == [] and media_objects() == []


def test_an_unknown_event_is_404(api: MediaApi) -> None:
    assert api.upload_srt(RADIO_TRAFFIC, 999_999) == (
        404,
        {"info": "event 999999 not found", "reason": "NOT_FOUND"},
    )


@pytest.mark.parametrize(
    "query",
    [
        {"channel": "C1", "recordingStartedAt": "2026-01-05T14:00:00Z"},
        {
            "eventId": EVENT_ID,
            "incidentNumber": "26-1",
            "channel": "C1",
            "recordingStartedAt": "2026-01-05T14:00:00Z",
        },
    ],
    ids=["neither", "both"],
)
def test_exactly_one_of_event_id_and_incident_number_else_400(
    api: MediaApi, query: dict[str, Any]
) -> None:
    given_event(api.tenant)
    status, body = api.upload(RADIO_TRAFFIC, **query)
    assert status == 400
    assert "exactly one of eventId and incidentNumber" in body["info"]


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"recordingStartedAt": "2026-01-05T14:00:00Z"}, "'channel'"),
        ({"channel": "C1"}, "'recordingStartedAt'"),
        ({"channel": "C1", "recordingStartedAt": "2026-01-05T14:00:00"}, "'recordingStartedAt'"),
        ({"channel": "C1", "recordingStartedAt": "yesterday"}, "'recordingStartedAt'"),
        ({"channel": "x" * 101, "recordingStartedAt": "2026-01-05T14:00:00Z"}, "'channel'"),
    ],
    ids=["no-channel", "no-start", "start-without-offset", "start-not-a-time", "long-channel"],
)
def test_missing_or_bad_fields_are_400_naming_the_field(
    api: MediaApi, query: dict[str, Any], named: str
) -> None:
    given_event(api.tenant)
    status, body = api.upload(RADIO_TRAFFIC, eventId=EVENT_ID, **query)
    assert status == 400
    assert named in body["info"]
    assert_nothing_stored(api)


def test_an_event_id_that_is_not_an_integer_is_400_naming_it(api: MediaApi) -> None:
    status, body = api.upload(
        RADIO_TRAFFIC, eventId="EV-1", channel="C1", recordingStartedAt="2026-01-05T14:00:00Z"
    )
    assert status == 400 and "'eventId'" in body["info"]


def test_json_upload_errors_name_the_field(api: MediaApi) -> None:
    given_event(api.tenant)
    document = {
        "eventId": EVENT_ID,
        "channel": "C1",
        "recordingStartedAt": "2026-01-05T14:00:00Z",
        "contentBase64": "not base64!",
    }
    status, body = api.upload_json(document)
    assert status == 400 and "'contentBase64'" in body["info"]
    status, body = api.upload_json({**document, "contentBase64": None})
    assert status == 400 and "'contentBase64'" in body["info"]
    status, body = api.upload("{not json", content_type="application/json", json_form=True)
    assert status == 400 and "not valid JSON" in body["info"]
    # The JSON form carries its fields in the body only: query parameters are refused.
    encoded = base64.b64encode(RADIO_TRAFFIC.encode()).decode()
    status, body = api.upload_json({**document, "contentBase64": encoded}, channel="C2")
    assert status == 400 and "query parameters (channel)" in body["info"]
    assert_nothing_stored(api)


def test_another_content_type_is_415(api: MediaApi) -> None:
    given_event(api.tenant)
    status, body = api.upload(
        RADIO_TRAFFIC,
        content_type="text/plain",
        eventId=EVENT_ID,
        channel="C1",
        recordingStartedAt="2026-01-05T14:00:00Z",
    )
    assert (status, body["reason"]) == (415, "UNSUPPORTED_MEDIA_TYPE")
    assert_nothing_stored(api)


def test_each_form_sent_to_the_other_operation_is_415_naming_the_right_one(
    api: MediaApi,
) -> None:
    # Given an event, and the two forms of one upload
    given_event(api.tenant)
    fields: dict[str, Any] = {
        "eventId": EVENT_ID,
        "channel": "C1",
        "recordingStartedAt": "2026-01-05T14:00:00Z",
    }
    encoded = base64.b64encode(RADIO_TRAFFIC.encode()).decode()
    # When the JSON document goes to the raw form's operation
    status, body = api.upload(
        json.dumps({**fields, "contentBase64": encoded}),
        content_type="application/json",
        **fields,
    )
    # Then it is 415 naming the JSON form's operation, and the other way round
    assert status == 415 and "POST /api/v1/external/media/radio-traffic/json" in body["info"]
    status, body = api.upload(RADIO_TRAFFIC, json_form=True)
    assert status == 415 and body["info"].endswith("POST /api/v1/external/media/radio-traffic")
    assert_nothing_stored(api)


# ------------------------------------------------------------------ bad SRT: 400 naming the cue


def bad_srt(api: MediaApi, text: str | bytes, reason: str = "INVALID_INPUT") -> str:
    given_event(api.tenant)
    status, body = api.upload_srt(text, EVENT_ID)
    assert status == 400, body
    assert body["reason"] == reason
    assert_nothing_stored(api)
    return str(body["info"])


def test_an_unparseable_cue_is_400_naming_its_number_and_line(api: MediaApi) -> None:
    text = RADIO_TRAFFIC.replace("00:00:06,200 --> 00:00:08,000", "00:00:06,200 -> 00:00:08")
    info = bad_srt(api, text)
    assert info.startswith("SRT cue 2 (line 6) is not a cue")
    assert "00:00:06,200 -> 00:00:08" in info


def test_a_garbled_time_in_the_first_cue_names_cue_1_line_2(api: MediaApi) -> None:
    info = bad_srt(api, RADIO_TRAFFIC.replace("00:00:02,000", "00:00:0x,000", 1))
    assert info.startswith("SRT cue 1 (line 2) is not a cue")


def test_text_that_is_not_srt_at_all_is_400(api: MediaApi) -> None:
    info = bad_srt(api, "ENGINE 5: responding\nMEDIC 12: en route\n")
    assert info.startswith("SRT cue 1 (line 1) is not a cue")


def test_overlapping_cues_are_400_naming_both_cues(api: MediaApi) -> None:
    text = srt_file([(0, 5, "A"), (4.5, 6, "B")])
    info = bad_srt(api, text)
    assert info.startswith("SRT cue 2 (line 6) overlaps cue 1 (line 2)")


def test_a_cue_that_ends_before_it_starts_is_400_naming_it(api: MediaApi) -> None:
    info = bad_srt(api, srt_file([(0, 1, "A"), (9, 8, "B")]))
    assert info.startswith("SRT cue 2 (line 6): it ends at 00:00:08,000, not after its start")


def test_a_negative_time_is_400_naming_the_cue(api: MediaApi) -> None:
    text = srt_file([(0, 1, "A")]) + "\n2\n-00:00:02,000 --> 00:00:03,000\nB\n"
    info = bad_srt(api, text)
    assert info.startswith("SRT cue 2 (line 6) has a negative time")


@pytest.mark.parametrize("text", ["", "  \n\n", "\ufeff\n"], ids=["empty", "blank", "bom-only"])
def test_an_empty_file_is_400(api: MediaApi, text: str) -> None:
    given_event(api.tenant)
    status, body = api.upload_srt(text.encode(), EVENT_ID)
    assert status == 400
    assert body["info"] == "The SRT file is empty: it has no cues"
    assert_nothing_stored(api)


def test_a_file_that_is_not_utf8_is_400_naming_the_byte_and_line(api: MediaApi) -> None:
    latin1 = RADIO_TRAFFIC.replace("Canyon Road", "Cañon Road").encode("latin-1")
    info = bad_srt(api, latin1, "INVALID_ENCODING")
    offset = latin1.index(b"\xf1")
    # The shared body decoder refuses it before the SRT reader (psap.http.body).
    assert info.startswith(f"The request body is not UTF-8: byte {offset} (line 3)")


def test_a_utf16_file_is_400(api: MediaApi) -> None:
    info = bad_srt(api, RADIO_TRAFFIC.encode("utf-16"), "INVALID_ENCODING")
    assert info.startswith("The request body is not UTF-8: byte 0 (line 1)")


def test_a_file_over_the_size_limit_is_413_and_stores_nothing(api: MediaApi) -> None:
    given_event(api.tenant)
    big = RADIO_TRAFFIC + "\n" + "x" * (MAX_SRT_BYTES - len(RADIO_TRAFFIC))
    status, body = api.upload_srt(big, EVENT_ID)
    assert (status, body["reason"]) == (413, "PAYLOAD_TOO_LARGE")
    assert str(MAX_SRT_BYTES) in body["info"]
    # Over the operation's body limit, the shared entrypoint answers before parsing.
    status, body = api.upload_srt("x" * (MAX_UPLOAD_BODY_BYTES + 1), EVENT_ID)
    assert (status, body["reason"]) == (413, "PAYLOAD_TOO_LARGE")
    assert_nothing_stored(api)


def test_a_json_upload_whose_file_is_over_the_limit_is_413(api: MediaApi) -> None:
    given_event(api.tenant)
    status, body = api.upload_json(
        {
            "eventId": EVENT_ID,
            "channel": "C1",
            "recordingStartedAt": "2026-01-05T14:00:00Z",
            "contentBase64": base64.b64encode(b"1" * (MAX_SRT_BYTES + 1)).decode(),
        }
    )
    assert (status, body["reason"]) == (413, "PAYLOAD_TOO_LARGE")
    assert_nothing_stored(api)


def test_a_failed_transaction_leaves_nothing_half_stored(
    api: MediaApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an event that disappears between the read and the write
    given_event(api.tenant)
    monkeypatch.setattr(ingest, "_resolve_event", lambda tenant, target: Event(id=424242))
    # When the upload's transaction checks the event
    status, body = api.upload_srt(RADIO_TRAFFIC, EVENT_ID)
    # Then it is 404, and no record, link or hash item exists (the original object may)
    assert (status, body) == (404, {"info": "event 424242 not found", "reason": "NOT_FOUND"})
    assert stored_media_items(api.tenant) == []


# ------------------------------------------------------------------ idempotency


def test_reuploading_the_same_file_for_the_same_event_is_idempotent(api: MediaApi) -> None:
    given_event(api.tenant)
    status, first = api.upload_srt(RADIO_TRAFFIC, EVENT_ID)
    assert status == 201
    # Same bytes, other fields: the stored record answers, unchanged.
    status, again = api.upload_srt(RADIO_TRAFFIC, EVENT_ID, channel="OTHER")
    assert (status, again) == (200, first)
    assert api.event(EVENT_ID)[1]["media"] == [
        *DOCUMENT_MEDIA,
        {"id": first["id"], "type": "RADIO_TRAFFIC"},
    ]
    assert len(stored_media_items(api.tenant)) == 3  # record, link, hash


def test_the_same_file_for_another_event_is_another_media(api: MediaApi) -> None:
    given_event(api.tenant)
    given_event(api.tenant, 6102, "EV-26-2")
    _, first = api.upload_srt(RADIO_TRAFFIC, EVENT_ID)
    status, second = api.upload_srt(RADIO_TRAFFIC, 6102)
    assert status == 201 and second["id"] != first["id"]


def test_a_racing_upload_of_the_same_file_answers_the_winners_record(
    api: MediaApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a first upload stored, and a second that did not see it before writing
    given_event(api.tenant)
    _, winner = api.upload_srt(RADIO_TRAFFIC, EVENT_ID)
    answers = iter([None, winner["id"]])
    monkeypatch.setattr(store, "find_media_by_content", lambda *args: next(answers))
    # When the second writes, its conditional hash item fails
    status, body = api.upload_srt(RADIO_TRAFFIC, EVENT_ID)
    # Then it answers the winner's record, and no second record exists
    assert (status, body) == (200, winner)
    assert len(stored_media_items(api.tenant)) == 3


# ------------------------------------------------------------------ storage choices


def test_large_segment_lists_are_stored_in_s3_beside_the_original(
    api: MediaApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    given_event(api.tenant)
    monkeypatch.setattr(store, "INLINE_SEGMENTS_BYTES", 100)
    _, media = api.upload_srt(RADIO_TRAFFIC, EVENT_ID)
    key = store.segments_key(api.tenant, EVENT_ID, media["contentSha256"], media_id=media["id"])
    assert key in media_objects()
    status, read = api.media(media["id"])
    assert (status, read) == (200, media)
    assert len(read["segments"]) == 4


# ------------------------------------------------------------------ permissions and tenants


def test_upload_needs_manage_events(api: MediaApi) -> None:
    given_event(api.tenant)
    status, body = api.upload(
        RADIO_TRAFFIC,
        permissions="BROWSE_EVENTS",
        eventId=EVENT_ID,
        channel="C1",
        recordingStartedAt="2026-01-05T14:00:00Z",
    )
    assert (status, body) == (
        403,
        {"info": "Access denied — Manage Events permission required", "reason": "FORBIDDEN"},
    )
    assert_nothing_stored(api)


def test_browse_or_manage_events_may_read_media_and_others_get_the_naming_403(
    api: MediaApi,
) -> None:
    given_event(api.tenant)
    _, media = api.upload_srt(RADIO_TRAFFIC, EVENT_ID)
    for permissions in ("BROWSE_EVENTS", "MANAGE_EVENTS"):
        assert api.media(media["id"], permissions=permissions)[0] == 200
    status, body = api.media(media["id"], permissions="VIEW_KNOWLEDGE")
    assert (status, body["info"]) == (
        403,
        "Access denied — Browse Events or Manage Events permission required",
    )


def test_tenant_isolation_media_and_events_of_another_tenant_are_404(api: MediaApi) -> None:
    given_event(api.other_tenant)
    _, theirs = api.upload_srt(RADIO_TRAFFIC, EVENT_ID, tenant=api.other_tenant)
    # Their media is not ours, and neither is their event.
    assert api.media(theirs["id"]) == (
        404,
        {"info": f"media {theirs['id']} not found", "reason": "NOT_FOUND"},
    )
    assert api.upload_srt(RADIO_TRAFFIC, EVENT_ID)[0] == 404
    # The same file for our own event is ours, not a replay of theirs.
    given_event(api.tenant)
    status, ours = api.upload_srt(RADIO_TRAFFIC, EVENT_ID)
    assert status == 201 and ours["id"] != theirs["id"]
    assert api.media(theirs["id"], tenant=api.other_tenant)[0] == 200


def test_unknown_media_is_404_and_a_non_integer_id_is_400(api: MediaApi) -> None:
    assert api.media(12345) == (404, {"info": "media 12345 not found", "reason": "NOT_FOUND"})
    status, body = api.media("abc")
    assert status == 400 and "'mediaId'" in body["info"]
