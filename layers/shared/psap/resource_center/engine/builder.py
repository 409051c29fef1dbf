"""Builds an index artifact from the published catalog items.

Embeddings are the slow part (tens of milliseconds per document on one core), so a build
reuses the previous artifact's vector for every document whose content hash is unchanged
and embeds only new or changed documents.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import bm25s
import numpy as np
import numpy.typing as npt

from psap.resource_center.engine.artifact import (
    ITEM_TYPES,
    Bm25Matrix,
    DisplayFields,
    IndexArtifact,
    pack_documents,
)
from psap.resource_center.engine.encoder import DIMENSIONS, MODEL_ID, Vectors
from psap.resource_center.engine.text import keyword_tokens
from psap.resource_center.models import CatalogItem, CatalogRecord

BM25_K1 = 1.2
BM25_B = 0.75
BM25_METHOD = "lucene"


class DocumentEncoder(Protocol):
    def encode_documents(self, texts: Sequence[str]) -> Vectors: ...


@dataclass(frozen=True)
class BuildStats:
    documents: int
    embedded: int  # new or changed: ran through the model
    reused: int  # unchanged: vector taken from the previous artifact


def keyword_text(record: CatalogRecord) -> str:
    """The title counts twice: a term in the title says more about an item than one in the
    body (a cheap field boost)."""
    return " ".join((record.title, record.title, record.summary, record.category, record.body))


def embedding_text(record: CatalogRecord) -> str:
    """What the model sees, truncated to DOCUMENT_MAX_TOKENS: title, summary, then the body's
    opening."""
    return f"{record.title}. {record.summary}\n{record.body}"


def _reusable_vectors(
    sources: Sequence[IndexArtifact],
) -> dict[bytes, npt.NDArray[np.float16]]:
    """content hash -> embedding, from artifacts made with the same model. The vector
    depends on the content only, so an item that moved or was re-created keeps it."""
    vectors: dict[bytes, npt.NDArray[np.float16]] = {}
    for source in sources:
        if source.model_id != MODEL_ID:
            continue
        for row, content_hash in enumerate(source.content_hashes):
            vectors.setdefault(bytes(content_hash), source.embeddings[row])
    return vectors


def build_artifact(
    items: Sequence[CatalogItem],
    index_version: int,
    built_at: str,
    encoder: DocumentEncoder,
    reuse: Sequence[IndexArtifact] = (),
) -> tuple[IndexArtifact, BuildStats]:
    """`reuse`: earlier artifacts (normally the one in use) whose vectors are kept for
    documents with the same content hash."""
    documents = sorted(items, key=lambda item: item.id)
    hashes = np.array([item.content_hash.encode() for item in documents], dtype="S64")
    embeddings = np.zeros((len(documents), DIMENSIONS), dtype=np.float16)
    reusable = _reusable_vectors(reuse)
    missing: list[int] = []
    for row, item in enumerate(documents):
        vector = reusable.get(item.content_hash.encode())
        if vector is None:
            missing.append(row)
        else:
            embeddings[row] = vector
    if missing:
        vectors = encoder.encode_documents(
            [embedding_text(documents[row].record) for row in missing]
        )
        embeddings[missing] = vectors.astype(np.float16)

    categories = tuple(sorted({item.record.category for item in documents}))
    category_code = {name: code for code, name in enumerate(categories)}
    blob, offsets = pack_documents(
        [
            DisplayFields(
                title=item.record.title,
                summary=item.record.summary,
                body=item.record.body,
                category=item.record.category,
                thumbnail_url=item.record.thumbnail_url,
                url=item.record.url,
                required_license_name=item.record.required_license_name,
            )
            for item in documents
        ]
    )
    artifact = IndexArtifact(
        index_version=index_version,
        built_at=built_at,
        model_id=MODEL_ID,
        ids=np.array([item.id for item in documents], dtype=np.int64),
        versions=np.array([item.version for item in documents], dtype=np.int32),
        item_types=np.array(
            [ITEM_TYPES.index(item.record.item_type) for item in documents], dtype=np.uint8
        ),
        categories=categories,
        category_codes=np.array(
            [category_code[item.record.category] for item in documents], dtype=np.int32
        ),
        content_hashes=hashes,
        embeddings=embeddings,
        bm25=_bm25([keyword_text(item.record) for item in documents]),
        documents_blob=blob,
        documents_offsets=offsets,
    )
    stats = BuildStats(
        documents=len(documents), embedded=len(missing), reused=len(documents) - len(missing)
    )
    return artifact, stats


def _bm25(texts: list[str]) -> Bm25Matrix | None:
    if not texts:
        return None
    retriever = bm25s.BM25(k1=BM25_K1, b=BM25_B, method=BM25_METHOD)
    # Our tokens (psap.resource_center.engine.text), so the query side never needs bm25s.
    retriever.index(keyword_tokens(texts), show_progress=False)
    return Bm25Matrix(
        data=np.asarray(retriever.scores["data"], dtype=np.float32),
        indices=np.asarray(retriever.scores["indices"], dtype=np.int32),
        indptr=np.asarray(retriever.scores["indptr"], dtype=np.int64),
        vocabulary={str(token): int(code) for token, code in retriever.vocab_dict.items()},
        k1=BM25_K1,
        b=BM25_B,
        method=BM25_METHOD,
    )
