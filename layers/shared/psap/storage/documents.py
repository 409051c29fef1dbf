"""Documents stored compressed: large nested shapes (evaluations, incidents, events).

A document is the wire form (camelCase JSON) of a model, zlib-compressed into one binary
attribute. Transcripts and note lists compress 5-10x, which keeps almost every document in
one item under DynamoDB's 400 KB limit; what still does not fit is split into chunks that
the store writes beside the item (see `split`).
"""

import json
import zlib
from collections.abc import Sequence
from typing import Any

# Room left in a 400 KB item for its keys and the other attributes.
CHUNK_BYTES = 350_000
_LEVEL = 6  # zlib's default: most of the gain of 9 at a fraction of the CPU time


def encode_document(document: dict[str, Any]) -> bytes:
    text = json.dumps(document, separators=(",", ":"), ensure_ascii=False)
    return zlib.compress(text.encode("utf-8"), _LEVEL)


def decode_document(blob: bytes) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(zlib.decompress(blob))
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
