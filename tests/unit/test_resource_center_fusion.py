"""Fusion of the keyword and semantic rankings (min-max with equal weights over the
top of each ranker, the default; Reciprocal Rank Fusion with k = 60 as the option)."""

import pytest

from psap.resource_center.fusion import (
    RRF_K,
    Fusion,
    FusionMethod,
    fuse,
    fusion_from_environment,
    min_max_fusion,
    min_max_normalize,
    reciprocal_rank_fusion,
)


def test_min_max_normalization_maps_each_rankers_best_to_1_and_worst_to_0() -> None:
    assert min_max_normalize([(7, 12.0), (3, 8.0), (9, 4.0)]) == {7: 1.0, 3: 0.5, 9: 0.0}


def test_min_max_normalization_of_equal_scores_gives_every_candidate_1() -> None:
    assert min_max_normalize([(1, 0.4), (2, 0.4)]) == {1: 1.0, 2: 1.0}
    assert min_max_normalize([]) == {}


def test_min_max_fusion_weighs_both_rankers_equally() -> None:
    # Given a document best by keywords only and one best by meaning only
    keyword = [(1, 10.0), (2, 5.0), (3, 0.0)]
    semantic = [(2, 0.9), (3, 0.6), (1, 0.3)]
    # When fused
    fused = dict(min_max_fusion(keyword, semantic))
    # Then each score is the mean of the two normalized scores
    assert fused[1] == pytest.approx(0.5 * 1.0 + 0.5 * 0.0)
    assert fused[2] == pytest.approx(0.5 * 0.5 + 0.5 * 1.0)
    assert fused[3] == pytest.approx(0.5 * 0.0 + 0.5 * 0.5)


def test_min_max_fusion_scores_a_candidate_missing_from_one_ranker_as_0_there() -> None:
    fused = min_max_fusion([(1, 3.0), (2, 1.0)], [(3, 0.8), (1, 0.4)])
    assert dict(fused) == pytest.approx({1: 0.5, 2: 0.0, 3: 0.5})
    # Ties break on the document number: the order is deterministic.
    assert [document for document, _ in fused] == [1, 3, 2]


def test_a_candidate_found_by_both_rankers_beats_one_found_by_either_alone() -> None:
    keyword = [(1, 9.0), (2, 8.0), (4, 1.0)]
    semantic = [(3, 0.9), (2, 0.85), (5, 0.2)]
    assert fuse(FusionMethod.MIN_MAX, keyword, semantic)[0][0] == 2
    assert fuse(FusionMethod.RRF, keyword, semantic)[0][0] == 2


def test_rrf_sums_one_over_k_plus_rank_with_k_60() -> None:
    assert RRF_K == 60
    fused = dict(reciprocal_rank_fusion([(1, 99.0), (2, 1.0)], [(2, 0.5)]))
    assert fused[1] == pytest.approx(1 / 61)
    assert fused[2] == pytest.approx(1 / 62 + 1 / 61)


def test_rrf_ignores_score_magnitudes() -> None:
    near = reciprocal_rank_fusion([(1, 100.0), (2, 99.9)], [])
    far = reciprocal_rank_fusion([(1, 100.0), (2, 0.1)], [])
    assert near == far


def test_fusing_nothing_gives_nothing() -> None:
    assert fuse(FusionMethod.MIN_MAX, [], []) == []
    assert fuse(FusionMethod.RRF, [], []) == []


def test_fusion_defaults_to_min_max_with_equal_weights() -> None:
    assert fusion_from_environment({}) == Fusion(FusionMethod.MIN_MAX, 0.5, RRF_K)


def test_fusion_method_and_weight_come_from_the_environment() -> None:
    # Given a keyword-heavy min-max fusion configured
    fusion = fusion_from_environment({"SEARCH_FUSION": "min-max", "SEARCH_KEYWORD_WEIGHT": "0.8"})
    keyword = [(1, 10.0), (2, 0.0)]
    semantic = [(2, 0.9), (1, 0.5)]
    # Then the keyword ranker's favourite wins, where equal weights would tie
    assert fusion.keyword_weight == 0.8
    assert fuse(fusion, keyword, semantic)[0][0] == 1
    assert fuse(Fusion(keyword_weight=0.2), keyword, semantic)[0][0] == 2
    rrf = fusion_from_environment({"SEARCH_FUSION": "rrf", "SEARCH_RRF_K": "10"})
    assert (rrf.method, rrf.rrf_k) == (FusionMethod.RRF, 10)
    assert fuse(rrf, keyword, semantic) == reciprocal_rank_fusion(keyword, semantic, k=10)


@pytest.mark.parametrize(
    "environment",
    [
        {"SEARCH_FUSION": "linear"},
        {"SEARCH_KEYWORD_WEIGHT": "1.5"},
        {"SEARCH_KEYWORD_WEIGHT": "half"},
        {"SEARCH_RRF_K": "0"},
    ],
)
def test_a_bad_fusion_setting_is_refused_at_start_not_ignored(environment: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="SEARCH_"):
        fusion_from_environment(environment)
