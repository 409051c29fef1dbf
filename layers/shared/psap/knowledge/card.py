"""The knowledge card (GET /mcp/resources/knowledge/{knowledgeId}/card) and the digest
worker that fills it.

Every write (create, append, service-side edit) marks the card PENDING in its own
transaction and then sends a message to the digest queue. The worker reads the latest
version with its service-side edits, writes one digest per section and marks the card READY,
only if no newer write asked again meanwhile (a generation number). A digest that cannot be
made (unreadable content, or the last delivery attempt failing) marks the card FAILED with a
reason; a transient failure is retried by SQS and ends in the DLQ after the last attempt.
"""

import os
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from psap.clock import utc_now
from psap.config import knowledge_digest_queue_url
from psap.errors import InvalidInput, NotFound, StoreUnavailable
from psap.faults import fault_point
from psap.knowledge import store
from psap.knowledge.content import ApiControl, Owner, ProcessingStatus, Section
from psap.knowledge.digest import content_hash, item_count, section_digest
from psap.knowledge.models import KnowledgeType
from psap.knowledge.reading import EntryState, live_entry, not_found, read_state
from psap.knowledge.records import NO_VERSION, CardRecord
from psap.models import Timestamp, WireModel
from psap.observability import logger, metrics
from psap.storage.sqs import send_message

# The queue's RedrivePolicy maxReceiveCount: the attempt that must not fail silently.
DEFAULT_MAX_RECEIVES = 3


class CardSection(WireModel):
    """One section of the card: its digest, preferring the service-side (user) edit."""

    section: Section = Field(description="The section, named as its apiControl flag")
    owner: Owner = Field(description="API (replaced by each append) or SERVICE (edited here)")
    edited: bool = Field(description="The content is a service-side edit, not the API's")
    edited_at: Timestamp | None = Field(default=None, description="When it was edited")
    item_count: int = Field(description="Items in the section (grouped questions included)")
    digest: str = Field(description="Plain text for an assistant: items with referenceIds")
    content_hash: str = Field(description="sha256 of the section's items in canonical JSON")


class KnowledgeCardDto(WireModel):
    """The knowledge card: the latest version's digests per section."""

    knowledge_id: int
    knowledge_type: KnowledgeType
    name: str
    version_id: int | None = Field(description="The latest version record's own id")
    version: int | None = Field(description="The latest version; null when none yet")
    active: bool = Field(description="Whether the latest version is the published one")
    processing_status: ProcessingStatus = Field(
        description="PENDING until the digest of the latest write is made, then READY; "
        "FAILED (see processingReason) when it cannot be made"
    )
    processing_reason: str | None = Field(default=None, description="Why it FAILED")
    sections: list[CardSection] = Field(
        description="One digest per section. While PENDING: those of the last digest made."
    )


class DigestRequest(BaseModel):
    """The digest queue's message body."""

    model_config = ConfigDict(alias_generator=to_camel, validate_by_name=True, frozen=True)

    tenant_id: int
    knowledge_id: int


def request_digest(tenant_id: int, knowledge_id: int) -> None:
    """Asks the worker for a digest. The write is already committed and the card is PENDING:
    a failed send is logged and counted, never turned into a failed request; `python -m
    tools.admin knowledge redigest` asks again."""
    try:
        send_message(
            knowledge_digest_queue_url(),
            DigestRequest(tenant_id=tenant_id, knowledge_id=knowledge_id).model_dump(by_alias=True),
        )
    except StoreUnavailable:
        logger.exception("knowledge digest request not sent", extra={"knowledge_id": knowledge_id})
        metrics.add_metric(name="KnowledgeDigestRequestFailed", unit=MetricUnit.Count, value=1)


def redigest(tenant_id: int, knowledge_id: int) -> None:
    """An operator asks for the card again (after a failed send or a FAILED digest)."""
    entry = live_entry(tenant_id, knowledge_id)
    if entry.latest_version == NO_VERSION:
        raise InvalidInput(f"Knowledge {knowledge_id} has no version to digest yet")
    store.mark_card_pending(tenant_id, knowledge_id)
    request_digest(tenant_id, knowledge_id)


def get_card(tenant_id: int, knowledge_id: int) -> KnowledgeCardDto:
    entry, card = store.read_card(tenant_id, knowledge_id)
    if entry is None or entry.deleted:
        raise not_found(knowledge_id)
    latest = entry.latest_version
    sections: list[dict[str, Any]]
    if latest == NO_VERSION:
        status, reason, sections = ProcessingStatus.READY, None, []  # no content to digest
    elif card is None:
        status, reason, sections = ProcessingStatus.PENDING, None, []
    else:
        status = ProcessingStatus(card.processing_status)
        reason = card.processing_reason
        sections = card.sections
    return KnowledgeCardDto(
        knowledge_id=entry.id,
        knowledge_type=entry.knowledge_type,
        name=entry.name,
        version_id=entry.latest_version_id if latest else None,
        version=latest or None,
        active=latest > 0 and entry.published_version == latest,
        processing_status=status,
        processing_reason=reason,
        sections=[CardSection.model_validate(section) for section in sections],
    )


def digest_sections(state: EntryState) -> list[CardSection]:
    """The card's sections for the latest version, service-side edits preferred."""
    control = state.api_control or ApiControl()
    content = state.current_content
    sections = []
    for section in Section:
        items = content.items(section)
        edit = state.edits.get(section)
        sections.append(
            CardSection(
                section=section,
                owner=control.owner(section),
                edited=edit is not None,
                edited_at=edit.edited_at if edit is not None else None,
                item_count=item_count(section, items),
                digest=section_digest(section, items),
                content_hash=content_hash(items),
            )
        )
    return sections


def digest_knowledge(request: DigestRequest, receive_count: int) -> str:
    """Makes the card of one entry; returns what happened (for the log). Raises on a
    transient failure so that SQS delivers the message again."""
    tenant_id, knowledge_id = request.tenant_id, request.knowledge_id
    card = store.read_card_record(tenant_id, knowledge_id)
    if card is None:
        return "no card requested"
    digested = None
    try:
        state = read_state(tenant_id, knowledge_id)
        result = CardRecord(
            generation=card.generation,
            processing_status=ProcessingStatus.READY.value,
            sections=[
                section.model_dump(mode="json", by_alias=True) for section in digest_sections(state)
            ],
        )
        digested = state.latest_version
    except NotFound:
        return "entry deleted"
    except StoreUnavailable as error:
        if receive_count < max_receives():
            raise
        result = _failed(card, f"the content could not be read after {receive_count} attempts")
        logger.exception("knowledge digest failed", extra={"error": str(error)})
    except (store.UnreadableDocument, ValidationError, KeyError, RuntimeError) as error:
        # Stored content that cannot be read will not improve on a retry.
        result = _failed(card, f"the stored content could not be digested ({type(error).__name__})")
        logger.exception("knowledge digest failed")
    fault_point("digest.before_complete")
    completed = store.complete_card(
        tenant_id,
        knowledge_id,
        card.generation,
        result=result,
        processed_at=utc_now(),
        digested_version=digested,
    )
    fault_point("digest.after_complete")
    if not completed:
        return "superseded by a newer write"
    metrics.add_metric(name="KnowledgeCardsDigested", unit=MetricUnit.Count, value=1)
    return result.processing_status


def _failed(card: CardRecord, reason: str) -> CardRecord:
    return CardRecord(
        generation=card.generation,
        processing_status=ProcessingStatus.FAILED.value,
        processing_reason=reason,
    )


def max_receives() -> int:
    return int(os.environ.get("KNOWLEDGE_DIGEST_MAX_RECEIVES", str(DEFAULT_MAX_RECEIVES)))
