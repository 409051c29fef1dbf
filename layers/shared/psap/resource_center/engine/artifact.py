"""The index artifact: everything a search needs, in one versioned S3 object.

An uncompressed .npz (numpy's zip of arrays, no pickle) holding, per published document:
catalog id and version, item type, category, content hash, its passages' fp16 embeddings
(rows passage_starts[d] to passage_starts[d + 1]), and its display fields and body (zlib
per document, so a search decompresses only the page it shows); plus the BM25 score matrix
(CSC arrays) and vocabulary. The content hashes and embeddings let the next build re-embed
only documents that changed.

A checkpoint (CHECKPOINT_KEY) has the same format with only hashes and vectors: what an
interrupted build embedded, for the next build to reuse.
"""

import io
import json
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from psap.resource_center.models import ItemType
from psap.storage.aws_errors import translated
from psap.storage.s3 import get_object, get_object_if_present, put_object, s3

FORMAT_VERSION = 2  # 2: passage vectors
KEY_PREFIX = "resource-center/index/"
CHECKPOINT_KEY = "resource-center/checkpoint/vectors.npz"
ITEM_TYPES: tuple[ItemType, ...] = (ItemType.COACHING_CONTENT, ItemType.HELP_ARTICLE)

type Int64s = npt.NDArray[np.int64]
type Int32s = npt.NDArray[np.int32]
type Floats = npt.NDArray[np.floating[Any]]


@dataclass(frozen=True)
class DisplayFields:
    title: str
    summary: str
    body: str
    category: str
    thumbnail_url: str | None
    url: str
    required_license_name: str | None


@dataclass(frozen=True)
class Bm25Matrix:
    data: npt.NDArray[np.float32]
    indices: Int32s
    indptr: Int64s
    vocabulary: dict[str, int]
    k1: float
    b: float
    method: str


@dataclass(frozen=True)
class IndexArtifact:
    index_version: int
    built_at: str
    model_id: str
    ids: Int64s
    versions: Int32s
    item_types: npt.NDArray[np.uint8]  # position in ITEM_TYPES
    categories: tuple[str, ...]
    category_codes: Int32s  # position in categories
    content_hashes: npt.NDArray[np.bytes_]
    embeddings: Floats  # (passages, 384), fp16 at rest
    passage_starts: Int64s  # (documents + 1): a document's rows in embeddings
    bm25: Bm25Matrix | None  # None for an empty catalog
    documents_blob: npt.NDArray[np.uint8]
    documents_offsets: Int64s

    @property
    def size(self) -> int:
        return len(self.ids)

    def passage_vectors(self, position: int) -> Floats:
        return self.embeddings[self.passage_starts[position] : self.passage_starts[position + 1]]

    def display(self, position: int) -> DisplayFields:
        start, end = (
            int(self.documents_offsets[position]),
            int(self.documents_offsets[position + 1]),
        )
        fields = json.loads(zlib.decompress(self.documents_blob[start:end].tobytes()))
        return DisplayFields(**fields)


def pack_documents(documents: list[DisplayFields]) -> tuple[npt.NDArray[np.uint8], Int64s]:
    chunks = [
        zlib.compress(json.dumps(vars(document), ensure_ascii=False).encode(), 6)
        for document in documents
    ]
    offsets = np.zeros(len(chunks) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(chunk) for chunk in chunks])
    return np.frombuffer(b"".join(chunks), dtype=np.uint8), offsets


def _json_array(value: Any) -> npt.NDArray[np.uint8]:
    return np.frombuffer(json.dumps(value, ensure_ascii=False).encode(), dtype=np.uint8)


def _json_value(array: npt.NDArray[np.uint8]) -> Any:
    return json.loads(array.tobytes())


def to_bytes(artifact: IndexArtifact) -> bytes:
    header = {
        "formatVersion": FORMAT_VERSION,
        "indexVersion": artifact.index_version,
        "builtAt": artifact.built_at,
        "modelId": artifact.model_id,
        "categories": list(artifact.categories),
        "bm25": None
        if artifact.bm25 is None
        else {"k1": artifact.bm25.k1, "b": artifact.bm25.b, "method": artifact.bm25.method},
    }
    arrays: dict[str, Any] = {
        "header": _json_array(header),
        "ids": artifact.ids,
        "versions": artifact.versions,
        "item_types": artifact.item_types,
        "category_codes": artifact.category_codes,
        "content_hashes": artifact.content_hashes,
        "embeddings": artifact.embeddings.astype(np.float16),
        "passage_starts": artifact.passage_starts,
        "documents_blob": artifact.documents_blob,
        "documents_offsets": artifact.documents_offsets,
    }
    if artifact.bm25 is not None:
        arrays |= {
            "bm25_data": artifact.bm25.data,
            "bm25_indices": artifact.bm25.indices,
            "bm25_indptr": artifact.bm25.indptr,
            "bm25_vocabulary": _json_array(artifact.bm25.vocabulary),
        }
    buffer = io.BytesIO()
    np.savez(buffer, allow_pickle=False, **arrays)
    return buffer.getvalue()


def from_bytes(payload: bytes) -> IndexArtifact:
    with np.load(io.BytesIO(payload), allow_pickle=False) as arrays:
        header = _json_value(arrays["header"])
        if header["formatVersion"] != FORMAT_VERSION:
            raise ValueError(f"index artifact format {header['formatVersion']} is not supported")
        bm25 = None
        if header["bm25"] is not None:
            bm25 = Bm25Matrix(
                data=arrays["bm25_data"],
                indices=arrays["bm25_indices"],
                indptr=arrays["bm25_indptr"],
                vocabulary=_json_value(arrays["bm25_vocabulary"]),
                k1=float(header["bm25"]["k1"]),
                b=float(header["bm25"]["b"]),
                method=str(header["bm25"]["method"]),
            )
        return IndexArtifact(
            index_version=int(header["indexVersion"]),
            built_at=str(header["builtAt"]),
            model_id=str(header["modelId"]),
            ids=arrays["ids"],
            versions=arrays["versions"],
            item_types=arrays["item_types"],
            categories=tuple(header["categories"]),
            category_codes=arrays["category_codes"],
            content_hashes=arrays["content_hashes"],
            embeddings=arrays["embeddings"],
            passage_starts=arrays["passage_starts"],
            bm25=bm25,
            documents_blob=arrays["documents_blob"],
            documents_offsets=arrays["documents_offsets"],
        )


def checkpoint_artifact(embedded: dict[bytes, Floats], model_id: str) -> IndexArtifact:
    """Vectors without documents: what an interrupted build embedded."""
    hashes = list(embedded)
    starts = np.zeros(len(hashes) + 1, dtype=np.int64)
    starts[1:] = np.cumsum([len(embedded[content_hash]) for content_hash in hashes])
    vectors = [embedded[content_hash] for content_hash in hashes]
    return IndexArtifact(
        index_version=0,
        built_at="checkpoint",
        model_id=model_id,
        ids=np.zeros(len(hashes), dtype=np.int64),
        versions=np.zeros(len(hashes), dtype=np.int32),
        item_types=np.zeros(len(hashes), dtype=np.uint8),
        categories=(),
        category_codes=np.zeros(len(hashes), dtype=np.int32),
        content_hashes=np.array(hashes, dtype="S64"),
        embeddings=np.concatenate(vectors) if vectors else np.zeros((0, 384), np.float16),
        passage_starts=starts,
        bm25=None,
        documents_blob=np.zeros(0, dtype=np.uint8),
        documents_offsets=np.zeros(len(hashes) + 1, dtype=np.int64),
    )


def save_checkpoint(bucket: str, artifact: IndexArtifact) -> None:
    put_object(bucket, CHECKPOINT_KEY, to_bytes(artifact), content_type="application/octet-stream")


def load_checkpoint(bucket: str) -> IndexArtifact | None:
    """None when no build was interrupted (or its checkpoint is of an older format)."""
    payload = get_object_if_present(bucket, CHECKPOINT_KEY)
    if payload is None:
        return None
    try:
        return from_bytes(payload)
    except ValueError:
        return None


def delete_checkpoint(bucket: str) -> None:
    with translated("index checkpoint delete"):
        s3().delete_object(Bucket=bucket, Key=CHECKPOINT_KEY)


def artifact_key(index_version: int) -> str:
    return f"{KEY_PREFIX}{index_version:010d}.npz"


def save(bucket: str, artifact: IndexArtifact) -> str:
    key = artifact_key(artifact.index_version)
    put_object(bucket, key, to_bytes(artifact), content_type="application/octet-stream")
    return key


def load(bucket: str, key: str) -> IndexArtifact:
    return from_bytes(get_object(bucket, key))


def prune(bucket: str, current_version: int, keep: int = 3) -> int:
    """Deletes artifacts older than the `keep` newest versions up to `current_version`; a
    container still loading an older one has minutes to finish. Returns how many went."""
    client = s3()
    oldest_kept = artifact_key(max(0, current_version - keep + 1))
    stale: list[str] = []
    with translated("index artifact pruning"):
        for page in client.get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Prefix=KEY_PREFIX
        ):
            stale.extend(
                entry["Key"] for entry in page.get("Contents", []) if entry["Key"] < oldest_kept
            )
        for first in range(0, len(stale), 1000):
            client.delete_objects(
                Bucket=bucket,
                Delete={"Objects": [{"Key": key} for key in stale[first : first + 1000]]},
            )
    return len(stale)
