"""The labeled relevance sets of resource-center search and their measure, nDCG@10.

- tests/data/resource_center_relevance.json names, per query, the demo catalog items
  (local/demo_resource_center.py) judged relevant: short items, 58 queries.
- tests/data/resource_center_long_relevance.json carries its own long documents (Python's
  reference and module documentation, PSF licence) and queries split into dev (tune here)
  and test (report only).

Grades: 2 answers the query, 1 is related. nDCG@10 uses gains 2^grade - 1 and a log2 rank
discount, averaged over the queries. Shared by the relevance tests and `make bench`, so
both measure the same thing.
"""

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from local.demo_resource_center import catalog_item
from psap.resource_center.engine.artifact import IndexArtifact, from_bytes, to_bytes
from psap.resource_center.engine.encoder import DEFAULT_PASSAGES, Passages
from psap.resource_center.engine.index import Mask, SearchIndex, Vector
from psap.resource_center.engine.text import query_terms
from psap.resource_center.fusion import Fusion, FusionMethod, Ranking, fuse
from psap.resource_center.models import CatalogItem, CatalogRecord, ItemType

ROOT = Path(__file__).resolve().parent.parent

RELEVANCE_FILE = ROOT / "tests" / "data" / "resource_center_relevance.json"
LONG_RELEVANCE_FILE = ROOT / "tests" / "data" / "resource_center_long_relevance.json"
# Vectors of earlier runs (git-ignored), so a rerun embeds only what changed.
LONG_CACHE_FOLDER = ROOT / ".local" / "cache"
CUTOFF = 10


@dataclass(frozen=True)
class Judged:
    query: str
    relevant: Mapping[str, int]  # externalId -> grade


def load_relevance(path: Path = RELEVANCE_FILE, split: str | None = None) -> list[Judged]:
    """The judged queries; of one split only when `split` is given (the long set's)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    return [
        Judged(entry["query"], entry["relevant"])
        for entry in document["queries"]
        if split is None or entry.get("split") == split
    ]


def long_catalog_items(path: Path = LONG_RELEVANCE_FILE) -> list[CatalogItem]:
    """The long set's documents as published help articles, ids 1, 2, ... in file order."""
    document = json.loads(path.read_text(encoding="utf-8"))
    items = []
    for number, entry in enumerate(document["documents"], start=1):
        record = CatalogRecord.model_validate(
            {
                "externalId": entry["externalId"],
                "itemType": ItemType.HELP_ARTICLE.value,
                "title": entry["title"],
                "summary": "",
                "body": entry["body"],
                "category": "Python documentation",
                "url": f"https://docs.example.com/{entry['externalId']}",
                "published": True,
            }
        )
        items.append(catalog_item(number, record))
    return items


def long_index(passages: Passages = DEFAULT_PASSAGES) -> tuple[IndexArtifact, list[str]]:
    """The long set indexed as the indexer would, with `passages`; vectors cached under
    .local/cache per passage setting. Returns the artifact and each position's externalId."""
    from psap.resource_center.engine.builder import build_artifact  # noqa: PLC0415
    from psap.resource_center.engine.encoder import document_encoder  # noqa: PLC0415

    items = long_catalog_items()
    cache_file = LONG_CACHE_FOLDER / (
        f"long-relevance-{passages.tokens}-{passages.overlap}-{passages.title_tokens}.npz"
    )
    try:
        cached = [from_bytes(cache_file.read_bytes())]
    except (OSError, ValueError, KeyError):
        cached = []
    artifact, stats = build_artifact(
        items, 1, "relevance", encoder=document_encoder(), reuse=cached, passages=passages
    )
    if stats.embedded:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        cache_file.write_bytes(to_bytes(artifact))
    by_id = {item.id: item.record.external_id for item in items}
    return artifact, [by_id[int(item_id)] for item_id in artifact.ids]


def ndcg(ranked: Sequence[str], relevant: Mapping[str, int], cutoff: int = CUTOFF) -> float:
    def gain(grade: int) -> float:
        return float(2**grade - 1)

    found = sum(
        gain(relevant.get(item, 0)) / math.log2(rank + 2)
        for rank, item in enumerate(ranked[:cutoff])
    )
    ideal_grades = sorted(relevant.values(), reverse=True)[:cutoff]
    ideal = sum(gain(grade) / math.log2(rank + 2) for rank, grade in enumerate(ideal_grades))
    return found / ideal if ideal > 0 else 0.0


type Ranker = Callable[[SearchIndex, str], Ranking]


def rankers(encode: Callable[[str], Vector], fusions: Sequence[Fusion] = ()) -> dict[str, Ranker]:
    """keyword, semantic and the two default fusions, as the search function runs them
    (every item type visible, no category filter); plus one ranker per extra fusion, named
    "hybrid <its description>". Query vectors are computed once per text."""
    encode = cache(encode)

    def allowed(index: SearchIndex) -> Mask:
        return index.allowed(frozenset(ItemType), None)

    def keyword(index: SearchIndex, text: str) -> Ranking:
        return index.keyword_ranking(query_terms(text), allowed(index))

    def semantic(index: SearchIndex, text: str) -> Ranking:
        return index.semantic_ranking(encode(text), allowed(index))

    def hybrid(method: FusionMethod | Fusion) -> Ranker:
        def rank(index: SearchIndex, text: str) -> Ranking:
            return fuse(method, keyword(index, text), semantic(index, text))

        return rank

    return {
        "keyword": keyword,
        "semantic": semantic,
        "hybrid min-max": hybrid(FusionMethod.MIN_MAX),
        "hybrid rrf": hybrid(FusionMethod.RRF),
        **{f"hybrid {fusion.describe()}": hybrid(fusion) for fusion in fusions},
    }


def mean_ndcg(
    index: SearchIndex,
    external_ids: Sequence[str],
    ranker: Ranker,
    *,
    judged: Sequence[Judged],
) -> float:
    """external_ids[position] is the externalId of the index's document at that position."""
    scores = [
        ndcg([external_ids[position] for position, _ in ranker(index, entry.query)], entry.relevant)
        for entry in judged
    ]
    return sum(scores) / len(scores)
