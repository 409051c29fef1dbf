"""Radio-traffic media in the tenant-data table and the media bucket.

Layout (every key begins with the tenant):

  T#{t}#MEDIA#{id}                       / RECORD      the media record: eventId, type,
                                                       contentSha256, originalKey, doc (the
                                                       wire record, zlib JSON) and, when the
                                                       segments are too large to sit inline,
                                                       segmentsKey
  T#{t}#EVT#{eventId}                    / MEDIA#{id:012d}   the event's link (id, type),
                                                       read with the event in one Query
  T#{t}#EVT#{eventId}#MEDIAHASH#{sha256} / MEDIAHASH   which media holds this content for the
                                                       event: re-uploads find it (its own
                                                       partition, so event reads never read it)
  SEQ#MEDIA                              / SEQ         the id sequence (ids unique across tenants)

S3 (MEDIA_BUCKET):
  media/T{t}/EVT{eventId}/radio-traffic/{sha256}.srt             the original, as uploaded
  media/T{t}/EVT{eventId}/radio-traffic/{sha256}/{id}.segments.zz  segments over the inline
                                                                   limit (zlib JSON)

Nothing is half-stored: the objects are written first under keys that only this content (and
this media id) can have, so a failed transaction leaves at most an unreferenced object; then
one transaction writes the record, the link and the hash item (conditional: a racing upload
of the same content makes exactly one record) and checks that the event still exists.
"""

from collections.abc import Callable
from typing import Any

from psap.config import tenant_data_table
from psap.errors import NotFound, StoreUnavailable
from psap.events.store import EVENTS, media_link_item
from psap.media.models import RadioTrafficMedia
from psap.storage import numbered
from psap.storage.documents import OverflowObject, PackedDocument, pack_document, unpack_document
from psap.storage.dynamodb import read_item, transact_write
from psap.storage.partitions import PartitionKind, registration
from psap.storage.s3 import put_object
from psap.storage.sequences import next_id


def _table() -> str:
    """This store's table, from the settings read at cold start (psap.config)."""
    return tenant_data_table()


MEDIA_SEQUENCE = "MEDIA"
# The record keeps its segments inline while its compressed JSON is at most this (a 400 KB
# item holds the rest), else they go to S3; a 2-hour channel (~2 400 cues) compresses to
# about 60 KB: `make bench` prints it.
INLINE_SEGMENTS_BYTES = 300_000
SRT_CONTENT_TYPE = "application/x-subrip"
_RECORD_SK = "RECORD"
_HASH_SK = "MEDIAHASH"


class DuplicateContent(Exception):
    """Another upload of the same content for the same event won the race."""


def media_key(tenant_id: int, media_id: int) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"T#{tenant_id}#MEDIA#{media_id}"}, "sk": {"S": _RECORD_SK}}


def hash_key(tenant_id: int, event_id: int, sha256: str) -> dict[str, dict[str, str]]:
    event_pk = numbered.record_key(EVENTS, tenant_id, event_id)["pk"]["S"]
    return {"pk": {"S": f"{event_pk}#MEDIAHASH#{sha256}"}, "sk": {"S": _HASH_SK}}


def original_key(tenant_id: int, event_id: int, sha256: str) -> str:
    return f"media/T{tenant_id}/EVT{event_id}/radio-traffic/{sha256}.srt"


def segments_key(tenant_id: int, event_id: int, sha256: str, *, media_id: int) -> str:
    return f"media/T{tenant_id}/EVT{event_id}/radio-traffic/{sha256}/{media_id}.segments.zz"


def next_media_id() -> int:
    return next_id(_table(), MEDIA_SEQUENCE)


def find_media_by_content(tenant_id: int, event_id: int, sha256: str) -> int | None:
    """The media that already holds this content for this event, if any."""
    item = read_item(_table(), hash_key(tenant_id, event_id, sha256), "media")
    return int(item["mediaId"]) if item else None


def create_radio_traffic(
    bucket: str, tenant_id: int, media: RadioTrafficMedia, *, original: bytes
) -> None:
    """Stores the original and the record (see the module's layout). DuplicateContent when a
    concurrent upload of the same content for the event stored its record first; NotFound
    when the event no longer exists."""
    sha = media.content_sha256
    put_object(
        bucket,
        original_key(tenant_id, media.event_id, sha),
        original,
        content_type=SRT_CONTENT_TYPE,
    )
    document = media.model_dump(mode="json", by_alias=True)
    packed = pack_document(
        document,
        inline_bytes=INLINE_SEGMENTS_BYTES,
        overflow=OverflowObject(
            bucket, segments_key(tenant_id, media.event_id, sha, media_id=media.id), "zlib"
        ),
        apart="segments",
    )
    record: dict[str, Any] = {
        **media_key(tenant_id, media.id),
        "id": {"N": str(media.id)},
        "tenantId": {"N": str(tenant_id)},
        "eventId": {"N": str(media.event_id)},
        "type": {"S": media.type.value},
        "contentSha256": {"S": sha},
        "originalKey": {"S": original_key(tenant_id, media.event_id, sha)},
    }
    if packed.in_s3:
        record["segmentsKey"] = {"S": packed.object_key}
    record["doc"] = {"B": packed.inline}
    writes: list[dict[str, Any]] = [
        {
            "Put": {
                "TableName": _table(),
                "Item": record,
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        },
        {
            "Put": {
                "TableName": _table(),
                "Item": media_link_item(
                    tenant_id, media.event_id, media.id, media_type=media.type.value
                ),
            }
        },
        {
            "Put": {
                "TableName": _table(),
                "Item": {
                    **hash_key(tenant_id, media.event_id, sha),
                    "mediaId": {"N": str(media.id)},
                },
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        },
        {
            "ConditionCheck": {
                "TableName": _table(),
                "Key": numbered.record_key(EVENTS, tenant_id, media.event_id),
                "ConditionExpression": "attribute_exists(pk)",
            }
        },
    ]
    # Media ids come from a sequence all tenants share: the registry lists the tenant's. Last,
    # as the cancellation codes are read by position.
    writes.append(registration(_table(), tenant_id, record["pk"]["S"], kind=PartitionKind.MEDIA))
    transact_write(writes, on_cancel=_cancelled(media.event_id))


def _cancelled(event_id: int) -> Callable[[list[str]], Exception]:
    def explain(codes: list[str]) -> Exception:
        if len(codes) > 3 and codes[3] == "ConditionalCheckFailed":
            return NotFound(f"event {event_id} not found")
        if len(codes) > 2 and codes[2] == "ConditionalCheckFailed":
            return DuplicateContent()
        return StoreUnavailable(f"media write cancelled: {codes}")

    return explain


def get_radio_traffic(bucket: str, tenant_id: int, media_id: int) -> RadioTrafficMedia | None:
    """One GetItem, plus one S3 read when the segments are stored beside the record."""
    item = read_item(_table(), media_key(tenant_id, media_id), "media")
    if item is None:
        return None
    key = item.get("segmentsKey")
    packed = PackedDocument(bytes(item["doc"]), str(key) if key else None)
    return RadioTrafficMedia.model_validate(unpack_document(packed, bucket, f"media {media_id}"))
