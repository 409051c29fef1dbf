"""Versions, edits and cards of an entry."""

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from psap.clock import format_timestamp
from psap.knowledge.records import (
    CardRecord,
    EditRecord,
    EntryChanges,
    KnowledgeEntry,
    KnowledgeVersion,
    StoredDocument,
    VersionRecord,
)
from psap.knowledge.store.keys import _table, entry_key, entry_pk
from psap.knowledge.store.records import (
    _document_attributes,
    as_stored,
    card_of,
    edit_of,
    entry_of,
    version_attributes,
    version_of,
)
from psap.storage import documents, listing
from psap.storage.attributes import Item, from_item, marshal, to_item
from psap.storage.aws_errors import ConditionFailed, translated
from psap.storage.documents import OverflowObject, PackedDocument, pack_document, unpack_document
from psap.storage.dynamodb import batch_get, dynamodb, read_item, transact_write
from psap.storage.queries import query_page


class WriteRaced(ConditionFailed):
    """The entry changed between the read and the conditional write: read again, retry."""


# A stored document that does not decode; the card worker catches it by this store's name.
UnreadableDocument = documents.UnreadableDocument


#
#   T#{t}#K#{id}          / V#{version:010d}  an immutable version: its document (zlib JSON)
#                                             inline, or in S3 with a pointer when large
#   T#{t}#K#{id}          / EDIT#{section}    the service-side edit of a service-owned section
#   T#{t}#K#{id}          / CARD              the knowledge card: digest status and digests
#   SEQ#KNOWLEDGE_VERSION / SEQ               version record ids (versionId), across tenants
#
# The entry item also holds latestVersion, latestVersionId, publishedVersion, apiControl and
# serviceEditSeq. Every write of a version or an edit is one transaction conditioned on the
# latestVersion and serviceEditSeq it read, so concurrent writers cannot both win: the loser
# reads again and retries (psap.storage.optimistic), and version numbers stay contiguous.

# Compressed documents up to this size stay in the version item (reads: one GetItem); larger
# ones go to S3. DynamoDB's item limit is 400 KB, and a transactional write costs 2 WCU per KB.
INLINE_DOCUMENT_BYTES = 64 * 1024
_VERSION_PREFIX = "V#"
_EDIT_PREFIX = "EDIT#"
_CARD_SK = "CARD"
_MOVED_ENTRY = (
    "latestVersion = :expected AND deleted = :no AND "
    "(attribute_not_exists(serviceEditSeq) OR serviceEditSeq = :seq)"
)


def version_key(
    tenant_id: int, knowledge_id: int, version: KnowledgeVersion | int
) -> dict[str, dict[str, str]]:
    return listing.key(entry_pk(tenant_id, knowledge_id), f"{_VERSION_PREFIX}{version:010d}")


def edit_key(tenant_id: int, knowledge_id: int, section: str) -> dict[str, dict[str, str]]:
    return listing.key(entry_pk(tenant_id, knowledge_id), f"{_EDIT_PREFIX}{section}")


def card_key(tenant_id: int, knowledge_id: int) -> dict[str, dict[str, str]]:
    return listing.key(entry_pk(tenant_id, knowledge_id), _CARD_SK)


def document_object_key(tenant_id: int, knowledge_id: int, name: str) -> str:
    return f"tenants/{tenant_id}/knowledge/{knowledge_id}/{name}.json.zlib"


def store_document(bucket: str, object_key: str, document: Mapping[str, Any]) -> StoredDocument:
    """Compresses a document; a large one is written to S3 now (psap.storage.documents)."""
    packed = pack_document(
        document,
        inline_bytes=INLINE_DOCUMENT_BYTES,
        overflow=OverflowObject(bucket, object_key, "application/zlib"),
    )
    return StoredDocument(packed.inline, packed.object_key, packed.raw_bytes, packed.stored_bytes)


def load_document(bucket: str, document: StoredDocument, what: str) -> dict[str, Any]:
    """A stored document, read from S3 when it is there; `what` names it in errors."""
    packed = PackedDocument(
        document.packed, document.object_key, document.raw_bytes, document.stored_bytes
    )
    return unpack_document(packed, bucket, what)


def version_put(
    tenant_id: int,
    knowledge_id: int,
    attributes: Mapping[str, Any],
) -> dict[str, Any]:
    """The transaction item that stores a version (never overwritten: versions are immutable)."""
    version = int(attributes["version"])
    return {
        "Put": {
            "TableName": _table(),
            "Item": {**version_key(tenant_id, knowledge_id, version), **to_item(attributes)},
            "ConditionExpression": "attribute_not_exists(pk)",
        }
    }


def card_pending_write(tenant_id: int, knowledge_id: int) -> dict[str, Any]:
    """Marks the card PENDING and bumps its generation: the digest worker completes only the
    generation it read, so a digest of older content never overwrites a newer request."""
    return {
        "Update": {
            "TableName": _table(),
            "Key": card_key(tenant_id, knowledge_id),
            "UpdateExpression": "SET processingStatus = :pending REMOVE processingReason "
            "ADD generation :one",
            "ExpressionAttributeValues": {":pending": {"S": "PENDING"}, ":one": {"N": "1"}},
        }
    }


def _set_clause(values: Mapping[str, Any]) -> tuple[str, dict[str, str], dict[str, Any]]:
    names = {f"#a{index}": name for index, name in enumerate(values)}
    attribute_values = {f":a{index}": marshal(value) for index, value in enumerate(values.values())}
    clause = ", ".join(f"#a{index} = :a{index}" for index in range(len(values)))
    return clause, names, attribute_values


def _moved_values(expected_version: int, expected_edit_seq: int) -> dict[str, Any]:
    return {
        ":expected": marshal(expected_version),
        ":seq": marshal(expected_edit_seq),
        ":no": {"BOOL": False},
    }


def write_version(
    tenant_id: int,
    knowledge_id: int,
    expected_version: int,
    *,
    expected_edit_seq: int,
    entry_changes: Mapping[str, Any],
    version_attributes: Mapping[str, Any],
) -> None:
    """Appends a version as attributes: the entry moves from `expected_version` (with no
    service-side edit since `expected_edit_seq`), the version is stored, the card asks for a
    digest. All or nothing; WriteRaced when another writer moved the entry first (or deleted
    it). append_version is the typed form."""
    clause, names, values = _set_clause(entry_changes)
    writes = [
        {
            "Update": {
                "TableName": _table(),
                "Key": entry_key(tenant_id, knowledge_id),
                "UpdateExpression": f"SET {clause}",
                "ConditionExpression": _MOVED_ENTRY,
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": values
                | _moved_values(expected_version, expected_edit_seq),
            }
        },
        version_put(tenant_id, knowledge_id, version_attributes),
        card_pending_write(tenant_id, knowledge_id),
    ]
    transact_write(writes, on_cancel=lambda codes: WriteRaced("knowledge entry moved"))


def append_version(tenant_id: int, entry: KnowledgeEntry, changes: EntryChanges) -> KnowledgeEntry:
    """Appends `changes.version` to the entry as read (see write_version); returns the entry
    as it now is."""
    version = changes.version
    updated: dict[str, Any] = {
        "latestVersion": version.version,
        "latestVersionId": version.version_id,
        "updatedAt": format_timestamp(version.created_at),
        "apiControl": dict(changes.api_control),
        "name": changes.name,
        "description": changes.description,
    }
    if changes.publish:
        updated["publishedVersion"] = version.version
    write_version(
        tenant_id,
        entry.id,
        entry.latest_version,
        expected_edit_seq=entry.service_edit_seq,
        entry_changes=updated,
        version_attributes=version_attributes(version),
    )
    return replace(
        entry,
        latest_version=version.version,
        latest_version_id=version.version_id,
        updated_at=as_stored(version.created_at),
        api_control=dict(changes.api_control),
        name=changes.name,
        description=changes.description,
        published_version=version.version if changes.publish else entry.published_version,
    )


def read_version_item(
    tenant_id: int, knowledge_id: int, version: KnowledgeVersion | int
) -> Item | None:
    """The version item as stored (operators and tests look at its attributes)."""
    return read_item(_table(), version_key(tenant_id, knowledge_id, version), "knowledge version")


def read_version(
    tenant_id: int, knowledge_id: int, version: KnowledgeVersion
) -> VersionRecord | None:
    item = read_version_item(tenant_id, knowledge_id, version)
    return version_of(item) if item else None


def read_edit_items(tenant_id: int, knowledge_id: int) -> list[Item]:
    """The entry's service-side edit items as stored: at most one per section, one Query."""
    request = {
        "TableName": _table(),
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :edit)",
        "ExpressionAttributeValues": {
            ":pk": {"S": entry_pk(tenant_id, knowledge_id)},
            ":edit": {"S": _EDIT_PREFIX},
        },
        "ConsistentRead": True,
    }
    answer = query_page(request, "knowledge edits")
    return [from_item(item) for item in answer.get("Items", [])]


def read_edits(tenant_id: int, knowledge_id: int) -> list[EditRecord]:
    return [edit_of(item) for item in read_edit_items(tenant_id, knowledge_id)]


def write_edit(tenant_id: int, entry: KnowledgeEntry, edit: EditRecord) -> None:
    """Stores the service-side edit of one section (replacing an earlier one) and asks for a
    digest, conditioned on the entry as read, like write_version; WriteRaced when the entry
    moved first."""
    attributes = {
        "section": edit.section,
        "editedAt": format_timestamp(edit.edited_at),
        "editedBy": edit.edited_by,
        "note": edit.note,
        "basedOnVersion": edit.based_on_version,
        "editSeq": edit.edit_seq,
        **_document_attributes(edit.document),
    }
    writes = [
        {
            "Update": {
                "TableName": _table(),
                "Key": entry_key(tenant_id, entry.id),
                "UpdateExpression": "SET serviceEditSeq = :next",
                "ConditionExpression": _MOVED_ENTRY,
                "ExpressionAttributeValues": {
                    ":next": marshal(edit.edit_seq),
                    **_moved_values(entry.latest_version, entry.service_edit_seq),
                },
            }
        },
        {
            "Put": {
                "TableName": _table(),
                "Item": {**edit_key(tenant_id, entry.id, edit.section), **to_item(attributes)},
            }
        },
        card_pending_write(tenant_id, entry.id),
    ]
    transact_write(writes, on_cancel=lambda codes: WriteRaced("knowledge entry moved"))


def set_published_version(
    tenant_id: int,
    entry: KnowledgeEntry,
    version: KnowledgeVersion | None,
    *,
    now: datetime,
) -> KnowledgeEntry:
    """Publishes `version` (or unpublishes with None): exactly one published version, since
    it is one attribute of the entry. Returns the entry as it now is; WriteRaced when the
    entry is deleted or lacks the version."""
    knowledge_id = entry.id
    values: dict[str, Any] = {":now": {"S": format_timestamp(now)}, ":no": {"BOOL": False}}
    if version is None:
        update = "SET updatedAt = :now REMOVE publishedVersion"
        condition = "attribute_exists(pk) AND deleted = :no"
    else:
        update = "SET updatedAt = :now, publishedVersion = :v"
        condition = "attribute_exists(pk) AND deleted = :no AND latestVersion >= :v"
        values[":v"] = marshal(version)
    try:
        with translated("publish"):
            dynamodb().update_item(
                TableName=_table(),
                Key=entry_key(tenant_id, knowledge_id),
                UpdateExpression=update,
                ConditionExpression=condition,
                ExpressionAttributeValues=values,
            )
    except ConditionFailed as error:
        raise WriteRaced(str(error)) from error
    return replace(entry, published_version=version, updated_at=as_stored(now))


def read_card(tenant_id: int, knowledge_id: int) -> tuple[KnowledgeEntry | None, CardRecord | None]:
    """The entry and its card in one BatchGetItem (strongly consistent reads)."""
    items = batch_get(
        _table(),
        [entry_key(tenant_id, knowledge_id), card_key(tenant_id, knowledge_id)],
        consistent=True,
    )
    entry = next((entry_of(item) for item in items if item["sk"] == "ENTRY"), None)
    card = next((card_of(item) for item in items if item["sk"] == _CARD_SK), None)
    return entry, card


def read_card_record(tenant_id: int, knowledge_id: int) -> CardRecord | None:
    item = read_item(_table(), card_key(tenant_id, knowledge_id), "knowledge card")
    return card_of(item) if item else None


def complete_card(
    tenant_id: int,
    knowledge_id: int,
    generation: int,
    *,
    result: CardRecord,
    processed_at: datetime,
    digested_version: KnowledgeVersion | None = None,
) -> bool:
    """Stores a digest result (READY with its sections and digested version, or FAILED with
    its reason) if no write asked for a newer one meanwhile (the generation still matches).
    Returns False when it was superseded: the newer request's message will make the card."""
    attributes: dict[str, Any] = {"processingStatus": result.processing_status}
    if result.processing_reason is not None:
        attributes["processingReason"] = result.processing_reason
    else:
        attributes["sections"] = result.sections
        attributes["digestedVersion"] = digested_version
    attributes["processedAt"] = format_timestamp(processed_at)
    clause, names, values = _set_clause(attributes)
    values[":g"] = marshal(generation)
    update = f"SET {clause}"
    if "processingReason" not in attributes:
        update += " REMOVE processingReason"
    try:
        with translated("knowledge card"):
            dynamodb().update_item(
                TableName=_table(),
                Key=card_key(tenant_id, knowledge_id),
                UpdateExpression=update,
                ConditionExpression="generation = :g",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
    except ConditionFailed:
        return False
    return True


def mark_card_pending(tenant_id: int, knowledge_id: int) -> None:
    """Asks for a new digest outside a write (an operator's redigest)."""
    transact_write([card_pending_write(tenant_id, knowledge_id)])
