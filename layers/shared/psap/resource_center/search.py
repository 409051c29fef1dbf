"""Resource-center search (the search function's logic): hybrid ranking over the current
index, then the tenant's license and import status for the page's items.

Who sees what: a caller with Resource Center access (ADMIN or RESOURCE_CENTER_PUBLISH) sees
coaching content and help articles; any other partner credential sees help articles only.
The rule is applied as a filter before ranking, so hidden items never count in totalHits.
"""

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from psap.auth.permissions import Permission
from psap.config import search_index_bucket, settings
from psap.errors import StoreUnavailable
from psap.observability import logger
from psap.resource_center import store
from psap.resource_center.engine import artifact as artifacts
from psap.resource_center.engine.encoder import query_encoder
from psap.resource_center.engine.index import SearchIndex
from psap.resource_center.engine.text import query_terms, stem_words
from psap.resource_center.fusion import Fusion, fusion_from_environment
from psap.resource_center.models import (
    ImportStatus,
    ItemType,
    ResourceCenterResult,
    ResourceCenterSearchResponse,
)
from psap.resource_center.query import SearchQuery
from psap.resource_center.snippet import matched_snippet

RESOURCE_CENTER_ACCESS = frozenset({Permission.ADMIN, Permission.RESOURCE_CENTER_PUBLISH})
# From SEARCH_FUSION / SEARCH_KEYWORD_WEIGHT / SEARCH_RRF_K, read once at cold start (a bad
# value fails the init phase). Default min-max 0.5/0.5: make bench prints how it compares.
FUSION: Fusion = fusion_from_environment()


def refresh_seconds() -> float:
    """How long a warm container serves an index before it looks for a newer one."""
    return settings().index_refresh_seconds


@dataclass
class _Loaded:
    index: SearchIndex | None = None
    checked_at: float | None = None


_loaded = _Loaded()


def current_index(bucket: str) -> SearchIndex | None:
    """The index of this warm container, replaced when the pointer names a newer version.
    While the store cannot be read, an index already loaded keeps serving."""
    now = time.monotonic()
    if _loaded.checked_at is not None and now - _loaded.checked_at < refresh_seconds():
        return _loaded.index
    try:
        pointer = store.index_pointer()
        if pointer is not None and (
            _loaded.index is None or _loaded.index.version != pointer.version
        ):
            _loaded.index = SearchIndex(artifacts.load(bucket, pointer.key))
            logger.info("search index loaded", extra={"index_version": pointer.version})
    except StoreUnavailable:
        if _loaded.index is None:
            raise
        logger.warning("search index refresh failed; serving the loaded version")
    except ValueError:
        # An artifact of an older format (right after an upgrade, before the indexer built
        # the new one): keep what is loaded, or find nothing, rather than fail every search.
        logger.error("search index artifact unreadable; run resource-center reindex")
    _loaded.checked_at = now
    return _loaded.index


def license_cache_seconds() -> float:
    return settings().license_cache_seconds


# tenant id -> (read at, license names): a warm container reads a tenant's licenses at most
# once per LICENSE_CACHE_SECONDS. Bounded by the tenants one container serves.
_licenses: dict[int, tuple[float, frozenset[str]]] = {}


def tenant_licenses(tenant_id: int) -> frozenset[str]:
    now = time.monotonic()
    cached = _licenses.get(tenant_id)
    if cached is not None and now - cached[0] < license_cache_seconds():
        return cached[1]
    names = store.tenant_licenses(tenant_id)
    _licenses[tenant_id] = (now, names)
    return names


# One thread per warm container for the page's reads: they wait on DynamoDB while this thread
# builds the page's snippets (about as long), instead of one after the other.
_page_reads = ThreadPoolExecutor(max_workers=1, thread_name_prefix="page-reads")


def _page_statuses(tenant_id: int, item_ids: list[int]) -> tuple[frozenset[str], dict[int, int]]:
    """The tenant's licenses and the page's import statuses (one GetItem, or none while
    cached, and one BatchGetItem)."""
    return tenant_licenses(tenant_id), store.imported_versions(tenant_id, item_ids)


def forget_loaded_index() -> None:
    """Tests: behave like a fresh container."""
    _loaded.index = None
    _loaded.checked_at = None
    _licenses.clear()


def has_resource_center_access(permissions: frozenset[Permission]) -> bool:
    return bool(permissions & RESOURCE_CENTER_ACCESS)


def visible_item_types(
    permissions: frozenset[Permission], wanted: ItemType | None
) -> frozenset[ItemType]:
    visible = (
        frozenset(ItemType)
        if has_resource_center_access(permissions)
        else frozenset({ItemType.HELP_ARTICLE})
    )
    return visible & {wanted} if wanted is not None else visible


def import_status(imported_version: int | None, catalog_version: int) -> ImportStatus:
    if imported_version is None:
        return ImportStatus.NOT_IMPORTED
    if imported_version < catalog_version:
        return ImportStatus.UPDATE_AVAILABLE
    return ImportStatus.IMPORTED


def search_resource_center(
    tenant_id: int, permissions: frozenset[Permission], query: SearchQuery
) -> ResourceCenterSearchResponse:
    empty = ResourceCenterSearchResponse(
        results=[], total_hits=0, page=query.page, page_size=query.page_size
    )
    item_types = visible_item_types(permissions, query.item_type)
    index = current_index(search_index_bucket())
    if index is None or not item_types:
        return empty
    terms = query_terms(query.text)
    hits = index.search(
        terms,
        query_encoder().encode_query(query.text),
        index.allowed(item_types, query.category),
        method=FUSION,
    )
    page = hits.fused[query.offset : query.offset + query.page_size]
    if not page:
        return empty.model_copy(update={"total_hits": len(hits.fused)})
    artifact = index.artifact
    item_ids = [int(artifact.ids[position]) for position, _ in page]
    statuses = _page_reads.submit(_page_statuses, tenant_id, item_ids)
    keywords = frozenset(terms)
    shown = [artifact.display(position) for position, _ in page]
    snippets = [matched_snippet(item.body, keywords, stem_words) for item in shown]
    licenses, imported = statuses.result()  # a store error is raised here, as before
    results = [
        ResourceCenterResult(
            item_type=artifacts.ITEM_TYPES[int(artifact.item_types[position])],
            title=item.title,
            summary=item.summary,
            matched_snippet=snippet,
            category=item.category,
            thumbnail_url=item.thumbnail_url,
            required_license_name=item.required_license_name,
            url=item.url,
            id=item_id,
            licensed=item.required_license_name is None or item.required_license_name in licenses,
            import_status=import_status(imported.get(item_id), int(artifact.versions[position])),
        )
        for (position, _), item_id, item, snippet in zip(
            page, item_ids, shown, snippets, strict=True
        )
    ]
    return ResourceCenterSearchResponse(
        results=results, total_hits=len(hits.fused), page=query.page, page_size=query.page_size
    )
