"""Resource center: a platform-wide catalog of coaching content and help articles, the
tenants' licenses and imports, and hybrid (keyword + semantic) search over the catalog.

Everything directly in this package is light (pydantic, botocore): the admin CLI and any
function may import it. The search engine (numpy, onnxruntime, tokenizers, bm25s) lives in
`psap.resource_center.engine`, which only the search and indexer functions import; its
dependencies ship in their own layer (layers/search).
"""
