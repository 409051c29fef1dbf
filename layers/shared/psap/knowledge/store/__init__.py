"""Knowledge entries in the knowledge table, on the storage kit, as typed records.

One module per concern, all re-exported here (the public import path): keys, records,
sequences, listing, entries, and versions (versions, edits and cards).

Layout (every key begins with the tenant, except the global id sequences):

  T#{t}#K#{id}       / ENTRY        the entry: metadata, latest and published version
  T#{t}#K#{id}       / V#{n:010d}   an immutable version (see "versions, edits and cards")
  T#{t}#K#{id}       / EDIT#{s}     the service-side edit of a service-owned section
  T#{t}#K#{id}       / CARD         the knowledge card: digest status and section digests
  T#{t}#XID#{p}#{x}  / XID          guards externalId uniqueness per (tenant, provider)
  T#{t}#KL#{scope}   / #COUNT       how many listed entries the scope holds
  T#{t}#KL#{scope}   / {id:019d}    a listing pointer (keys only), sorted by id
  SEQ#KNOWLEDGE      / SEQ          the id sequence (ids are unique across tenants)
  SEQ#KNOWLEDGE_VERSION / SEQ       the versionId sequence

A listed entry (source API_IMPORT, not deleted) has one pointer in each of four scopes:
ALL, its provider, its type, and provider+type, so any combination of the two filters is one
Query. Pointers and counters (psap.storage.listing) change in the same transaction as the
entry, so totals are exact and a list read right after a write sees it (strongly consistent).

This package is the only one that spells the items' attribute names: it hands the logic
records (psap.knowledge.records) and takes them back.
"""

from psap.knowledge.store.entries import (
    bulk_load_entries,
    create_entry,
    create_with_version,
    delete_entry,
    entry_description,
    find_by_external_id,
    read_entry,
    resolve_external_ids,
)
from psap.knowledge.store.keys import (
    entry_key,
    entry_pk,
    entry_scopes,
    external_id_key,
    listing_pk,
    listing_scope,
)
from psap.knowledge.store.listing import (
    _COUNTER_SK,
    _FIRST_POINTER_SK,
    _SUMMARY_ATTRIBUTES,
    _SUMMARY_NAMES,
    count_listed,
    list_entries,
    list_entry_records,
    listing_writes,
)
from psap.knowledge.store.records import (
    EntryDescription,
    NewEntry,
    as_stored,
    card_of,
    edit_of,
    entry_of,
    new_version,
    summary_dto,
    summary_fields,
    version_attributes,
    version_of,
)
from psap.knowledge.store.sequences import (
    next_knowledge_id,
    next_version_id,
)
from psap.knowledge.store.versions import (
    INLINE_DOCUMENT_BYTES,
    UnreadableDocument,
    WriteRaced,
    append_version,
    card_key,
    card_pending_write,
    complete_card,
    document_object_key,
    edit_key,
    load_document,
    mark_card_pending,
    read_card,
    read_card_record,
    read_edit_items,
    read_edits,
    read_version,
    read_version_item,
    set_published_version,
    store_document,
    version_key,
    version_put,
    write_edit,
    write_version,
)

__all__ = [
    "INLINE_DOCUMENT_BYTES",
    "_COUNTER_SK",
    "_FIRST_POINTER_SK",
    "_SUMMARY_ATTRIBUTES",
    "_SUMMARY_NAMES",
    "EntryDescription",
    "NewEntry",
    "UnreadableDocument",
    "WriteRaced",
    "append_version",
    "as_stored",
    "bulk_load_entries",
    "card_key",
    "card_of",
    "card_pending_write",
    "complete_card",
    "count_listed",
    "create_entry",
    "create_with_version",
    "delete_entry",
    "document_object_key",
    "edit_key",
    "edit_of",
    "entry_description",
    "entry_key",
    "entry_of",
    "entry_pk",
    "entry_scopes",
    "external_id_key",
    "find_by_external_id",
    "list_entries",
    "list_entry_records",
    "listing_pk",
    "listing_scope",
    "listing_writes",
    "load_document",
    "mark_card_pending",
    "new_version",
    "next_knowledge_id",
    "next_version_id",
    "read_card",
    "read_card_record",
    "read_edit_items",
    "read_edits",
    "read_entry",
    "read_version",
    "read_version_item",
    "resolve_external_ids",
    "set_published_version",
    "store_document",
    "summary_dto",
    "summary_fields",
    "version_attributes",
    "version_key",
    "version_of",
    "version_put",
    "write_edit",
    "write_version",
]
