"""The resource-center table: the platform catalog, the index pointer and tenant state.

One module per concern, all re-exported here (the public import path): keys, items (one
catalog item at a time), batches (an import's page, seeding), search_index (the index
pointer) and tenant_state (licenses and imports).

Layout (pk / sk):

  CATALOG                 / ITEM#{id:012d}     a catalog item (platform-wide: no tenant owns it)
  CATALOG#XID#{externalId} / XID               guards externalId uniqueness -> item id
  SEQ#RC_ITEM             / SEQ                catalog id sequence
  INDEX                   / CURRENT            the search index artifact in use (version, key)
  SEQ#RC_INDEX            / SEQ                index version sequence
  T#{t}#RC                / LICENSE#{name}     a license the tenant holds (when granted)
  T#{t}#RC                / LICENSES           every license name the tenant holds (a set)
  T#{t}#RC                / IMPORT#{id:012d}   a catalog item the tenant imported, at a version

The catalog is shared by every tenant, so its keys begin with CATALOG; everything that
belongs to a tenant begins with the tenant. The search request reads only tenant state here
(a GetItem of the tenant's LICENSES item, one BatchGetItem of the page's imports, and a GetItem
of the index pointer at most every INDEX_REFRESH_SECONDS): a constant number of reads however
large the table grows. Granting or revoking writes the LICENSE# item and the LICENSES set in
one transaction, so the set never disagrees with the grants. The catalog partition is read
whole only by the indexer, off the request path.
"""

from psap.resource_center.store.batches import bulk_create, upsert_records
from psap.resource_center.store.items import (
    Change,
    Upserted,
    catalog_items,
    find_item_id,
    get_item,
    set_published,
    upsert_record,
)
from psap.resource_center.store.keys import (
    CATALOG_PK,
    external_id_key,
    import_key,
    item_key,
    license_key,
    licenses_key,
    tenant_pk,
)
from psap.resource_center.store.search_index import (
    IndexPointer,
    index_pointer,
    next_index_version,
    publish_index,
)
from psap.resource_center.store.tenant_state import (
    grant_license,
    imported_versions,
    record_import,
    revoke_license,
    tenant_licenses,
)

__all__ = [
    "CATALOG_PK",
    "Change",
    "IndexPointer",
    "Upserted",
    "bulk_create",
    "catalog_items",
    "external_id_key",
    "find_item_id",
    "get_item",
    "grant_license",
    "import_key",
    "imported_versions",
    "index_pointer",
    "item_key",
    "license_key",
    "licenses_key",
    "next_index_version",
    "publish_index",
    "record_import",
    "revoke_license",
    "set_published",
    "tenant_licenses",
    "tenant_pk",
    "upsert_record",
    "upsert_records",
]
