"""Knowledge shapes of the spec (ExternalKnowledgeDto, ExternalKnowledgePageDto): the contract
of the OpenAPI document; psap.knowledge.listing builds the same JSON without pydantic."""

from pydantic import Field

# Re-exported: the enumerations' long-standing home (their own module is pydantic-free).
from psap.knowledge.kinds import KnowledgeSource as KnowledgeSource  # noqa: PLC0414
from psap.knowledge.kinds import KnowledgeType as KnowledgeType  # noqa: PLC0414
from psap.models import Timestamp, WireModel


class ExternalKnowledgeDto(WireModel):
    """Knowledge entry summary."""

    id: int = Field(description="Internal knowledge id, used in later calls")
    name: str = Field(description="Human-readable name")
    description: str | None = Field(default=None, description="Optional description")
    source: KnowledgeSource = Field(
        description="Source of the entry; API_IMPORT means loaded through this interface"
    )
    provider: str = Field(description="Organization that authored the entry")
    knowledge_type: KnowledgeType
    external_id: str | None = Field(
        default=None, description="Partner-supplied identifier, if one was given on create"
    )
    published_version: int | None = Field(
        default=None, description="Number of the published version; null when none is"
    )
    created_at: Timestamp = Field(description="When the first version was received and stored")
    updated_at: Timestamp = Field(
        description="Last modification: a version added, the published version changed, "
        "or metadata updated"
    )


class ExternalKnowledgePageDto(WireModel):
    items: list[ExternalKnowledgeDto]
    page: int = Field(description="0-based page number")
    size: int = Field(description="Effective page size after capping")
    total_items: int = Field(description="Total entries matching the filters across all pages")
    total_pages: int = Field(description="Total number of pages")
