"""Documents stored compressed: large nested shapes (evaluations, incidents, events).

A document is the wire form (camelCase JSON) of a model, zlib-compressed into one binary
attribute. Transcripts and note lists compress 5-10x, which keeps almost every document in
one item under DynamoDB's 400 KB limit; what still does not fit is split into chunks that
the store writes beside the item (see `split`), or that the store keeps in S3 with a
pointer in the item (see `pack_document`).
"""

import json
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from psap.storage.s3 import get_object, put_object

# Room left in a 400 KB item for its keys and the other attributes.
CHUNK_BYTES = 350_000
_LEVEL = 6  # zlib's default: most of the gain of 9 at a fraction of the CPU time


def _wire_json(document: Mapping[str, Any]) -> bytes:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def encode_document(document: Mapping[str, Any]) -> bytes:
    return zlib.compress(_wire_json(document), _LEVEL)


def decode_document(blob: bytes) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(zlib.decompress(blob))
    return document


class UnreadableDocument(Exception):
    """A stored document that does not decompress or parse: a bug or corruption, never
    the caller's input."""


@dataclass(frozen=True)
class PackedDocument:
    """A compressed document as an item holds it: the bytes inline, the S3 key of the object
    written for it, or both when only one large list of it went to S3 (see `pack_document`).
    The sizes are the whole document's (JSON and compressed), 0 when an item keeps none."""

    inline: bytes | None
    object_key: str | None
    raw_bytes: int = 0
    stored_bytes: int = 0

    @property
    def in_s3(self) -> bool:
        return self.object_key is not None


@dataclass(frozen=True)
class OverflowObject:
    """Where a document too large to stay inline is written: its S3 object."""

    bucket: str
    object_key: str
    content_type: str


def pack_document(
    document: Mapping[str, Any],
    *,
    inline_bytes: int,
    overflow: OverflowObject,
    apart: str | None = None,
) -> PackedDocument:
    """Compresses a document: inline when it is at most `inline_bytes` compressed, else
    written to S3 as `overflow` now, before the transaction that stores the pointer (a
    failed transaction leaves an object nothing points at, never a pointer to nothing).

    With `apart` (the name of a list field), only that list goes to S3 and the item keeps the
    rest of the document, the list emptied."""
    bucket, object_key, content_type = overflow.bucket, overflow.object_key, overflow.content_type
    raw = _wire_json(document)
    packed = zlib.compress(raw, _LEVEL)
    if len(packed) <= inline_bytes:
        return PackedDocument(packed, None, len(raw), len(packed))
    if apart is None:
        put_object(bucket, object_key, packed, content_type=content_type)
        return PackedDocument(None, object_key, len(raw), len(packed))
    put_object(
        bucket, object_key, encode_document({apart: document[apart]}), content_type=content_type
    )
    rest = encode_document({**document, apart: []})
    return PackedDocument(rest, object_key, len(raw), len(packed))


def unpack_document(packed: PackedDocument, bucket: str, what: str) -> dict[str, Any]:
    """The document back from any form (one S3 read when it is there): ObjectMissing when
    the object is gone, UnreadableDocument (naming `what`) when the bytes do not decode."""
    try:
        document = {} if packed.inline is None else decode_document(packed.inline)
        if packed.object_key is not None:
            document.update(decode_document(get_object(bucket, packed.object_key)))
    except (zlib.error, ValueError) as error:
        raise UnreadableDocument(f"{what}: {error}") from error
    return document


def split(blob: bytes, chunk_bytes: int | None = None) -> list[bytes]:
    """The blob in pieces of at most `chunk_bytes` (CHUNK_BYTES by default), one piece when
    it fits."""
    size = chunk_bytes or CHUNK_BYTES
    return [blob[start : start + size] for start in range(0, len(blob), size)] or [b""]


def join(chunks: Sequence[bytes]) -> bytes:
    return b"".join(chunks)


def with_tenant(document: Any, tenant_id: int) -> Any:
    """The document with every `tenantId` set to the tenant it is stored in: a source's own
    tenant numbering never leaks into what a tenant reads."""
    if isinstance(document, dict):
        return {
            key: tenant_id if key == "tenantId" else with_tenant(value, tenant_id)
            for key, value in document.items()
        }
    if isinstance(document, list):
        return [with_tenant(value, tenant_id) for value in document]
    return document
