"""A loaded index: the two rankers over one artifact, with filters applied before ranking
so that hidden or filtered-out documents never take a candidate slot or count as hits.

A document's semantic score is its best passage's cosine similarity to the query (MaxP):
a long document matches a query that one part of it answers. `make bench` prints the mean
of the passages and the first passage alone (what embedding a truncated text gives) beside.

The BM25 matrix was built by bm25s at index time (per term, each document's precomputed
BM25 term score, in CSC arrays); scoring a query is a sum over its terms' columns, done here
with numpy so that the search function does not import bm25s at all.
"""

from collections.abc import Collection
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from psap.resource_center.engine.artifact import ITEM_TYPES, IndexArtifact
from psap.resource_center.fusion import Fusion, FusionMethod, Ranking, fuse
from psap.resource_center.models import ItemType

CANDIDATES_PER_RANKER = 100
# Below this cosine similarity a document is not a semantic hit at all (measured on the
# relevance set: unrelated queries score under it, relevant items well above).
MIN_SEMANTIC_SIMILARITY = 0.25

type Mask = npt.NDArray[np.bool_]
type Vector = npt.NDArray[np.float32]


class PassageScore(StrEnum):
    BEST = "best"  # the default
    MEAN = "mean"
    FIRST = "first"


@dataclass(frozen=True)
class Hits:
    keyword: Ranking  # (position, BM25 score), best first
    semantic: Ranking  # (position, cosine), best first
    fused: Ranking  # (position, fused score), best first


def _top(scores: npt.NDArray[np.float32], allowed: Mask, floor: float, *, limit: int) -> Ranking:
    eligible = np.flatnonzero(allowed & (scores >= floor))
    if len(eligible) > limit:
        eligible = eligible[np.argpartition(-scores[eligible], limit - 1)[:limit]]
    # Stable on position for equal scores, so results never shuffle between calls.
    order = eligible[np.lexsort((eligible, -scores[eligible]))]
    return [(int(position), float(scores[position])) for position in order]


class SearchIndex:
    def __init__(
        self, artifact: IndexArtifact, passage_score: PassageScore = PassageScore.BEST
    ) -> None:
        self.artifact = artifact
        self.version = artifact.index_version
        self.passage_score = passage_score
        self._embeddings = np.ascontiguousarray(artifact.embeddings, dtype=np.float32)
        starts = artifact.passage_starts
        self._first_passages = np.asarray(starts[:-1], dtype=np.int64)
        self._passage_counts = np.diff(starts).astype(np.float32)
        self._category_codes = {name: code for code, name in enumerate(artifact.categories)}

    @property
    def size(self) -> int:
        return self.artifact.size

    def allowed(self, item_types: Collection[ItemType], category: str | None) -> Mask:
        codes = [ITEM_TYPES.index(item_type) for item_type in item_types]
        mask: Mask = np.isin(self.artifact.item_types, codes)
        if category is not None:
            code = self._category_codes.get(category)
            if code is None:
                return np.zeros(self.size, dtype=np.bool_)
            mask &= self.artifact.category_codes == code
        return mask

    def keyword_scores(self, terms: list[str]) -> npt.NDArray[np.float32]:
        """The BM25 score of every document for the query's terms (0 where none occurs)."""
        scores = np.zeros(self.size, dtype=np.float32)
        matrix = self.artifact.bm25
        if matrix is None:
            return scores
        for term in terms:
            column = matrix.vocabulary.get(term)
            if column is None:
                continue
            start, end = int(matrix.indptr[column]), int(matrix.indptr[column + 1])
            # A column names each document at most once, so a fancy-index add is exact.
            scores[matrix.indices[start:end]] += matrix.data[start:end]
        return scores

    def keyword_ranking(
        self, terms: list[str], allowed: Mask, limit: int = CANDIDATES_PER_RANKER
    ) -> Ranking:
        scores = self.keyword_scores(terms)
        # A BM25 score of 0 means no query term occurs: not a keyword hit.
        return _top(scores, allowed, float(np.nextafter(np.float32(0), np.float32(1))), limit=limit)

    def semantic_ranking(
        self,
        vector: Vector,
        allowed: Mask,
        limit: int = CANDIDATES_PER_RANKER,
        *,
        floor: float = MIN_SEMANTIC_SIMILARITY,
    ) -> Ranking:
        if self.size == 0:
            return []
        return _top(self.semantic_scores(vector), allowed, floor, limit=limit)

    def semantic_scores(self, vector: Vector) -> npt.NDArray[np.float32]:
        """Every document's similarity to the query, from its passages' similarities."""
        passages = self._embeddings @ vector
        if self.passage_score is PassageScore.FIRST:
            return passages[self._first_passages]
        if self.passage_score is PassageScore.MEAN:
            sums = np.add.reduceat(passages, self._first_passages)
            mean: npt.NDArray[np.float32] = (sums / self._passage_counts).astype(np.float32)
            return mean
        # Every document has at least one passage, so no reduceat segment is empty.
        best: npt.NDArray[np.float32] = np.maximum.reduceat(passages, self._first_passages)
        return best

    def search(
        self,
        terms: list[str],
        vector: Vector,
        allowed: Mask,
        *,
        method: FusionMethod | Fusion = FusionMethod.MIN_MAX,
    ) -> Hits:
        keyword = self.keyword_ranking(terms, allowed)
        semantic = self.semantic_ranking(vector, allowed)
        return Hits(keyword=keyword, semantic=semantic, fused=fuse(method, keyword, semantic))
