"""Demo knowledge cards with content: a few linked guide and instruction cards per tenant.

Loaded through the same logic the API runs (psap.knowledge.authoring), so the cards have
versions, referenceIds, resolved links and a card digest (the local stack's poller drives
the digest worker). Targets are loaded before the cards that link to them (rule 8); some
link to the tenant's metadata-only demo entries (adopted, no version yet), which resolve too.

The cards are local/demo_data/knowledge_cards.jsonl: per line the tenant's name, the create
request (`card`) and, for a card that gets a draft version 2, the questions it adds.
"""

from typing import Any

from local.demo_data import read_records
from psap.knowledge.authoring import append_version, create_knowledge
from psap.knowledge.content import KnowledgeAppendRequest, KnowledgeCreateRequest

AUTHOR = "demo seed"


def _cards_by_tenant() -> dict[str, list[dict[str, Any]]]:
    cards: dict[str, list[dict[str, Any]]] = {}
    for record in read_records("knowledge_cards"):
        cards.setdefault(record["tenant"], []).append(record)
    return cards


CARDS: dict[str, list[dict[str, Any]]] = _cards_by_tenant()


def seed_knowledge_cards(tenant_id: int, tenant_name: str) -> list[int]:
    """Creates the tenant's demo cards (and a second version of the first guide card);
    returns their ids."""
    ids = []
    for record in CARDS.get(tenant_name, []):
        payload = record["card"]
        entry = create_knowledge(tenant_id, KnowledgeCreateRequest.model_validate(payload), AUTHOR)
        ids.append(entry.id)
        if "draftQuestions" in record:
            # A draft version 2 beside the published version 1: keeps the referenceIds.
            questions = [question.model_dump(by_alias=True) for question in entry.question_list]
            questions.extend({"questionText": text} for text in record["draftQuestions"])
            draft = {
                "apiControl": payload["apiControl"],
                "questionList": questions,
                "spokenInstructions": payload["spokenInstructions"],
                "actions": payload["actions"],
            }
            append_version(
                tenant_id, entry.id, KnowledgeAppendRequest.model_validate(draft), author=AUTHOR
            )
    return ids
