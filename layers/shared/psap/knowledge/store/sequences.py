"""Knowledge id sequences: entry ids and versionIds."""

from psap.knowledge.store.keys import _table
from psap.storage.sequences import next_id

_ENTRY_SEQUENCE = "KNOWLEDGE"
_VERSION_SEQUENCE = "KNOWLEDGE_VERSION"


def next_knowledge_id(count: int = 1) -> int:
    """Reserves `count` consecutive ids and returns the last one."""
    return next_id(_table(), _ENTRY_SEQUENCE, count)


def next_version_id() -> int:
    return next_id(_table(), _VERSION_SEQUENCE)
