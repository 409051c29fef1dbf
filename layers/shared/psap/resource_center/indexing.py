"""Rebuilds the search index from the published catalog (the indexer function's logic).

Idempotent: a rebuild reads the whole catalog as it is now, so any number of change
notifications collapse into one rebuild per batch. Version numbers come from a sequence
taken before the catalog is read, and the pointer only ever moves to a higher version, so
when two rebuilds overlap the one that started later (and saw more) wins.
"""

import time
from collections.abc import Sequence
from dataclasses import dataclass

from aws_lambda_powertools.metrics import MetricUnit

from psap.clock import format_timestamp, utc_now
from psap.observability import logger, metrics
from psap.resource_center import store
from psap.resource_center.engine import artifact as artifacts
from psap.resource_center.engine.builder import DocumentEncoder, build_artifact
from psap.resource_center.engine.encoder import document_encoder


@dataclass(frozen=True)
class RebuildResult:
    index_version: int
    documents: int
    embedded: int
    reused: int
    published: bool  # False when a newer index was already in use
    seconds: float


def _previous_artifact(table: str, bucket: str) -> artifacts.IndexArtifact | None:
    pointer = store.index_pointer(table)
    if pointer is None:
        return None
    try:
        return artifacts.load(bucket, pointer.key)
    except ValueError:  # an older artifact format: embed everything once
        logger.warning("previous index artifact unreadable; embedding every document")
        return None


def rebuild_index(
    table: str,
    bucket: str,
    encoder: DocumentEncoder | None = None,
    reuse: Sequence[artifacts.IndexArtifact] = (),
) -> tuple[RebuildResult, artifacts.IndexArtifact]:
    """Builds, stores and publishes a new index. `reuse` adds artifacts whose vectors may be
    kept besides the one in use (the local demo's cache)."""
    started = time.perf_counter()
    version = store.next_index_version(table)
    published_items = [item for item in store.catalog_items(table) if item.published]
    previous = _previous_artifact(table, bucket)
    built_at = format_timestamp(utc_now())
    sources = [*reuse, previous] if previous is not None else list(reuse)
    artifact, stats = build_artifact(
        published_items, version, built_at, encoder or document_encoder(), sources
    )
    key = artifacts.save(bucket, artifact)
    pointer = store.IndexPointer(
        version=version, key=key, documents=stats.documents, built_at=built_at
    )
    in_use = store.publish_index(table, pointer)
    if in_use:
        artifacts.prune(bucket, version)
    result = RebuildResult(
        index_version=version,
        documents=stats.documents,
        embedded=stats.embedded,
        reused=stats.reused,
        published=in_use,
        seconds=time.perf_counter() - started,
    )
    logger.info("search index rebuilt", extra={"rebuild": vars(result)})
    metrics.add_metric(name="SearchIndexDocuments", unit=MetricUnit.Count, value=stats.documents)
    metrics.add_metric(name="SearchIndexEmbedded", unit=MetricUnit.Count, value=stats.embedded)
    return result, artifact
