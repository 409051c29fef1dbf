"""Rebuilds the search index from the published catalog (the indexer function's logic).

Idempotent: a rebuild reads the whole catalog as it is now, so any number of change
notifications collapse into one rebuild per batch. Version numbers come from a sequence
taken before the catalog is read, and the pointer only ever moves to a higher version, so
when two rebuilds overlap the one that started later (and saw more) wins.

Resumable: a first build of thousands of documents can take longer than one Lambda run.
The build stops embedding when `should_stop` says its time is nearly up, stores what it
embedded as a checkpoint in the bucket and returns unfinished; the caller asks for another
run (the indexer sends itself a message), which reuses the checkpoint and goes on where the
last one stopped. A finished build deletes the checkpoint.
"""

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from aws_lambda_powertools.metrics import MetricUnit

from psap.clock import format_timestamp, utc_now
from psap.observability import logger, metrics
from psap.resource_center import store
from psap.resource_center.engine import artifact as artifacts
from psap.resource_center.engine.builder import BuildInterrupted, DocumentEncoder, build_artifact
from psap.resource_center.engine.encoder import DEFAULT_PASSAGES, document_encoder


@dataclass(frozen=True)
class RebuildResult:
    index_version: int
    documents: int
    embedded: int
    reused: int
    published: bool  # False when a newer index was already in use, or unfinished
    seconds: float
    finished: bool = True  # False: interrupted, the checkpoint holds `embedded` documents


def _previous_artifact(bucket: str) -> artifacts.IndexArtifact | None:
    pointer = store.index_pointer()
    if pointer is None:
        return None
    try:
        return artifacts.load(bucket, pointer.key)
    except ValueError:  # an older artifact format: embed everything once
        logger.warning("previous index artifact unreadable; embedding every document")
        return None


def rebuild_index(
    bucket: str,
    encoder: DocumentEncoder | None = None,
    reuse: Sequence[artifacts.IndexArtifact] = (),
    *,
    should_stop: Callable[[], bool] = lambda: False,
) -> tuple[RebuildResult, artifacts.IndexArtifact | None]:
    """Builds, stores and publishes a new index; or, when `should_stop` interrupts it,
    stores a checkpoint and returns an unfinished result (and no artifact). `reuse` adds
    artifacts whose vectors may be kept besides the one in use (the local demo's cache)."""
    started = time.perf_counter()
    version = store.next_index_version()
    published_items = [item for item in store.catalog_items() if item.published]
    previous = _previous_artifact(bucket)
    checkpoint = artifacts.load_checkpoint(bucket)
    built_at = format_timestamp(utc_now())
    sources = [*reuse, *(source for source in (previous, checkpoint) if source is not None)]
    try:
        artifact, stats = build_artifact(
            published_items,
            version,
            built_at,
            encoder=encoder or document_encoder(),
            reuse=sources,
            should_stop=should_stop,
        )
    except BuildInterrupted as interrupted:
        return _checkpointed(
            bucket,
            version,
            interrupted,
            checkpoint=checkpoint,
            started=started,
            documents=len(published_items),
        ), None
    key = artifacts.save(bucket, artifact)
    pointer = store.IndexPointer(
        version=version, key=key, documents=stats.documents, built_at=built_at
    )
    in_use = store.publish_index(pointer)
    if in_use:
        artifacts.prune(bucket, version)
    if checkpoint is not None:
        artifacts.delete_checkpoint(bucket)
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


def _checkpointed(
    bucket: str,
    version: int,
    interrupted: BuildInterrupted,
    *,
    checkpoint: artifacts.IndexArtifact | None,
    started: float,
    documents: int,
) -> RebuildResult:
    """Stores the vectors embedded so far, with the earlier checkpoint's: nothing embedded
    is embedded again."""
    embedded = dict(interrupted.embedded)
    model_id = DEFAULT_PASSAGES.model_id
    if checkpoint is not None and checkpoint.model_id == model_id:
        for row, content_hash in enumerate(checkpoint.content_hashes):
            embedded.setdefault(bytes(content_hash), checkpoint.passage_vectors(row))
    artifacts.save_checkpoint(bucket, artifacts.checkpoint_artifact(embedded, model_id))
    result = RebuildResult(
        index_version=version,
        documents=documents,
        embedded=len(interrupted.embedded),
        reused=0,
        published=False,
        seconds=time.perf_counter() - started,
        finished=False,
    )
    logger.info(
        "search index build interrupted; checkpoint stored",
        extra={"rebuild": vars(result), "remaining": interrupted.remaining},
    )
    metrics.add_metric(name="SearchIndexEmbedded", unit=MetricUnit.Count, value=result.embedded)
    return result
