"""The knowledge enumerations, apart from the wire models: the light list path reads them
without pydantic (psap.knowledge.listing)."""

from enum import StrEnum


class KnowledgeType(StrEnum):
    GUIDE_CARD = "GUIDE_CARD"
    INSTRUCTION_CARD = "INSTRUCTION_CARD"
    POLICY = "POLICY"
    MEMO_BRIEFING = "MEMO_BRIEFING"
    TRAINING = "TRAINING"
    GENERAL_KNOWLEDGE = "GENERAL_KNOWLEDGE"
    NON_EMERGENCY_LINE_ABILITY = "NON_EMERGENCY_LINE_ABILITY"


class KnowledgeSource(StrEnum):
    API_IMPORT = "API_IMPORT"  # loaded through this interface: the only source listed
    SERVICE = "SERVICE"  # created or adopted inside the service
