"""Fusing the keyword and the semantic ranking into one (pure Python: at most ~200
candidates, so a dict beats array set-up).

- min-max (the default, chosen by measurement on tests/data/resource_center_relevance.json):
  each ranker's scores over its own candidates are scaled to [0, 1], then averaged with equal
  weights; a candidate missing from one list scores 0 there. This is OpenSearch's default
  hybrid normalization (min_max + arithmetic_mean).
- rrf: Reciprocal Rank Fusion, sum of 1 / (k + rank) with k = 60 (Cormack et al. 2009).

A ranking is a list of (document, score), best first. Ties break on the document number so
the order is deterministic.

Which fusion the search function runs is configuration (docs/search.md): SEARCH_FUSION
(`min-max` or `rrf`), SEARCH_KEYWORD_WEIGHT (min-max: the keyword ranker's weight, 0-1) and
SEARCH_RRF_K (rrf: k >= 1). A bad value stops the function at cold start, never silently
falls back.
"""

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

type Ranking = Sequence[tuple[int, float]]

RRF_K = 60
DEFAULT_KEYWORD_WEIGHT = 0.5


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


@dataclass(frozen=True)
class Fusion:
    method: FusionMethod = FusionMethod.MIN_MAX
    keyword_weight: float = DEFAULT_KEYWORD_WEIGHT  # min-max only
    rrf_k: int = RRF_K  # rrf only

    def __post_init__(self) -> None:
        if not 0.0 <= self.keyword_weight <= 1.0:
            raise ValueError(f"the keyword weight must be 0-1, not {self.keyword_weight}")
        if self.rrf_k < 1:
            raise ValueError(f"the RRF k must be 1 or more, not {self.rrf_k}")

    def describe(self) -> str:
        if self.method is FusionMethod.RRF:
            return f"rrf k={self.rrf_k}"
        return f"min-max keyword weight {self.keyword_weight:g}"


def fusion_from_environment(environment: Mapping[str, str] | None = None) -> Fusion:
    """The fusion configured for the search function; ValueError names the bad variable."""
    variables = os.environ if environment is None else environment
    method_text = variables.get("SEARCH_FUSION", FusionMethod.MIN_MAX.value)
    try:
        method = FusionMethod(method_text)
    except ValueError as error:
        allowed = ", ".join(kind.value for kind in FusionMethod)
        raise ValueError(f"SEARCH_FUSION must be one of {allowed}, not {method_text!r}") from error
    try:
        weight = float(variables.get("SEARCH_KEYWORD_WEIGHT", DEFAULT_KEYWORD_WEIGHT))
        k = int(variables.get("SEARCH_RRF_K", RRF_K))
        return Fusion(method=method, keyword_weight=weight, rrf_k=k)
    except ValueError as error:
        raise ValueError(f"SEARCH_KEYWORD_WEIGHT or SEARCH_RRF_K: {error}") from error


def fuse(
    method: FusionMethod | Fusion, keyword: Ranking, semantic: Ranking
) -> list[tuple[int, float]]:
    fusion = method if isinstance(method, Fusion) else Fusion(method=method)
    if fusion.method is FusionMethod.RRF:
        return reciprocal_rank_fusion(keyword, semantic, fusion.rrf_k)
    return min_max_fusion(keyword, semantic, fusion.keyword_weight)
