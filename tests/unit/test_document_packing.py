"""The storage kit's document packing: inline when small, in S3 under the caller's key when
large, and one read that gives the document back from either form."""

import os
import zlib
from typing import Any

import pytest

from psap.storage.aws_errors import ObjectMissing
from psap.storage.documents import (
    OverflowObject,
    PackedDocument,
    UnreadableDocument,
    encode_document,
    pack_document,
    unpack_document,
)
from psap.storage.s3 import get_object, s3

KEY = "kit/T1/document.json.zlib"
DOCUMENT: dict[str, Any] = {"name": "Kit", "notes": [f"note {n} é" for n in range(200)]}


@pytest.fixture
def bucket(aws: None) -> str:
    return os.environ["MEDIA_BUCKET"]


def _object_keys(bucket: str) -> list[str]:
    return [item["Key"] for item in s3().list_objects_v2(Bucket=bucket).get("Contents", [])]


def _pack(bucket: str, inline_bytes: int) -> PackedDocument:
    return pack_document(
        DOCUMENT, inline_bytes=inline_bytes, overflow=OverflowObject(bucket, KEY, "zlib")
    )


def test_a_document_at_most_the_limit_stays_inline_and_reads_back(bucket: str) -> None:
    stored_bytes = len(encode_document(DOCUMENT))
    packed = _pack(bucket, inline_bytes=stored_bytes)
    assert not packed.in_s3 and packed.object_key is None
    assert packed.inline == encode_document(DOCUMENT)
    assert packed.stored_bytes == stored_bytes < packed.raw_bytes
    assert _object_keys(bucket) == []
    assert unpack_document(packed, bucket, "kit") == DOCUMENT


def test_a_document_over_the_limit_goes_to_s3_under_the_given_key_and_reads_back(
    bucket: str,
) -> None:
    stored_bytes = len(encode_document(DOCUMENT))
    packed = _pack(bucket, inline_bytes=stored_bytes - 1)
    assert packed.in_s3 and packed.inline is None
    assert packed.object_key == KEY
    assert _object_keys(bucket) == [KEY]
    assert get_object(bucket, KEY) == encode_document(DOCUMENT)
    assert s3().head_object(Bucket=bucket, Key=KEY)["ContentType"] == "zlib"
    assert packed.stored_bytes == stored_bytes
    assert unpack_document(packed, bucket, "kit") == DOCUMENT
    # A pointer alone (an item that keeps no sizes) reads the same document
    assert unpack_document(PackedDocument(None, KEY), bucket, "kit") == DOCUMENT


def test_a_missing_object_is_object_missing(bucket: str) -> None:
    with pytest.raises(ObjectMissing, match="kit/T1/gone"):
        unpack_document(PackedDocument(None, "kit/T1/gone"), bucket, "kit")


def test_bytes_that_do_not_decode_are_unreadable_and_named(bucket: str) -> None:
    with pytest.raises(UnreadableDocument, match="version 3"):
        unpack_document(PackedDocument(b"not zlib", None), bucket, "version 3")
    with pytest.raises(UnreadableDocument, match="version 4"):
        unpack_document(PackedDocument(zlib.compress(b"{not json"), None), bucket, "version 4")


def test_a_list_apart_goes_to_s3_alone_and_the_item_keeps_the_rest(bucket: str) -> None:
    document = {"id": 7, "segments": DOCUMENT["notes"], "name": "Kit"}
    stored_bytes = len(encode_document(document))
    at_limit = pack_document(
        document,
        inline_bytes=stored_bytes,
        overflow=OverflowObject(bucket, KEY, "zlib"),
        apart="segments",
    )
    assert at_limit.inline == encode_document(document) and not at_limit.in_s3
    packed = pack_document(
        document,
        inline_bytes=stored_bytes - 1,
        overflow=OverflowObject(bucket, KEY, "zlib"),
        apart="segments",
    )
    assert packed.in_s3 and packed.object_key == KEY
    assert packed.inline == encode_document({"id": 7, "segments": [], "name": "Kit"})
    assert get_object(bucket, KEY) == encode_document({"segments": DOCUMENT["notes"]})
    assert unpack_document(packed, bucket, "kit") == document
