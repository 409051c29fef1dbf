"""Calls the media functions' handlers in-process, as API Gateway would after the
authorizer, and builds radio-traffic SRT files for the media tests."""

import base64
import itertools
import json
from datetime import timedelta
from typing import Any

from psap.config import media_bucket, tenant_data_table
from psap.storage.dynamodb import dynamodb
from psap.storage.s3 import s3
from tests.support.harness import HandlerHarness, with_caller, with_path, with_query

_TENANTS = itertools.count(3000, 2)
UPLOAD = "media_radio_traffic_upload"
GET = "media_get"
EVENT_GET = "event_get"
_PERMISSIONS = {UPLOAD: "MANAGE_EVENTS", GET: "BROWSE_EVENTS", EVENT_GET: "BROWSE_EVENTS"}


def srt_time(seconds: float) -> str:
    moment = timedelta(seconds=seconds)
    whole = int(moment.total_seconds())
    millis = round((moment.total_seconds() - whole) * 1000)
    return f"{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d},{millis:03d}"


def srt_file(cues: list[tuple[float, float, str]], numbers: list[int] | None = None) -> str:
    blocks = []
    for position, (start, end, text) in enumerate(cues):
        number = numbers[position] if numbers else position + 1
        blocks.append(f"{number}\n{srt_time(start)} --> {srt_time(end)}\n{text}\n")
    return "\n".join(blocks)


RADIO_TRAFFIC = srt_file(
    [
        (2.0, 5.5, "DISPATCH: Engine 5, Medic 12, respond to 4410 Canyon Road, structure fire."),
        (6.2, 8.0, "ENGINE 5: Engine 5 copies, responding."),
        (8.4, 10.1, "MEDIC 12: Medic 12 en route."),
        (221.0, 226.75, "On scene, two-story residential, smoke showing."),
    ]
)


class MediaApi(HandlerHarness):
    """The media functions (and the event GET), for this test's own tenant by default."""

    def prepare(self) -> None:
        self.tenant = next(_TENANTS)
        self.other_tenant = self.tenant + 1

    def _call(
        self,
        function: str,
        event: dict[str, Any],
        tenant: int | None,
        *,
        permissions: str | None,
    ) -> tuple[int, Any]:
        with_caller(
            event,
            tenant if tenant is not None else self.tenant,
            permissions or _PERMISSIONS[function],
        )
        status, body, _ = self.answer(function, event)
        return status, body

    def upload(
        self,
        body: str | bytes,
        content_type: str = "application/x-subrip",
        tenant: int | None = None,
        *,
        permissions: str | None = None,
        json_form: bool = False,
        **query: Any,
    ) -> tuple[int, Any]:
        """The raw form's operation, or with `json_form` the JSON form's."""
        event = self.load_event(UPLOAD)
        if json_form:
            json_path = "/api/v1/external/media/radio-traffic/json"
            event["resource"] = event["path"] = json_path
            event["requestContext"]["resourcePath"] = json_path
            event["requestContext"]["path"] = "/prod" + json_path
        event["headers"]["Content-Type"] = content_type
        event["multiValueHeaders"]["Content-Type"] = [content_type]
        with_query(event, {name: str(value) for name, value in query.items() if value is not None})
        if isinstance(body, bytes):
            event["body"], event["isBase64Encoded"] = base64.b64encode(body).decode(), True
        else:
            event["body"], event["isBase64Encoded"] = body, False
        return self._call(UPLOAD, event, tenant, permissions=permissions)

    def upload_srt(
        self,
        text: str | bytes,
        event_id: int | None,
        tenant: int | None = None,
        *,
        channel: str = "FIRE-DISPATCH-1",
        started: str = "2026-01-05T14:00:00Z",
        **query: Any,
    ) -> tuple[int, Any]:
        return self.upload(
            text,
            tenant=tenant,
            eventId=event_id,
            channel=channel,
            recordingStartedAt=started,
            **query,
        )

    def upload_json(self, document: dict[str, Any], **kwargs: Any) -> tuple[int, Any]:
        return self.upload(
            json.dumps(document), content_type="application/json", json_form=True, **kwargs
        )

    def media(
        self, media_id: int | str, tenant: int | None = None, permissions: str | None = None
    ) -> tuple[int, Any]:
        event = self.load_event(GET)
        with_path(event, {"mediaId": str(media_id)})
        return self._call(GET, event, tenant, permissions=permissions)

    def event(self, event_id: int, tenant: int | None = None) -> tuple[int, Any]:
        event = self.load_event(EVENT_GET)
        with_path(event, {"eventId": str(event_id)})
        return self._call(EVENT_GET, event, tenant, permissions=None)


def stored_media_items(tenant: int) -> list[str]:
    """Keys of every media item of the tenant (record, link, hash): for 'nothing stored'.
    A test-only Scan of the test's own moto table."""
    found = []
    for page in dynamodb().get_paginator("scan").paginate(TableName=tenant_data_table()):
        for item in page["Items"]:
            pk, sk = item["pk"]["S"], item["sk"]["S"]
            if pk.startswith(f"T#{tenant}#") and ("MEDIA" in pk or sk.startswith("MEDIA")):
                found.append(f"{pk}/{sk}")
    return found


def media_objects() -> list[str]:
    answer = s3().list_objects_v2(Bucket=media_bucket())
    return [str(entry["Key"]) for entry in answer.get("Contents", [])]
