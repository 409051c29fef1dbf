"""The index artifact and its build: round trip through bytes, display fields per document,
filters, and re-embedding only changed documents."""

from collections.abc import Sequence

import numpy as np

from psap.resource_center.engine.artifact import from_bytes, to_bytes
from psap.resource_center.engine.builder import build_artifact
from psap.resource_center.engine.encoder import DEFAULT_PASSAGES, DIMENSIONS, Passages, Vectors
from psap.resource_center.engine.index import SearchIndex
from psap.resource_center.engine.text import query_terms
from psap.resource_center.models import CatalogItem, CatalogRecord, ItemType


class CountingEncoder:
    """Stands in for the model: a vector per 20 characters of text (a passage), and a record
    of the documents embedded."""

    def __init__(self) -> None:
        self.embedded: list[tuple[str, str]] = []

    def encode_passages(
        self, documents: Sequence[tuple[str, str]], passages: Passages = DEFAULT_PASSAGES
    ) -> list[Vectors]:
        self.embedded.extend(documents)
        result = []
        for title, body in documents:
            chunks = [body[start : start + 20] for start in range(0, max(len(body), 1), 20)]
            vectors = np.zeros((len(chunks), DIMENSIONS), dtype=np.float32)
            for row, chunk in enumerate(chunks):
                vectors[row, hash((title, chunk)) % DIMENSIONS] = 1.0
            result.append(vectors)
        return result


def item(item_id: int, title: str, body: str, **fields: object) -> CatalogItem:
    record = CatalogRecord.model_validate(
        {
            "externalId": f"x-{item_id}",
            "itemType": fields.get("itemType", "HELP_ARTICLE"),
            "title": title,
            "summary": f"About {title.lower()}",
            "body": body,
            "category": fields.get("category", "CAD How-To"),
            "url": f"https://resources.example.com/{item_id}",
            "requiredLicenseName": fields.get("license"),
            "published": True,
        }
    )
    return CatalogItem(
        id=item_id,
        version=int(fields.get("version", 1)),  # type: ignore[call-overload]
        content_hash=record.content_hash(),
        record=record,
        created_at="2026-01-15T08:30:00.000Z",
        updated_at="2026-01-15T08:30:00.000Z",
    )


ITEMS = [
    item(3, "Rebid ALI", "Press Rebid to refresh the wireless location.", license="NG911"),
    item(1, "Merge incidents", "Merge duplicate incidents from the Incident menu."),
    item(
        2,
        "CPR coaching",
        "Compressions hard and fast.",
        itemType="COACHING_CONTENT",
        category="Protocol Refreshers",
        version=4,
    ),
]


def test_the_artifact_survives_a_round_trip_through_bytes() -> None:
    artifact, _ = build_artifact(ITEMS, 7, "2026-11-23T02:32:15.123Z", encoder=CountingEncoder())
    again = from_bytes(to_bytes(artifact))
    assert again.index_version == 7
    assert list(again.ids) == [1, 2, 3]  # by catalog id
    assert list(again.versions) == [1, 4, 1]
    assert again.categories == ("CAD How-To", "Protocol Refreshers")
    assert again.embeddings.dtype == np.float16  # half precision at rest
    np.testing.assert_allclose(again.embeddings, artifact.embeddings.astype(np.float16))
    shown = again.display(2)
    assert (shown.title, shown.required_license_name) == ("Rebid ALI", "NG911")
    assert shown.body == "Press Rebid to refresh the wireless location."


def test_an_unchanged_document_is_not_embedded_again() -> None:
    encoder = CountingEncoder()
    first, stats = build_artifact(ITEMS, 1, "t", encoder=encoder)
    assert (stats.embedded, stats.reused) == (3, 0)
    changed = [*ITEMS[:2], item(2, "CPR coaching", "Compressions at 100-120 a minute.")]
    encoder.embedded.clear()
    _, stats = build_artifact(changed, 2, "t", encoder=encoder, reuse=[first])
    assert (stats.documents, stats.embedded, stats.reused) == (3, 1, 2)
    assert encoder.embedded == [
        ("CPR coaching", "About cpr coaching\nCompressions at 100-120 a minute.")
    ]


def test_vectors_of_another_model_are_not_reused() -> None:
    first, _ = build_artifact(ITEMS, 1, "t", encoder=CountingEncoder())
    other = from_bytes(to_bytes(first))
    object.__setattr__(other, "model_id", "another-model")
    _, stats = build_artifact(ITEMS, 2, "t", encoder=CountingEncoder(), reuse=[other])
    assert stats.embedded == 3


def test_an_empty_catalog_builds_an_index_that_finds_nothing() -> None:
    artifact, stats = build_artifact([], 1, "t", encoder=CountingEncoder())
    index = SearchIndex(from_bytes(to_bytes(artifact)))
    assert stats.documents == 0
    everything = index.allowed(frozenset(ItemType), None)
    assert index.keyword_ranking(["rebid"], everything) == []
    assert index.semantic_ranking(np.ones(DIMENSIONS, dtype=np.float32), everything) == []


def test_filters_apply_before_ranking() -> None:
    artifact, _ = build_artifact(ITEMS, 1, "t", encoder=CountingEncoder())
    index = SearchIndex(artifact)
    terms = query_terms("rebid merge compressions")
    all_types = frozenset(ItemType)
    assert len(index.keyword_ranking(terms, index.allowed(all_types, None))) == 3
    help_only = index.allowed(frozenset({ItemType.HELP_ARTICLE}), None)
    assert {int(index.artifact.ids[p]) for p, _ in index.keyword_ranking(terms, help_only)} == {
        1,
        3,
    }
    protocols = index.allowed(all_types, "Protocol Refreshers")
    assert [int(index.artifact.ids[p]) for p, _ in index.keyword_ranking(terms, protocols)] == [2]
    assert not index.allowed(all_types, "No Such Category").any()


def test_a_keyword_hit_needs_a_query_term_in_the_document() -> None:
    artifact, _ = build_artifact(ITEMS, 1, "t", encoder=CountingEncoder())
    index = SearchIndex(artifact)
    everything = index.allowed(frozenset(ItemType), None)
    assert index.keyword_ranking(query_terms("helicopter"), everything) == []
    ranked = index.keyword_ranking(query_terms("duplicate incidents"), everything)
    assert [int(index.artifact.ids[p]) for p, _ in ranked] == [1]
    assert ranked[0][1] > 0


def test_numpy_bm25_scoring_equals_bm25s_own_scoring() -> None:
    # The search function scores bm25s' matrix itself (it never imports bm25s): same numbers.
    import bm25s

    from psap.resource_center.engine.builder import BM25_B, BM25_K1, BM25_METHOD, keyword_text
    from psap.resource_center.engine.text import keyword_tokens

    documents = sorted(ITEMS, key=lambda entry: entry.id)
    artifact, _ = build_artifact(ITEMS, 1, "t", encoder=CountingEncoder())
    index = SearchIndex(from_bytes(to_bytes(artifact)))
    reference = bm25s.BM25(k1=BM25_K1, b=BM25_B, method=BM25_METHOD)
    reference.index(
        keyword_tokens([keyword_text(entry.record) for entry in documents]), show_progress=False
    )
    for query in ("rebid wireless location", "merge duplicate incidents", "compressions"):
        terms = query_terms(query)
        expected = reference.get_scores([term for term in terms if term in reference.vocab_dict])
        np.testing.assert_allclose(index.keyword_scores(terms), expected, rtol=1e-6)


def test_the_stop_words_are_bm25s_english_list() -> None:
    import re

    import bm25s.stopwords

    from psap.resource_center.engine.text import STOPWORDS

    producible = {
        word for word in bm25s.stopwords.STOPWORDS_EN_PLUS if re.fullmatch(r"\w\w+", word)
    }
    assert producible == STOPWORDS
