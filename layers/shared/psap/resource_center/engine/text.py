"""Keyword text processing shared by the index, the query and the snippet: lower-cased
words of two or more characters (bm25s' pattern), English stop words removed, Snowball
(Porter 2) stems from PyStemmer.

Done here rather than with `bm25s.tokenize` so that the search function never imports bm25s
(about 80 ms of its cold start): the indexer builds the BM25 matrix with bm25s from these
tokens, and the search scores that matrix with numpy (psap.resource_center.engine.index).
"""

import re
from collections.abc import Sequence
from functools import cache

import Stemmer

WORD = re.compile(r"(?u)\b\w\w+\b")
# NLTK's English stop words (bm25s calls them "en_plus"), less the ones the word pattern can
# never produce (with an apostrophe or a single letter). A unit test keeps them in step.
_STOPWORD_TEXT = """
    about above after again against ain all am an and any are aren as at be because been
    before being below between both but by can couldn did didn do does doesn doing don down
    during each few for from further had hadn has hasn have haven having he her here hers
    herself him himself his how if in into is isn it its itself just ll ma me mightn more
    most mustn my myself needn no nor not now of off on once only or other our ours
    ourselves out over own re same shan she should shouldn so some such than that the their
    theirs them themselves then there these they this those through to too under until up ve
    very was wasn we were weren what when where which while who whom why will with won
    wouldn you your yours yourself yourselves
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


@cache
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def stem_words(words: Sequence[str]) -> list[str]:
    stems: list[str] = _stemmer().stemWords(list(words))
    return stems


def keyword_tokens(texts: Sequence[str]) -> list[list[str]]:
    return [
        stem_words([word for word in WORD.findall(text.lower()) if word not in STOPWORDS])
        for text in texts
    ]


def query_terms(text: str) -> list[str]:
    """The query's stems, in order, without repeats."""
    (tokens,) = keyword_tokens([text])
    return list(dict.fromkeys(tokens))
