"""The labeled relevance set of resource-center search and its measure, nDCG@10.

tests/data/resource_center_relevance.json names, per query, the demo catalog items
(local/demo_resource_center.py) judged relevant: 2 answers the query, 1 is related. nDCG@10
uses gains 2^grade - 1 and a log2 rank discount, averaged over the queries. Shared by the
relevance test and `make bench`, so both measure the same thing.
"""

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from psap.resource_center.engine.index import Mask, SearchIndex, Vector
from psap.resource_center.engine.text import query_terms
from psap.resource_center.fusion import FusionMethod, Ranking, fuse
from psap.resource_center.models import ItemType

ROOT = Path(__file__).resolve().parent.parent

RELEVANCE_FILE = ROOT / "tests" / "data" / "resource_center_relevance.json"
CUTOFF = 10


@dataclass(frozen=True)
class Judged:
    query: str
    relevant: Mapping[str, int]  # externalId -> grade


def load_relevance(path: Path = RELEVANCE_FILE) -> list[Judged]:
    document = json.loads(path.read_text(encoding="utf-8"))
    return [Judged(entry["query"], entry["relevant"]) for entry in document["queries"]]


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


def rankers(encode: Callable[[str], Vector]) -> dict[str, Ranker]:
    """keyword, semantic and the two fusions, as the search function runs them (every item
    type visible, no category filter)."""

    def allowed(index: SearchIndex) -> Mask:
        return index.allowed(frozenset(ItemType), None)

    def keyword(index: SearchIndex, text: str) -> Ranking:
        return index.keyword_ranking(query_terms(text), allowed(index))

    def semantic(index: SearchIndex, text: str) -> Ranking:
        return index.semantic_ranking(encode(text), allowed(index))

    def hybrid(method: FusionMethod) -> Ranker:
        def rank(index: SearchIndex, text: str) -> Ranking:
            return fuse(method, keyword(index, text), semantic(index, text))

        return rank

    return {
        "keyword": keyword,
        "semantic": semantic,
        "hybrid min-max": hybrid(FusionMethod.MIN_MAX),
        "hybrid rrf": hybrid(FusionMethod.RRF),
    }


def mean_ndcg(
    index: SearchIndex,
    external_ids: Sequence[str],
    ranker: Ranker,
    judged: Sequence[Judged],
) -> float:
    """external_ids[position] is the externalId of the index's document at that position."""
    scores = [
        ndcg([external_ids[position] for position, _ in ranker(index, entry.query)], entry.relevant)
        for entry in judged
    ]
    return sum(scores) / len(scores)
