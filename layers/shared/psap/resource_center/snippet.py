"""`matchedSnippet`: the passage of an item's body that best matches the query.

The snippet is at most 300 characters of body text (an ellipsis at a cut end counts; the
markers and HTML escaping do not). Words whose stem is a query term are wrapped in
`<mark>` and `</mark>`, and everything else is HTML-escaped, so a client can insert the
snippet as HTML as it is, or strip the two tags for plain text. The chosen window holds the
most distinct query terms (then the most matches, then the earliest); a body that matches
no query term (a purely semantic hit) gives its opening instead.

Pure Python: the caller passes the stemmer, so this module stays free of the engine.
"""

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MARK_OPEN = "<mark>"
MARK_CLOSE = "</mark>"
MAX_SNIPPET_CHARACTERS = 300
ELLIPSIS = "…"
# Same words as the keyword index: two or more word characters (bm25s' default pattern).
WORD = re.compile(r"(?u)\b\w\w+\b")
_SPACES = re.compile(r"\s+")
# How far before the first match a window may start, to show the start of its sentence.
_LEAD_IN = 60

type StemWords = Callable[[Sequence[str]], Sequence[str]]


@dataclass(frozen=True)
class _Match:
    start: int
    end: int
    term: str


def _matches(text: str, terms: frozenset[str], stem_words: StemWords) -> list[_Match]:
    """The words whose stem is a query term. Fast: matching a page of 50 long bodies was
    most of a search's time."""
    lowered = text.lower()
    if len(lowered) != len(text):  # a letter whose lower case is longer: keep positions
        words = list(WORD.finditer(text))
        stems = stem_words([word.group().lower() for word in words])
        return [
            _Match(word.start(), word.end(), stem)
            for word, stem in zip(words, stems, strict=True)
            if stem in terms
        ]
    # A Snowball English stem is the word's start, but for its last letter (y -> i) and
    # three exceptions (dying, lying, tying -> die, lie, tie): so only words that begin
    # with a query stem less its last letter can match, and the regex engine finds those
    # without a Python loop over every word. Only they are stemmed.
    prefixes = {term[:-1] for term in terms} | {
        term[:-2] + "y" for term in terms if term.endswith("ie")
    }
    alternatives = "|".join(re.escape(prefix) for prefix in sorted(prefixes, key=len, reverse=True))
    candidates = [
        word
        for word in re.finditer(rf"(?u)\b(?:{alternatives})\w*", lowered)
        if word.end() - word.start() >= 2  # WORD's two characters
    ]
    distinct = list(dict.fromkeys(word.group() for word in candidates))
    stem_of = dict(zip(distinct, stem_words(distinct), strict=True))
    return [
        _Match(word.start(), word.end(), stem_of[word.group()])
        for word in candidates
        if stem_of[word.group()] in terms
    ]


def _window_start(text: str, first: _Match) -> int:
    """Starts at the sentence of the first match when it is near, else shortly before it."""
    earliest = max(0, first.start - _LEAD_IN)
    sentence = max(text.rfind(". ", earliest, first.start), text.rfind("\n", earliest, first.start))
    if sentence >= 0:
        return sentence + 2
    if earliest == 0:
        return 0
    space = text.find(" ", earliest, first.start)
    return space + 1 if space >= 0 else first.start


def _best_window(text: str, matches: list[_Match], limit: int) -> tuple[int, int]:
    best: tuple[int, int, int] | None = None  # (distinct terms, matches, -start)
    best_span = (0, min(len(text), limit))
    for index, first in enumerate(matches):
        start = _window_start(text, first)
        end = min(len(text), start + limit)
        inside = [match for match in matches[index:] if match.end <= end]
        score = (len({match.term for match in inside}), len(inside), -start)
        if best is None or score > best:
            best, best_span = score, (start, end)
    return _widen(text, *best_span, limit=limit)


def _widen(text: str, start: int, end: int, *, limit: int) -> tuple[int, int]:
    """A window that reaches the end of the body shows more of what comes before it."""
    if end - start >= limit - 1 or start == 0:
        return start, end
    earlier = max(0, end - limit + 1)  # room for the leading ellipsis
    if earlier > 0:
        space = text.find(" ", earlier, start)
        earlier = space + 1 if space >= 0 else start
    return earlier, end


def _trim(text: str, start: int, end: int, *, limit: int) -> tuple[int, int]:
    """Cuts at word boundaries, leaving room for the ellipses inside the limit."""
    room = limit - (1 if start > 0 else 0)
    end = min(end, start + room)
    if end < len(text):
        room -= 1
        end = min(end, start + room)
        space = text.rfind(" ", start, end + 1)
        if space > start:
            end = space
    return start, end


def _render(text: str, start: int, end: int, *, matches: list[_Match]) -> str:
    parts: list[str] = [ELLIPSIS] if start > 0 else []
    cursor = start
    for match in matches:
        if match.start < start or match.end > end:
            continue
        parts.append(html.escape(text[cursor : match.start], quote=False))
        parts.append(MARK_OPEN + html.escape(text[match.start : match.end], quote=False))
        parts.append(MARK_CLOSE)
        cursor = match.end
    parts.append(html.escape(text[cursor:end].rstrip(), quote=False))
    if end < len(text):
        parts.append(ELLIPSIS)
    return "".join(parts)


def matched_snippet(
    body: str,
    terms: frozenset[str],
    stem_words: StemWords,
    *,
    limit: int = MAX_SNIPPET_CHARACTERS,
) -> str:
    """`terms` are the query's stemmed keywords; `stem_words` stems lower-cased words the
    same way the keyword index does."""
    text = _SPACES.sub(" ", body).strip()
    if not text:
        return ""
    matches = _matches(text, terms, stem_words) if terms else []
    if matches:
        start, end = _best_window(text, matches, limit)
    else:
        start, end = 0, min(len(text), limit)
    start, end = _trim(text, start, end, limit=limit)
    return _render(text, start, end, matches=matches)


def visible_text(snippet: str) -> str:
    """The snippet as plain text: markers removed, escaping undone (tests, clients)."""
    return html.unescape(snippet.replace(MARK_OPEN, "").replace(MARK_CLOSE, ""))
