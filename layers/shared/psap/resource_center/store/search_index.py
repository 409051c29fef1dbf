"""The search index pointer: which artifact in S3 the searches use, and its version."""

from dataclasses import dataclass

from psap.resource_center.store.keys import POINTER_KEY, table
from psap.storage.attributes import to_item
from psap.storage.aws_errors import ConditionFailed, translated
from psap.storage.dynamodb import dynamodb, read_item
from psap.storage.sequences import next_id


@dataclass(frozen=True)
class IndexPointer:
    version: int
    key: str  # S3 key of the artifact
    documents: int
    built_at: str


def next_index_version() -> int:
    return next_id(table(), "RC_INDEX")


def index_pointer() -> IndexPointer | None:
    item = read_item(table(), POINTER_KEY, "resource center index pointer read")
    if item is None:
        return None
    return IndexPointer(
        version=int(item["version"]),
        key=str(item["key"]),
        documents=int(item["documents"]),
        built_at=str(item["builtAt"]),
    )


def publish_index(pointer: IndexPointer) -> bool:
    """Points searches at a new artifact unless a newer one is already in use: the rebuild
    that started later saw every catalog write the earlier one saw, so it must win."""
    attributes = {
        "version": pointer.version,
        "key": pointer.key,
        "documents": pointer.documents,
        "builtAt": pointer.built_at,
    }
    try:
        with translated("resource center index pointer write"):
            dynamodb().put_item(
                TableName=table(),
                Item={**POINTER_KEY, **to_item(attributes)},
                ConditionExpression="attribute_not_exists(pk) OR version < :new",
                ExpressionAttributeValues={":new": {"N": str(pointer.version)}},
            )
    except ConditionFailed:
        return False
    return True
