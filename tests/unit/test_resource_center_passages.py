"""Long documents are embedded whole: the body is cut into overlapping windows,
each led by the title, and a document scores by its best passage."""

import itertools

import numpy as np
import pytest

from psap.resource_center.engine.builder import build_artifact, embedding_document
from psap.resource_center.engine.encoder import Passages, document_encoder, query_encoder
from psap.resource_center.engine.index import PassageScore, SearchIndex
from psap.resource_center.models import CatalogItem, CatalogRecord, ItemType

CLS, SEP = 101, 102


def record(title: str, body: str, summary: str = "") -> CatalogRecord:
    return CatalogRecord.model_validate(
        {
            "externalId": title.lower().replace(" ", "-"),
            "itemType": "HELP_ARTICLE",
            "title": title,
            "summary": summary,
            "body": body,
            "category": "Reference",
            "url": "https://resources.example.com/x",
            "published": True,
        }
    )


def catalog_item(item_id: int, title: str, body: str) -> CatalogItem:
    entry = record(title, body)
    return CatalogItem(
        id=item_id,
        version=1,
        content_hash=entry.content_hash(),
        record=entry,
        created_at="2026-01-15T08:30:00.000Z",
        updated_at="2026-01-15T08:30:00.000Z",
    )


def test_windows_cover_every_body_token_with_the_configured_overlap() -> None:
    passages = Passages(tokens=16, overlap=4, title_tokens=3, limit=100)
    title, body = [7, 8, 9, 10, 11], list(range(1000, 1040))
    windows = passages.windows(title, body, CLS, sep=SEP)
    room = 16 - 1 - 3 - 1  # [CLS], the title cut to 3 tokens, [SEP]
    assert all(len(window) <= 16 for window in windows)
    assert all(window[:4] == [CLS, 7, 8, 9] and window[-1] == SEP for window in windows)
    texts = [window[4:-1] for window in windows]
    assert sorted({token for text in texts for token in text}) == body
    for earlier, later in itertools.pairwise(texts):
        assert earlier[-4:] == later[:4]  # consecutive windows share `overlap` tokens
    assert len(texts[0]) == room


def test_an_empty_body_is_one_passage_and_a_huge_one_stops_at_the_limit() -> None:
    passages = Passages(tokens=16, overlap=4, title_tokens=3, limit=5)
    assert passages.windows([7], [], CLS, sep=SEP) == [[CLS, 7, SEP]]
    assert len(passages.windows([7], list(range(10_000)), CLS, sep=SEP)) == 5


def test_an_overlap_that_leaves_no_room_is_refused() -> None:
    with pytest.raises(ValueError, match="overlap"):
        Passages(tokens=16, overlap=12, title_tokens=3)


def test_a_summary_the_body_already_contains_is_not_embedded_twice() -> None:
    opening = "Press Rebid to refresh the caller's location."
    repeated = record("Rebid", f"{opening} It takes a few seconds.", summary=opening)
    distinct = record("Rebid", "It takes a few seconds.", summary=opening)
    assert embedding_document(repeated) == ("Rebid", f"{opening} It takes a few seconds.")
    assert embedding_document(distinct) == ("Rebid", f"{opening}\nIt takes a few seconds.")


FILLER = (
    "The county maintains its radio consoles on a quarterly schedule. Technicians check the "
    "backup power supply, clean the headset jacks and replace worn foot pedals. "
)


def test_a_query_answered_only_at_the_end_of_a_long_document_finds_it() -> None:
    # Given a long document whose last paragraph alone is about chest compressions (beyond
    # the first 128 tokens, which is all a truncating encoder would see), and a short
    # document about something else
    answer = "To coach CPR, tell the caller to push hard and fast in the center of the chest."
    long_item = catalog_item(1, "Console maintenance handbook", FILLER * 12 + answer)
    other = catalog_item(2, "Requesting a tow truck", "Call the rotation tow company on duty.")
    artifact, _ = build_artifact([long_item, other], 1, "t", encoder=document_encoder())
    assert artifact.passage_starts[1] - artifact.passage_starts[0] > 2  # several passages
    # When the semantic ranker looks for it
    index = SearchIndex(artifact)
    vector = query_encoder().encode_query("how to coach chest compressions for CPR")
    allowed = index.allowed(frozenset(ItemType), None)
    best = index.semantic_scores(vector)
    first_only = SearchIndex(artifact, PassageScore.FIRST).semantic_scores(vector)
    # Then its best passage matches far better than its opening does
    assert best[0] > first_only[0] + 0.15
    assert index.semantic_ranking(vector, allowed)[0][0] == 0
    assert np.isclose(best[1], first_only[1])  # a one-passage document: the same score
