"""matchedSnippet: the best-matching passage of the body, query terms marked with
<mark>...</mark>, never more than 300 characters of text."""

from psap.resource_center.engine.text import query_terms, stem_words
from psap.resource_center.snippet import (
    ELLIPSIS,
    MARK_CLOSE,
    MARK_OPEN,
    MAX_SNIPPET_CHARACTERS,
    _matches,
    matched_snippet,
    visible_text,
)

FILLER = "The call-taker keeps a calm voice and documents each answer in the narrative. " * 8


def snippet(body: str, query: str, limit: int = MAX_SNIPPET_CHARACTERS) -> str:
    return matched_snippet(body, frozenset(query_terms(query)), stem_words, limit=limit)


def test_query_terms_are_marked_by_stem_not_by_exact_spelling() -> None:
    result = snippet("Is the patient breathing? Count breaths every minute.", "breathe")
    assert f"{MARK_OPEN}breathing{MARK_CLOSE}" in result
    assert f"{MARK_OPEN}breaths{MARK_CLOSE}" in result
    assert f"{MARK_OPEN}patient{MARK_CLOSE}" not in result
    assert f"{MARK_OPEN}Count{MARK_CLOSE}" not in result


def test_stop_words_of_the_query_are_not_marked() -> None:
    result = snippet("How to reset the password of the console.", "how do I reset the password")
    assert f"{MARK_OPEN}the{MARK_CLOSE}" not in result
    assert f"{MARK_OPEN}reset{MARK_CLOSE}" in result
    assert f"{MARK_OPEN}password{MARK_CLOSE}" in result


def test_the_snippet_never_shows_more_than_300_characters_of_text() -> None:
    body = FILLER + "Give naloxone for a suspected opioid overdose right away. " + FILLER
    result = snippet(body, "naloxone overdose")
    assert len(visible_text(result)) <= MAX_SNIPPET_CHARACTERS
    assert f"{MARK_OPEN}naloxone{MARK_CLOSE}" in result


def test_a_cut_is_shown_with_an_ellipsis_and_falls_between_words() -> None:
    body = FILLER + "Give naloxone for a suspected opioid overdose right away. " + FILLER
    text = visible_text(snippet(body, "naloxone"))
    assert text.startswith(ELLIPSIS) and text.endswith(ELLIPSIS)
    words = set(body.split())
    assert all(word in words for word in text.strip(ELLIPSIS).split())


def test_the_window_with_the_most_distinct_query_terms_wins() -> None:
    body = (
        "A tourniquet appears once here. "
        + FILLER
        + "Apply direct pressure, then a tourniquet above the bleeding wound. "
        + FILLER
    )
    result = snippet(body, "tourniquet bleeding pressure")
    assert f"{MARK_OPEN}pressure{MARK_CLOSE}" in result
    assert f"{MARK_OPEN}bleeding{MARK_CLOSE}" in result


def test_a_body_without_any_query_term_gives_its_opening() -> None:
    body = "Box breathing calms the body. " + FILLER
    result = snippet(body, "anxiety")
    assert MARK_OPEN not in result
    assert visible_text(result).startswith("Box breathing calms the body.")
    assert len(visible_text(result)) <= MAX_SNIPPET_CHARACTERS


def test_body_text_is_html_escaped_so_only_the_markers_are_markup() -> None:
    result = snippet("Choose ALI > Rebid <b>now</b> & wait.", "rebid")
    assert result == (
        f"Choose ALI &gt; {MARK_OPEN}Rebid{MARK_CLOSE} &lt;b&gt;now&lt;/b&gt; &amp; wait."
    )
    assert visible_text(result) == "Choose ALI > Rebid <b>now</b> & wait."


def test_whitespace_is_collapsed_and_a_short_body_is_shown_whole() -> None:
    assert (
        snippet("Press\n\n  Rebid   twice.", "rebid")
        == f"Press {MARK_OPEN}Rebid{MARK_CLOSE} twice."
    )


def test_an_empty_body_gives_an_empty_snippet() -> None:
    assert snippet("", "anything") == ""
    assert snippet("   ", "anything") == ""


def test_a_smaller_limit_is_respected() -> None:
    result = snippet(FILLER, "narrative", limit=80)
    assert len(visible_text(result)) <= 80
    assert MARK_OPEN in result


def test_a_match_near_the_end_shows_the_text_before_it_up_to_the_limit() -> None:
    body = FILLER + "Finally, confirm the callback number."
    text = visible_text(snippet(body, "callback"))
    assert text.endswith("Finally, confirm the callback number.")
    assert text.startswith(ELLIPSIS)
    assert MAX_SNIPPET_CHARACTERS - 20 <= len(text) <= MAX_SNIPPET_CHARACTERS


def test_the_fast_word_matching_marks_exactly_the_words_whose_stem_is_a_query_term() -> None:
    # Only words that begin like a query stem are stemmed (psap.resource_center.snippet):
    # compare with stemming every word, over long real texts and irregular stems.
    from psap.resource_center.engine.text import WORD
    from tools.search_relevance import long_catalog_items

    bodies = [entry.record.body for entry in long_catalog_items()[::4]]
    bodies.append("The patient is dying; lying down, tying a tourniquet. Skies, happily, only.")
    queries = [
        "die lie tie sky happy only",
        "exception handlers and finally clauses",
        "possibility of organizing relational activity",
        "generators yield values",
    ]
    for query in queries:
        terms = frozenset(query_terms(query))
        for body in bodies:
            text = " ".join(body.split())
            words = list(WORD.finditer(text))
            stems = stem_words([word.group().lower() for word in words])
            expected = [
                (word.start(), word.end(), stem)
                for word, stem in zip(words, stems, strict=True)
                if stem in terms
            ]
            found = [(m.start, m.end, m.term) for m in _matches(text, terms, stem_words)]
            assert found == expected, (query, text[:80])
