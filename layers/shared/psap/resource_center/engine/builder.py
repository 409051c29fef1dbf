"""Builds an index artifact from the published catalog items.

Embeddings are the slow part (tens of milliseconds per passage on one core), so a build
reuses the previous artifact's passage vectors for every document whose content hash is
unchanged and embeds only new or changed documents. It embeds in chunks and asks
`should_stop` after each: a build that must stop (the indexer's time is nearly up) raises
BuildInterrupted with every vector embedded so far, which the next build reuses.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import bm25s
import numpy as np

from psap.resource_center.engine.artifact import (
    ITEM_TYPES,
    Bm25Matrix,
    DisplayFields,
    IndexArtifact,
    pack_documents,
)
from psap.resource_center.engine.encoder import DEFAULT_PASSAGES, DIMENSIONS, Passages, Vectors
from psap.resource_center.engine.text import keyword_tokens
from psap.resource_center.models import CatalogItem, CatalogRecord

BM25_K1 = 1.2
BM25_B = 0.75
BM25_METHOD = "lucene"


EMBED_CHUNK_DOCUMENTS = 64  # between two `should_stop` checks: seconds, not minutes


class DocumentEncoder(Protocol):
    def encode_passages(
        self, documents: Sequence[tuple[str, str]], passages: Passages = ...
    ) -> list[Vectors]: ...


class BuildInterrupted(Exception):
    """The build stopped before every document was embedded; `embedded` (content hash ->
    passage vectors) is the work done, for the next build to reuse."""

    def __init__(self, embedded: dict[bytes, Vectors], remaining: int) -> None:
        super().__init__(f"index build interrupted with {remaining} documents to embed")
        self.embedded = embedded
        self.remaining = remaining


@dataclass(frozen=True)
class BuildStats:
    documents: int
    embedded: int  # new or changed: ran through the model
    reused: int  # unchanged: vectors taken from an earlier artifact
    passages: int = 0
    embedded_hashes: frozenset[bytes] = field(default=frozenset(), repr=False)


def keyword_text(record: CatalogRecord) -> str:
    """The title counts twice: a term in the title says more about an item than one in the
    body (a cheap field boost)."""
    return " ".join((record.title, record.title, record.summary, record.category, record.body))


def embedding_document(record: CatalogRecord) -> tuple[str, str]:
    """What the model sees: the title (leading every passage) and the whole text. The
    summary counts only when the body does not already contain it (a summary that repeats
    the body's first sentence would be embedded twice)."""
    summary, body = record.summary.strip(), record.body.strip()
    text = body if not summary or summary in body else f"{summary}\n{body}"
    return record.title, text


def _reusable_vectors(sources: Sequence[IndexArtifact], model_id: str) -> dict[bytes, Vectors]:
    """content hash -> passage vectors, from artifacts made with the same model and
    passages. The vectors depend on the content only, so an item that moved or was
    re-created keeps them."""
    vectors: dict[bytes, Vectors] = {}
    for source in sources:
        if source.model_id != model_id:
            continue
        for row, content_hash in enumerate(source.content_hashes):
            vectors.setdefault(bytes(content_hash), source.passage_vectors(row))
    return vectors


def _embed(
    documents: Sequence[CatalogItem],
    rows: list[int],
    encoder: DocumentEncoder,
    *,
    passages: Passages,
    should_stop: Callable[[], bool],
) -> dict[bytes, Vectors]:
    embedded: dict[bytes, Vectors] = {}
    for first in range(0, len(rows), EMBED_CHUNK_DOCUMENTS):
        if first and should_stop():
            raise BuildInterrupted(embedded, len(rows) - first)
        chunk = [documents[row] for row in rows[first : first + EMBED_CHUNK_DOCUMENTS]]
        vectors = encoder.encode_passages(
            [embedding_document(item.record) for item in chunk], passages
        )
        for item, passage_vectors in zip(chunk, vectors, strict=True):
            embedded[item.content_hash.encode()] = passage_vectors
    return embedded


def build_artifact(
    items: Sequence[CatalogItem],
    index_version: int,
    built_at: str,
    *,
    encoder: DocumentEncoder,
    reuse: Sequence[IndexArtifact] = (),
    passages: Passages = DEFAULT_PASSAGES,
    should_stop: Callable[[], bool] = lambda: False,
) -> tuple[IndexArtifact, BuildStats]:
    """`reuse`: earlier artifacts (normally the one in use, and a checkpoint of an
    interrupted build) whose vectors are kept for documents with the same content hash.
    Raises BuildInterrupted when `should_stop` says so before the last chunk is embedded."""
    documents = sorted(items, key=lambda item: item.id)
    hashes = np.array([item.content_hash.encode() for item in documents], dtype="S64")
    found = _reusable_vectors(reuse, passages.model_id)
    missing = [row for row, item in enumerate(documents) if item.content_hash.encode() not in found]
    embedded = _embed(documents, missing, encoder, passages=passages, should_stop=should_stop)
    blocks = [found.get(bytes(h)) for h in hashes]
    vectors = [
        block if block is not None else embedded[bytes(h)]
        for block, h in zip(blocks, hashes, strict=True)
    ]
    starts = np.zeros(len(documents) + 1, dtype=np.int64)
    starts[1:] = np.cumsum([len(block) for block in vectors])
    embeddings = (
        np.concatenate(vectors).astype(np.float16)
        if vectors
        else np.zeros((0, DIMENSIONS), dtype=np.float16)
    )

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
        model_id=passages.model_id,
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
        passage_starts=starts,
        bm25=_bm25([keyword_text(item.record) for item in documents]),
        documents_blob=blob,
        documents_offsets=offsets,
    )
    stats = BuildStats(
        documents=len(documents),
        embedded=len(missing),
        reused=len(documents) - len(missing),
        passages=len(embeddings),
        embedded_hashes=frozenset(embedded),
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
