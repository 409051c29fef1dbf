"""Knowledge keys: every item's pk and sk (the layout is in psap.knowledge.store)."""

from urllib.parse import quote

from psap.config import knowledge_table
from psap.knowledge.kinds import KnowledgeType
from psap.storage import listing


def _table() -> str:
    """This store's table, from the settings read at cold start (psap.config)."""
    return knowledge_table()


def entry_pk(tenant_id: int, knowledge_id: int) -> str:
    return f"T#{tenant_id}#K#{knowledge_id}"


def entry_key(tenant_id: int, knowledge_id: int) -> dict[str, dict[str, str]]:
    return listing.key(entry_pk(tenant_id, knowledge_id), "ENTRY")


def listing_scope(provider: str | None, knowledge_type: KnowledgeType | None) -> str:
    """The pointer partition that answers a filter combination (provider quoted: no '#')."""
    if provider is not None and knowledge_type is not None:
        return f"PK#{quote(provider, safe='')}#{knowledge_type.value}"
    if provider is not None:
        return f"P#{quote(provider, safe='')}"
    if knowledge_type is not None:
        return f"K#{knowledge_type.value}"
    return "ALL"


def entry_scopes(provider: str, knowledge_type: KnowledgeType) -> list[str]:
    return [
        listing_scope(None, None),
        listing_scope(provider, None),
        listing_scope(None, knowledge_type),
        listing_scope(provider, knowledge_type),
    ]


def listing_pk(tenant_id: int, scope: str) -> str:
    return f"T#{tenant_id}#KL#{scope}"


def external_id_key(tenant_id: int, provider: str, external_id: str) -> dict[str, dict[str, str]]:
    pk = f"T#{tenant_id}#XID#{quote(provider, safe='')}#{quote(external_id, safe='')}"
    return listing.key(pk, "XID")
