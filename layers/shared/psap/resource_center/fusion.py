"""Fusing the keyword and the semantic ranking into one (pure Python: at most ~200
candidates, so a dict beats array set-up).

- min-max (the default, chosen by measurement on tests/data/resource_center_relevance.json):
  each ranker's scores over its own candidates are scaled to [0, 1], then averaged with equal
  weights; a candidate missing from one list scores 0 there. This is OpenSearch's default
  hybrid normalization (min_max + arithmetic_mean).
- rrf: Reciprocal Rank Fusion, sum of 1 / (k + rank) with k = 60 (Cormack et al. 2009).

A ranking is a list of (document, score), best first. Ties break on the document number so
the order is deterministic.
"""

from collections.abc import Sequence
from enum import StrEnum

type Ranking = Sequence[tuple[int, float]]

RRF_K = 60


class FusionMethod(StrEnum):
    MIN_MAX = "min-max"
    RRF = "rrf"


def _ordered(scores: dict[int, float]) -> list[tuple[int, float]]:
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))


def min_max_normalize(ranking: Ranking) -> dict[int, float]:
    """Scales scores to [0, 1]. When every score is equal, each gets 1: they all matched."""
    if not ranking:
        return {}
    values = [score for _, score in ranking]
    low, high = min(values), max(values)
    if high == low:
        return {document: 1.0 for document, _ in ranking}
    return {document: (score - low) / (high - low) for document, score in ranking}


def min_max_fusion(
    keyword: Ranking, semantic: Ranking, keyword_weight: float = 0.5
) -> list[tuple[int, float]]:
    keyword_scores = min_max_normalize(keyword)
    semantic_scores = min_max_normalize(semantic)
    semantic_weight = 1.0 - keyword_weight
    fused = {
        document: keyword_weight * keyword_scores.get(document, 0.0)
        + semantic_weight * semantic_scores.get(document, 0.0)
        for document in keyword_scores.keys() | semantic_scores.keys()
    }
    return _ordered(fused)


def reciprocal_rank_fusion(
    keyword: Ranking, semantic: Ranking, k: int = RRF_K
) -> list[tuple[int, float]]:
    fused: dict[int, float] = {}
    for ranking in (keyword, semantic):
        for rank, (document, _) in enumerate(ranking, start=1):
            fused[document] = fused.get(document, 0.0) + 1.0 / (k + rank)
    return _ordered(fused)


def fuse(method: FusionMethod, keyword: Ranking, semantic: Ranking) -> list[tuple[int, float]]:
    if method is FusionMethod.RRF:
        return reciprocal_rank_fusion(keyword, semantic)
    return min_max_fusion(keyword, semantic)
