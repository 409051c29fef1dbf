"""Demo knowledge cards with content: a few linked guide and instruction cards per tenant.

Loaded through the same logic the API runs (psap.knowledge.authoring), so the cards have
versions, referenceIds, resolved links and a card digest (the local stack's poller drives
the digest worker). Targets are loaded before the cards that link to them (rule 8); some
link to the tenant's metadata-only demo entries (adopted, no version yet), which resolve too.
"""

from typing import Any

from psap.knowledge.authoring import append_version, create_knowledge
from psap.knowledge.content import KnowledgeAppendRequest, KnowledgeCreateRequest

AUTHOR = "demo seed"
# Every flag true except where a card shows a service-owned section.
API_OWNED = {
    "questionList": True,
    "spokenInstructions": True,
    "cadActions": True,
    "smsMessages": True,
    "dispatchTriggers": True,
    "links": True,
    "media": True,
}

AED = {
    "name": "AED Instructions",
    "description": "Using an automated external defibrillator with the caller",
    "provider": "NENA-Standards",
    "knowledgeType": "INSTRUCTION_CARD",
    "externalId": "ic-aed",
    # Local wording of the spoken instructions is maintained inside the service.
    "apiControl": {**API_OWNED, "spokenInstructions": False},
    "spokenInstructions": [
        {"instructionText": "Send someone to get the AED now.", "isCritical": True},
        {"instructionText": "Turn it on and follow its voice prompts.", "referenceMedia": ["pads"]},
    ],
    "media": [
        {
            "referenceId": "pads",
            "mediaType": "IMAGE",
            "url": "https://cdn.example.org/demo/aed-pad-placement.png",
            "caption": "Pad placement",
        }
    ],
    "publish": True,
}

UNCONSCIOUS = {
    "name": "Unconscious Person",
    "description": "Unconscious or fainting, breathing unknown",
    "provider": "NENA-Standards",
    "knowledgeType": "GUIDE_CARD",
    "externalId": "gc-unconscious",
    "apiControl": API_OWNED,
    "questionList": [
        {
            "questionText": "Is the patient awake?",
            "isCritical": True,
            "relatedQuestions": [
                {
                    "label": "Not awake",
                    "displayCriteria": "awake == 'no'",
                    "questions": [
                        {"questionText": "Is the patient breathing normally?", "isCritical": True},
                        {
                            "questionText": "Is an AED available?",
                            "displayCriteria": "breathing == 'no'",
                        },
                    ],
                }
            ],
        },
        {"questionText": "What was the patient doing before?", "displayCriteria": "awake == 'yes'"},
    ],
    "spokenInstructions": [{"instructionText": "Lay the patient flat on their back."}],
    "actions": {
        "cadActions": [
            {
                "actionType": "SET_PRIORITY",
                "description": "Priority 1 when not breathing",
                "parameters": {"priority": "1"},
            }
        ],
        "smsMessages": [
            {"messageText": "Help is on the way. Unlock the door.", "recipient": "CALLER"}
        ],
        "dispatchTriggers": [
            {"condition": "breathing == 'no'", "determinantCode": "31-E-1", "responsePlan": "ALS"}
        ],
        "links": [
            {"targetExternalId": "ic-cpr-adult", "label": "Start CPR"},
            {"targetExternalId": "ic-aed", "label": "Use the AED"},
        ],
    },
    "publish": True,
}

REACHING_ASSIST = {
    "name": "Reaching Assist",
    "description": "Helping from shore without entering the water or ice",
    "provider": "Lakeshore-Internal",
    "knowledgeType": "INSTRUCTION_CARD",
    "externalId": "ic-reaching-assist",
    "apiControl": API_OWNED,
    "spokenInstructions": [
        {"instructionText": "Do not go onto the ice or into the water.", "isCritical": True},
        {"instructionText": "Reach with a pole, rope or branch and pull from a lying position."},
    ],
}

THROUGH_ICE = {
    "name": "Person Through Ice",
    "provider": "Lakeshore-Internal",
    "knowledgeType": "GUIDE_CARD",
    "externalId": "gc-through-ice",
    "apiControl": API_OWNED,
    "questionList": [
        {"questionText": "Can you still see the person?", "isCritical": True},
        {"questionText": "How far from shore are they?"},
    ],
    "actions": {
        "dispatchTriggers": [{"condition": "person visible", "responsePlan": "ICE-RESCUE"}],
        "links": [
            {"targetExternalId": "ic-reaching-assist", "label": "Coach a reaching assist"},
            {"targetExternalId": "gc-ice-rescue"},
        ],
    },
}

CARDS: dict[str, list[dict[str, Any]]] = {
    "Riverside County 911": [AED, UNCONSCIOUS],
    "Lakeshore Emergency Communications": [REACHING_ASSIST, THROUGH_ICE],
}


def seed_knowledge_cards(tenant_id: int, tenant_name: str) -> list[int]:
    """Creates the tenant's demo cards (and a second version of the first guide card);
    returns their ids."""
    ids = []
    for payload in CARDS.get(tenant_name, []):
        entry = create_knowledge(tenant_id, KnowledgeCreateRequest.model_validate(payload), AUTHOR)
        ids.append(entry.id)
        if payload is UNCONSCIOUS:
            # A draft version 2 beside the published version 1: keeps the referenceIds.
            questions = [question.model_dump(by_alias=True) for question in entry.question_list]
            questions.append({"questionText": "Is the patient diabetic?"})
            draft = {
                "apiControl": payload["apiControl"],
                "questionList": questions,
                "spokenInstructions": payload["spokenInstructions"],
                "actions": payload["actions"],
            }
            append_version(
                tenant_id, entry.id, KnowledgeAppendRequest.model_validate(draft), AUTHOR
            )
    return ids
