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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from pydantic import TypeAdapter, ValidationError

from psap.clock import utc_now
from psap.config import knowledge_content_bucket
from psap.errors import Conflict, InvalidInput, NotFound
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
from psap.knowledge.models import ExternalKnowledgeDto, KnowledgeSource
from psap.knowledge.reading import (
    EntryState,
    VersionDocument,
    document_json,
    entry_dto,
    live_entry,
    not_found,
    parse_document,
    read_state,
)
from psap.knowledge.records import (
    NO_VERSION,
    EditRecord,
    EntryChanges,
    KnowledgeEntry,
    KnowledgeVersion,
    StoredDocument,
)
from psap.knowledge.store import NewEntry, WriteRaced
from psap.knowledge.versioning import LinkTarget, build_content, sent_sections
from psap.observability import logger, metrics
from psap.storage.optimistic import optimistic_write

# Concurrent appends to one entry retry until they win; each round has one winner.
WRITE_ATTEMPTS = 50
_TOO_MANY = "too many concurrent writes"

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
    based_on_version: KnowledgeVersion
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
    tenant_id: int, provider: str, links: Sequence[RequestModel]
) -> dict[str, LinkTarget]:
    """Rules 7-8: each targetExternalId -> the entry holding it under the same provider in
    this tenant, published or not (deleted entries gave their externalId up)."""
    wanted = [link.target_external_id for link in links if isinstance(link, LinkInput)]
    found = store.resolve_external_ids(tenant_id, provider, wanted)
    return {
        external_id: LinkTarget(
            knowledge_id=entry.id,
            name=entry.name,
            knowledge_type=entry.knowledge_type,
            provider=entry.provider,
        )
        for external_id, entry in found.items()
    }


def create_knowledge(
    tenant_id: int, request: KnowledgeCreateRequest, author: str
) -> KnowledgeEntryDto:
    """POST /: a new entry with version 1 (rules 11, 12, 15 and link resolution)."""
    if request.external_id is not None:
        existing = store.find_by_external_id(tenant_id, request.provider, request.external_id)
        if existing is not None:
            raise Conflict(
                f"externalId '{request.external_id}' of provider '{request.provider}' already "
                f"exists as knowledge id {existing}"
            )
    sent = sent_sections(request, Section)
    targets = link_targets(tenant_id, request.provider, sent[Section.LINKS])
    content = build_content(sent, VersionContent(), targets, creating=True)
    knowledge_id = store.next_knowledge_id()
    version_id = store.next_version_id()
    now = utc_now()
    document = document_json(
        request.name, request.description, request.api_control, content=content, edited_sections=[]
    )
    stored = store.store_document(
        knowledge_content_bucket(),
        store.document_object_key(tenant_id, knowledge_id, f"v{version_id}"),
        document,
    )
    first = store.new_version(KnowledgeVersion(1), version_id, now, author=author, stored=stored)
    entry = NewEntry(
        name=request.name,
        provider=request.provider,
        knowledge_type=request.knowledge_type,
        description=request.description,
        external_id=request.external_id,
        source=KnowledgeSource.API_IMPORT,
    )
    created = store.create_with_version(
        tenant_id,
        knowledge_id,
        entry,
        first=first,
        api_control=request.api_control.model_dump(by_alias=True),
        publish=request.publish,
    )
    _written(stored, "create")
    request_digest(tenant_id, knowledge_id)
    return entry_dto(created, first, parse_document(document))


def append_version(
    tenant_id: int, knowledge_id: int, request: KnowledgeAppendRequest, *, author: str
) -> KnowledgeEntryDto:
    """POST /{knowledgeId}/versions: a new immutable version (rules 1-4, 6-10, 13-15)."""
    state = read_state(tenant_id, knowledge_id)
    check_api_control(request.api_control, state.api_control)
    # An entry adopted outside the API has no flags yet: its first append sets them.
    control = state.api_control or request.api_control
    check_ownership(request, control)
    sent = sent_sections(
        request, [section for section in Section if control.owner(section) is Owner.API]
    )
    targets = link_targets(tenant_id, state.entry.provider, sent.get(Section.LINKS, []))
    version_id = store.next_version_id()

    def attempt(lost: int) -> KnowledgeEntryDto:
        nonlocal state
        if lost:
            state = read_state(tenant_id, knowledge_id)
            check_api_control(request.api_control, state.api_control)
        content = build_content(sent, state.current_content, targets, creating=False)
        entry = state.entry
        # What the request leaves out stays as the latest version has it.
        previous = state.document or VersionDocument(entry.name, entry.description, content)
        name = request.name or previous.name
        description = (
            request.description if request.description is not None else previous.description
        )
        document = document_json(
            name, description, control, content=content, edited_sections=sorted(state.edits)
        )
        stored = store.store_document(
            knowledge_content_bucket(),
            store.document_object_key(tenant_id, knowledge_id, f"v{version_id}"),
            document,
        )
        version = store.new_version(
            KnowledgeVersion(entry.latest_version + 1),
            version_id,
            utc_now(),
            author=author,
            stored=stored,
        )
        changes = EntryChanges(
            version=version,
            name=name,
            description=description,
            api_control=control.model_dump(by_alias=True),
            publish=request.publish,
        )
        appended = store.append_version(tenant_id, entry, changes)
        _written(stored, "append", retries=lost)
        request_digest(tenant_id, knowledge_id)
        return entry_dto(appended, version, parse_document(document))

    return _retried(f"knowledge {knowledge_id}", attempt)


def publish_version(
    tenant_id: int, knowledge_id: int, version: KnowledgeVersion
) -> ExternalKnowledgeDto:
    """Makes `version` the one published version (exactly one at a time)."""
    entry = live_entry(tenant_id, knowledge_id)
    if not 1 <= version <= entry.latest_version:
        raise NotFound(f"Version {version} of knowledge {knowledge_id} not found")
    if entry.published_version == version:
        return store.summary_dto(entry)  # already published: nothing changes
    return _set_published(tenant_id, entry, version)


def unpublish(tenant_id: int, knowledge_id: int) -> ExternalKnowledgeDto:
    """Leaves the entry with no published version (publishedVersion null)."""
    entry = live_entry(tenant_id, knowledge_id)
    if entry.published_version is None:
        return store.summary_dto(entry)
    return _set_published(tenant_id, entry, None)


def _set_published(
    tenant_id: int, entry: KnowledgeEntry, version: KnowledgeVersion | None
) -> ExternalKnowledgeDto:
    try:
        published = store.set_published_version(tenant_id, entry, version, now=utc_now())
    except WriteRaced as error:
        raise not_found(entry.id) from error  # deleted meanwhile
    return store.summary_dto(published)


def delete_knowledge(tenant_id: int, knowledge_id: int) -> None:
    """Soft delete: gone from the list, GET and card; links stored earlier still read."""
    if not store.delete_entry(tenant_id, knowledge_id, utc_now()):
        raise not_found(knowledge_id)


def edit_service_section(
    tenant_id: int,
    knowledge_id: int,
    section: Section,
    *,
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
    targets: dict[str, LinkTarget] | None = None

    def attempt(_lost: int) -> ServiceEditResult:
        nonlocal targets
        state = read_state(tenant_id, knowledge_id)
        editable(state, section)
        if targets is None:
            targets = link_targets(tenant_id, state.entry.provider, sent_items)
        content = build_content(
            {section: sent_items}, state.current_content, targets, creating=False
        )
        edited = content.items(section)
        edit_seq = state.edit_seq + 1
        stored = store.store_document(
            knowledge_content_bucket(),
            store.document_object_key(tenant_id, knowledge_id, f"edit-{section.value}-{edit_seq}"),
            {"items": [item.model_dump(mode="json", by_alias=True) for item in edited]},
        )
        edit = EditRecord(
            section=section.value,
            edited_at=utc_now(),
            edited_by=editor,
            note=note,
            based_on_version=state.latest_version,
            edit_seq=edit_seq,
            document=stored,
        )
        store.write_edit(tenant_id, state.entry, edit)
        request_digest(tenant_id, knowledge_id)
        return ServiceEditResult(
            knowledge_id=knowledge_id,
            section=section,
            based_on_version=state.latest_version,
            item_count=len(edited),
            reference_ids=[item.reference_id for item in edited],
        )

    return _retried(f"knowledge {knowledge_id}", attempt)


def editable(state: EntryState, section: Section) -> None:
    """InvalidInput unless `section` of the entry may take a service-side edit."""
    control = state.api_control
    if state.latest_version == NO_VERSION or control is None:
        raise InvalidInput(f"Knowledge {state.knowledge_id} has no version to edit yet")
    if control.owner(section) is Owner.API:
        raise InvalidInput(
            f"Section {section.payload_path} is owned by the API (apiControl "
            f"{section.value} true); it changes only through appends"
        )


def describe(error: ValidationError, prefix: str) -> str:
    """Names each failing field the way the HTTP layer does."""
    problems = []
    for detail in error.errors():
        path = ".".join(str(part) for part in (prefix, *detail.get("loc", ())))
        problems.append(f"Invalid field '{path}': {detail.get('msg', 'is not valid')}")
    return "; ".join(problems)


def _retried[T](what: str, attempt: Callable[[int], T]) -> T:
    """optimistic_write with a jittered back-off before each new round; `attempt` is told
    how many races it lost so far (0: first round, what was read before still holds)."""
    lost = -1

    def once() -> T:
        nonlocal lost
        lost += 1
        if lost:
            _back_off(lost)
        return attempt(lost)

    return optimistic_write(what, once, WRITE_ATTEMPTS, gave_up=_TOO_MANY)


def _back_off(attempt: int) -> None:
    # Jittered, so that the writers that lost a round do not collide again in the next.
    time.sleep(random.uniform(0, 0.005 * 2 ** min(attempt, 6)))  # noqa: S311 - jitter


def _written(stored: StoredDocument, operation: str, retries: int = 0) -> None:
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
