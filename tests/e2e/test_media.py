"""Media ingest over real HTTP through the local stack: an SRT radio-traffic upload for a
demo event, read back in the event's media array and through the media GET."""

import base64
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.e2e

BASE = "/api/v1/external"
SRT = (
    "1\n00:00:01,000 --> 00:00:04,000\nDISPATCH: Medic 4, respond to 18 Elm Street.\n\n"
    "2\n00:00:04,600 --> 00:00:06,000\nMEDIC 4: Medic 4 copies, en route.\n\n"
    "3\n00:07:10,000 --> 00:07:12,500\nMEDIC 4: On scene.\n"
)


def token(stack: dict[str, Any], name: str = "admin", index: int = 0) -> str:
    return str(stack["tenants"][index]["credentials"][name])


def call(
    stack: dict[str, Any], method: str, path: str, bearer: str, **kwargs: Any
) -> httpx.Response:
    headers = {"Authorization": f"Bearer {bearer}", **kwargs.pop("headers", {})}
    return httpx.request(
        method, stack["baseUrl"] + BASE + path, headers=headers, timeout=30, **kwargs
    )


def upload(stack: dict[str, Any], event_id: int, body: str, bearer: str) -> httpx.Response:
    return call(
        stack,
        "POST",
        "/media/radio-traffic",
        bearer,
        params={
            "eventId": event_id,
            "channel": "EMS-DISPATCH-2",
            "recordingStartedAt": "2026-01-05T09:00:00-05:00",
        },
        headers={"Content-Type": "application/x-subrip"},
        content=body.encode(),
    )


def test_an_srt_uploaded_for_a_demo_event_reads_back_in_the_event_and_the_media_get(
    stack: dict[str, Any],
) -> None:
    event_id = stack["tenants"][0]["tenantData"]["eventIds"][3]
    created = upload(stack, event_id, SRT, token(stack))
    assert created.status_code == 201, created.text
    media = created.json()
    assert (media["eventId"], media["cueCount"], media["durationSeconds"]) == (event_id, 3, 432.5)
    assert media["segments"][1]["speaker"] == "MEDIC 4"
    assert media["segments"][2]["startAt"] == "2026-01-05T14:07:10.000Z"

    event = call(stack, "GET", f"/mcp/resources/events/{event_id}", token(stack, "readOnly"))
    assert event.status_code == 200
    assert {"id": media["id"], "type": "RADIO_TRAFFIC"} in event.json()["media"]

    read = call(stack, "GET", f"/mcp/resources/media/{media['id']}", token(stack, "readOnly"))
    assert (read.status_code, read.json()) == (200, media)

    # The same file again is the same media (200), once in the event.
    again = upload(stack, event_id, SRT, token(stack))
    assert (again.status_code, again.json()["id"]) == (200, media["id"])
    listed = call(stack, "GET", f"/mcp/resources/events/{event_id}", token(stack)).json()
    assert [item["id"] for item in listed["media"]].count(media["id"]) == 1


def test_a_json_upload_by_incident_number_goes_to_the_incidents_event(
    stack: dict[str, Any],
) -> None:
    data = stack["tenants"][0]["tenantData"]
    incident = call(
        stack, "GET", f"/mcp/resources/incidents/{data['incidentIds'][4]}", token(stack)
    ).json()
    answer = call(
        stack,
        "POST",
        "/media/radio-traffic/json",
        token(stack),
        json={
            "incidentNumber": incident["number"],
            "channel": "FIRE-TAC-4",
            "recordingStartedAt": "2026-01-05T14:00:00Z",
            "contentBase64": base64.b64encode(SRT.encode()).decode(),
        },
    )
    assert answer.status_code == 201, answer.text
    assert answer.json()["eventId"] == incident["event"]["id"]


def test_the_demo_tenant_has_a_seeded_radio_traffic_transcript(stack: dict[str, Any]) -> None:
    seeded = stack["tenants"][0]["media"]
    read = call(stack, "GET", f"/mcp/resources/media/{seeded['radioTrafficMediaId']}", token(stack))
    assert read.status_code == 200
    assert read.json()["cueCount"] == 16 and read.json()["eventId"] == seeded["eventId"]


def test_bad_srt_is_400_naming_the_cue_and_another_tenant_gets_404(stack: dict[str, Any]) -> None:
    event_id = stack["tenants"][0]["tenantData"]["eventIds"][5]
    overlapping = SRT.replace("00:00:04,600", "00:00:03,600")
    bad = upload(stack, event_id, overlapping, token(stack))
    assert bad.status_code == 400
    assert bad.json()["info"].startswith("SRT cue 2 (line 6) overlaps cue 1 (line 2)")
    seeded = stack["tenants"][0]["media"]["radioTrafficMediaId"]
    theirs = call(stack, "GET", f"/mcp/resources/media/{seeded}", token(stack, index=1))
    assert theirs.status_code == 404
    refused = upload(stack, event_id, SRT, token(stack, "readOnly"))
    assert refused.status_code == 403
