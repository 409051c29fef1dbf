"""Writing knowledge: create, append, publish, unpublish, delete and service-side edits.

A create writes the entry, its listing pointers and counters, version 1 and the pending card
in one transaction. An append reads the entry (latest version, service-edit sequence), builds
the new version's content (psap.knowledge.versioning) and writes it in one transaction
conditioned on what it read; when a concurrent writer got there first it reads again and
rebuilds, so version numbers stay 1..N with no gap and no duplicate. Everything that can be
refused (ownership, apiControl, referenceIds, link targets, media references) is checked
before anything is written.
"""

import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from pydantic import TypeAdapter, ValidationError

from psap.clock import format_timestamp, utc_now
from psap.config import knowledge_content_bucket, knowledge_table
from psap.errors import Conflict, InvalidInput, NotFound, StoreUnavailable
from psap.knowledge import store
from psap.knowledge.card import request_digest
from psap.knowledge.content import (
    ApiControl,
    CadActionInput,
    DispatchTriggerInput,
    KnowledgeAppendRequest,
    KnowledgeCreateRequest,
    KnowledgeEntryDto,
    LinkInput,
    MediaInput,
    Owner,
    RequestModel,
    RootQuestionInput,
    Section,
    SmsMessageInput,
    SpokenInstructionInput,
    VersionContent,
)
from psap.knowledge.models import ExternalKnowledgeDto, KnowledgeSource, KnowledgeType
from psap.knowledge.reading import entry_dto, live_entry_item, not_found, read_state
from psap.knowledge.store import NewEntry, WriteRaced
from psap.knowledge.versioning import LinkTarget, build_content, sent_sections
from psap.observability import logger, metrics

# Concurrent appends to one entry retry until they win; each round has one winner.
WRITE_ATTEMPTS = 50

INPUT_ADAPTERS: dict[Section, TypeAdapter[list[Any]]] = {
    Section.QUESTION_LIST: TypeAdapter(list[RootQuestionInput]),
    Section.SPOKEN_INSTRUCTIONS: TypeAdapter(list[SpokenInstructionInput]),
    Section.CAD_ACTIONS: TypeAdapter(list[CadActionInput]),
    Section.SMS_MESSAGES: TypeAdapter(list[SmsMessageInput]),
    Section.DISPATCH_TRIGGERS: TypeAdapter(list[DispatchTriggerInput]),
    Section.LINKS: TypeAdapter(list[LinkInput]),
    Section.MEDIA: TypeAdapter(list[MediaInput]),
}


@dataclass(frozen=True)
class ServiceEditResult:
    knowledge_id: int
    section: Section
    based_on_version: int
    item_count: int
    reference_ids: list[str]


def check_api_control(sent: ApiControl, stored: ApiControl | None) -> None:
    """Rule 4: the flags are set by the create and never change."""
    if stored is None:
        return
    changed = [
        f"{section.value} (set to {str(stored.owner(section) is Owner.API).lower()} on create)"
        for section in Section
        if sent.owner(section) is not stored.owner(section)
    ]
    if changed:
        raise InvalidInput("apiControl is immutable; it differs in " + ", ".join(changed))


def check_ownership(request: KnowledgeAppendRequest, control: ApiControl) -> None:
    """Rule 3: a service-owned section's content must not be in an append."""
    sent = [
        section.payload_path
        for section in control.service_sections()
        if request.supplied(section) is not None
    ]
    if sent:
        raise InvalidInput(
            "Section(s) owned by the service (apiControl false) must not be sent on append: "
            + ", ".join(sent)
        )


def link_targets(
    table: str, tenant_id: int, provider: str, links: Sequence[RequestModel]
) -> dict[str, LinkTarget]:
    """Rules 7-8: each targetExternalId -> the entry holding it under the same provider in
    this tenant, published or not (deleted entries gave their externalId up)."""
    wanted = [link.target_external_id for link in links if isinstance(link, LinkInput)]
    found = store.resolve_external_ids(table, tenant_id, provider, wanted)
    return {
        external_id: LinkTarget(
            knowledge_id=int(item["id"]),
            name=str(item["name"]),
            knowledge_type=KnowledgeType(item["knowledgeType"]),
            provider=str(item["provider"]),
        )
        for external_id, item in found.items()
    }


def version_document(
    name: str,
    description: str | None,
    control: ApiControl,
    content: VersionContent,
    edited_sections: Sequence[Section],
) -> dict[str, Any]:
    """What a version stores (compressed): its metadata, ownership and content."""
    return {
        "name": name,
        "description": description,
        "apiControl": control.model_dump(by_alias=True),
        "content": content.model_dump(mode="json", by_alias=True),
        "editedSections": [section.value for section in edited_sections],
    }


def version_attributes(
    version: int, version_id: int, now: datetime, author: str, stored: store.StoredDocument
) -> dict[str, Any]:
    return {
        "version": version,
        "versionId": version_id,
        "createdAt": format_timestamp(now),
        "createdBy": author,
        **stored.attributes,
    }


def create_knowledge(
    tenant_id: int, request: KnowledgeCreateRequest, author: str
) -> KnowledgeEntryDto:
    """POST /: a new entry with version 1 (rules 11, 12, 15 and link resolution)."""
    table = knowledge_table()
    if request.external_id is not None:
        existing = store.find_by_external_id(
            table, tenant_id, request.provider, request.external_id
        )
        if existing is not None:
            raise Conflict(
                f"externalId '{request.external_id}' of provider '{request.provider}' already "
                f"exists as knowledge id {existing}"
            )
    sent = sent_sections(request, Section)
    targets = link_targets(table, tenant_id, request.provider, sent[Section.LINKS])
    content = build_content(sent, VersionContent(), targets, creating=True)
    knowledge_id = store.next_knowledge_id(table)
    version_id = store.next_version_id(table)
    now = utc_now()
    document = version_document(request.name, request.description, request.api_control, content, [])
    stored = store.store_document(
        knowledge_content_bucket(),
        store.document_object_key(tenant_id, knowledge_id, f"v{version_id}"),
        document,
    )
    attributes = version_attributes(1, version_id, now, author, stored)
    entry_changes: dict[str, Any] = {
        "latestVersion": 1,
        "latestVersionId": version_id,
        "apiControl": request.api_control.model_dump(by_alias=True),
        "serviceEditSeq": 0,
    }
    if request.publish:
        entry_changes["publishedVersion"] = 1
    entry = NewEntry(
        name=request.name,
        provider=request.provider,
        knowledge_type=request.knowledge_type,
        description=request.description,
        external_id=request.external_id,
        source=KnowledgeSource.API_IMPORT,
    )
    store.create_entry(
        table,
        tenant_id,
        entry,
        now,
        extra_writes=[
            store.version_put(table, tenant_id, knowledge_id, attributes),
            store.card_pending_write(table, tenant_id, knowledge_id),
        ],
        knowledge_id=knowledge_id,
        extra_attributes=entry_changes,
    )
    _written(stored, "create")
    request_digest(tenant_id, knowledge_id)
    item = store.entry_attributes(tenant_id, knowledge_id, entry, now) | entry_changes
    return entry_dto(item, attributes, document)


def append_version(
    tenant_id: int, knowledge_id: int, request: KnowledgeAppendRequest, author: str
) -> KnowledgeEntryDto:
    """POST /{knowledgeId}/versions: a new immutable version (rules 1-4, 6-10, 13-15)."""
    table = knowledge_table()
    state = read_state(table, tenant_id, knowledge_id)
    check_api_control(request.api_control, state.api_control)
    # An entry adopted outside the API has no flags yet: its first append sets them.
    control = state.api_control or request.api_control
    check_ownership(request, control)
    sent = sent_sections(
        request, [section for section in Section if control.owner(section) is Owner.API]
    )
    targets = link_targets(
        table, tenant_id, str(state.item["provider"]), sent.get(Section.LINKS, [])
    )
    version_id = store.next_version_id(table)
    for attempt in range(WRITE_ATTEMPTS):
        if attempt:
            _back_off(attempt)
            state = read_state(table, tenant_id, knowledge_id)
            check_api_control(request.api_control, state.api_control)
        content = build_content(sent, state.current_content, targets, creating=False)
        version = state.latest_version + 1
        previous = state.document or {}
        name = request.name or str(previous.get("name", state.item["name"]))
        description = (
            request.description
            if request.description is not None
            else previous.get("description", state.item.get("description"))
        )
        document = version_document(name, description, control, content, sorted(state.edits))
        stored = store.store_document(
            knowledge_content_bucket(),
            store.document_object_key(tenant_id, knowledge_id, f"v{version_id}"),
            document,
        )
        now = utc_now()
        attributes = version_attributes(version, version_id, now, author, stored)
        entry_changes: dict[str, Any] = {
            "latestVersion": version,
            "latestVersionId": version_id,
            "updatedAt": format_timestamp(now),
            "apiControl": control.model_dump(by_alias=True),
            "name": name,
            "description": description,
        }
        if request.publish:
            entry_changes["publishedVersion"] = version
        try:
            store.write_version(
                table,
                tenant_id,
                knowledge_id,
                state.latest_version,
                state.edit_seq,
                entry_changes,
                attributes,
            )
        except WriteRaced:
            continue
        _written(stored, "append", retries=attempt)
        request_digest(tenant_id, knowledge_id)
        return entry_dto(state.item | entry_changes, attributes, document)
    raise StoreUnavailable(f"knowledge {knowledge_id}: too many concurrent writes")


def publish_version(tenant_id: int, knowledge_id: int, version: int) -> ExternalKnowledgeDto:
    """Makes `version` the one published version (exactly one at a time)."""
    table = knowledge_table()
    item = live_entry_item(table, tenant_id, knowledge_id)
    if not 1 <= version <= int(item.get("latestVersion", 0)):
        raise NotFound(f"Version {version} of knowledge {knowledge_id} not found")
    if item.get("publishedVersion") == version:
        return store.summary_from_item(item)  # already published: nothing changes
    return _set_published(table, tenant_id, knowledge_id, item, version)


def unpublish(tenant_id: int, knowledge_id: int) -> ExternalKnowledgeDto:
    """Leaves the entry with no published version (publishedVersion null)."""
    table = knowledge_table()
    item = live_entry_item(table, tenant_id, knowledge_id)
    if item.get("publishedVersion") is None:
        return store.summary_from_item(item)
    return _set_published(table, tenant_id, knowledge_id, item, None)


def _set_published(
    table: str, tenant_id: int, knowledge_id: int, item: Mapping[str, Any], version: int | None
) -> ExternalKnowledgeDto:
    now = utc_now()
    try:
        store.set_published_version(table, tenant_id, knowledge_id, version, now)
    except WriteRaced as error:
        raise not_found(knowledge_id) from error  # deleted meanwhile
    changed = dict(item) | {"publishedVersion": version, "updatedAt": format_timestamp(now)}
    return store.summary_from_item(changed)


def delete_knowledge(tenant_id: int, knowledge_id: int) -> None:
    """Soft delete: gone from the list, GET and card; links stored earlier still read."""
    if not store.delete_entry(knowledge_table(), tenant_id, knowledge_id, utc_now()):
        raise not_found(knowledge_id)


def edit_service_section(
    tenant_id: int,
    knowledge_id: int,
    section: Section,
    items: Sequence[Any],
    editor: str,
    note: str | None = None,
) -> ServiceEditResult:
    """Stores a service-side edit of a service-owned section: the card prefers it at once,
    and every later append carries it forward (rule 3). The items follow the section's
    payload shape and referenceId rules (a supplied id must be in the current content)."""
    try:
        sent_items: list[RequestModel] = INPUT_ADAPTERS[section].validate_python(list(items))
    except ValidationError as error:
        raise InvalidInput(describe(error, prefix="items")) from error
    table = knowledge_table()
    targets: dict[str, LinkTarget] | None = None
    for attempt in range(WRITE_ATTEMPTS):
        if attempt:
            _back_off(attempt)
        state = read_state(table, tenant_id, knowledge_id)
        if state.latest_version == 0 or state.api_control is None:
            raise InvalidInput(f"Knowledge {knowledge_id} has no version to edit yet")
        if state.api_control.owner(section) is Owner.API:
            raise InvalidInput(
                f"Section {section.payload_path} is owned by the API (apiControl "
                f"{section.value} true); it changes only through appends"
            )
        if targets is None:
            targets = link_targets(table, tenant_id, str(state.item["provider"]), sent_items)
        content = build_content(
            {section: sent_items}, state.current_content, targets, creating=False
        )
        edited = content.items(section)
        stored = store.store_document(
            knowledge_content_bucket(),
            store.document_object_key(
                tenant_id, knowledge_id, f"edit-{section.value}-{state.edit_seq + 1}"
            ),
            {"items": [item.model_dump(mode="json", by_alias=True) for item in edited]},
        )
        try:
            store.write_edit(
                table,
                tenant_id,
                knowledge_id,
                state.latest_version,
                state.edit_seq,
                section.value,
                {
                    "section": section.value,
                    "editedAt": format_timestamp(utc_now()),
                    "editedBy": editor,
                    "note": note,
                    "basedOnVersion": state.latest_version,
                    "editSeq": state.edit_seq + 1,
                    **stored.attributes,
                },
            )
        except WriteRaced:
            continue
        request_digest(tenant_id, knowledge_id)
        return ServiceEditResult(
            knowledge_id=knowledge_id,
            section=section,
            based_on_version=state.latest_version,
            item_count=len(edited),
            reference_ids=[item.reference_id for item in edited],
        )
    raise StoreUnavailable(f"knowledge {knowledge_id}: too many concurrent writes")


def describe(error: ValidationError, prefix: str) -> str:
    """Names each failing field the way the HTTP layer does."""
    problems = []
    for detail in error.errors():
        path = ".".join(str(part) for part in (prefix, *detail.get("loc", ())))
        problems.append(f"Invalid field '{path}': {detail.get('msg', 'is not valid')}")
    return "; ".join(problems)


def _back_off(attempt: int) -> None:
    # Jittered, so that the writers that lost a round do not collide again in the next.
    time.sleep(random.uniform(0, 0.005 * 2 ** min(attempt, 6)))  # noqa: S311 - jitter


def _written(stored: store.StoredDocument, operation: str, retries: int = 0) -> None:
    # One value per request: a metric per retry would flood the buffer under contention.
    metrics.add_metric(name="KnowledgeVersionsWritten", unit=MetricUnit.Count, value=1)
    if retries:
        metrics.add_metric(name="KnowledgeWriteRetries", unit=MetricUnit.Count, value=retries)
    logger.info(
        "knowledge version stored",
        extra={
            "operation": operation,
            "raw_bytes": stored.raw_bytes,
            "stored_bytes": stored.stored_bytes,
            "in_s3": stored.in_s3,
            "retries": retries,
        },
    )
