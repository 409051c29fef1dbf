"""The search engine: BM25 keywords (bm25s + PyStemmer) and MiniLM sentence embeddings
(onnxruntime + tokenizers), fused. Heavy imports: only the search and indexer functions
import this package; their layer (layers/search) carries its dependencies."""
