"""The labeled relevance set (tests/data/resource_center_relevance.json) over the demo
catalog: hybrid search must rank at least as well as either ranker alone, and the
default fusion must be the better of the two measured."""

import json
from functools import cache

import pytest

from local.demo_resource_center import catalog_records, demo_index_in_memory
from psap.resource_center.engine.encoder import query_encoder
from psap.resource_center.engine.index import SearchIndex
from psap.resource_center.search import FUSION
from tools.search_relevance import (
    LONG_RELEVANCE_FILE,
    RELEVANCE_FILE,
    load_relevance,
    long_catalog_items,
    mean_ndcg,
    ndcg,
    rankers,
)


@cache
def scores() -> dict[str, float]:
    """nDCG@10 of every ranker; the demo index is built once per session (and its vectors
    come from the local stack's cache when it exists)."""
    artifact, external_ids = demo_index_in_memory()
    index = SearchIndex(artifact)
    judged = load_relevance()
    return {
        name: mean_ndcg(index, external_ids, ranker, judged=judged)
        for name, ranker in rankers(query_encoder().encode_query).items()
    }


def test_the_relevance_set_is_substantial_and_names_only_catalog_items() -> None:
    document = json.loads(RELEVANCE_FILE.read_text())
    judged = load_relevance()
    published = {record["externalId"] for record in catalog_records() if record["published"]}
    assert len(judged) >= 50
    assert document["description"]
    for entry in judged:
        assert entry.relevant, entry.query
        assert set(entry.relevant) <= published, entry.query
        assert set(entry.relevant.values()) <= {1, 2}


def test_ndcg_is_1_for_the_ideal_ranking_and_lower_otherwise() -> None:
    relevant = {"a": 2, "b": 1}
    assert ndcg(["a", "b", "x"], relevant) == pytest.approx(1.0)
    assert ndcg(["b", "a"], relevant) < 1.0
    assert ndcg(["x", "y"], relevant) == 0.0


def test_hybrid_is_at_least_as_good_as_keyword_alone() -> None:
    measured = scores()
    assert measured["hybrid min-max"] >= measured["keyword"]


def test_hybrid_is_at_least_as_good_as_semantic_alone() -> None:
    measured = scores()
    assert measured["hybrid min-max"] >= measured["semantic"]


def test_the_default_fusion_is_the_better_one_on_the_labeled_set() -> None:
    measured = scores()
    assert measured[f"hybrid {FUSION.method.value}"] == max(
        measured["hybrid min-max"], measured["hybrid rrf"]
    )


def test_the_long_document_set_has_long_documents_and_disjoint_dev_and_test_splits() -> None:
    # Tuning looks at dev only; test is reported, never tuned on (make bench prints both).
    document = json.loads(LONG_RELEVANCE_FILE.read_text())
    items = long_catalog_items()
    external_ids = {entry.record.external_id for entry in items}
    words = sorted(len(entry.record.body.split()) for entry in items)
    assert len(items) == len(external_ids) >= 150
    assert words[len(words) // 2] >= 200  # the median document is long (beyond 128 tokens)
    assert "PSF" in document["license"] and document["description"]
    dev, test = (load_relevance(LONG_RELEVANCE_FILE, split) for split in ("dev", "test"))
    assert len(dev) >= 40 and len(test) >= 40
    assert not {entry.query for entry in dev} & {entry.query for entry in test}
    assert len(dev) + len(test) == len(document["queries"])
    for entry in dev + test:
        assert entry.relevant and set(entry.relevant) <= external_ids, entry.query
        assert set(entry.relevant.values()) <= {1, 2}
