"""Catalog administration (admin CLI, demo seed): JSON Lines import, publish and unpublish,
tenant licenses and imports. A change that alters what search can see asks the indexer
for a rebuild (one message per command, however many items changed)."""

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import ValidationError

from psap.clock import format_timestamp, utc_now
from psap.errors import InvalidInput, NotFound
from psap.resource_center import store
from psap.resource_center.models import CatalogItem, CatalogRecord
from psap.resource_center.store import Change
from psap.storage.sqs import send_message

MAX_LICENSE_NAME_LENGTH = 200

type RebuildRequest = Callable[[str], None]


def queue_rebuild_request(queue_url: str) -> RebuildRequest:
    """Asks the indexer (through its queue) to rebuild; the reason is logged there."""

    def request(reason: str) -> None:
        send_message(queue_url, {"reason": reason, "requestedAt": format_timestamp(utc_now())})

    return request


@dataclass(frozen=True)
class LineError:
    line: int  # 1-based line number in the file
    message: str


@dataclass
class ImportReport:
    changes: dict[Change, int] = field(default_factory=lambda: dict.fromkeys(Change, 0))
    errors: list[LineError] = field(default_factory=list)

    @property
    def searchable_changed(self) -> bool:
        return any(
            self.changes[change]
            for change in (Change.CREATED, Change.UPDATED, Change.PUBLISHED, Change.UNPUBLISHED)
        )

    def summary(self) -> str:
        counts = ", ".join(f"{count} {change.value}" for change, count in self.changes.items())
        return f"{counts}, {len(self.errors)} rejected"


def describe_validation_error(error: ValidationError) -> str:
    problems = []
    for detail in error.errors():
        where = ".".join(str(part) for part in detail.get("loc", ())) or "record"
        problems.append(f"{where}: {detail.get('msg', 'is not valid')}")
    return "; ".join(problems)


def parse_line(text: str) -> CatalogRecord:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidInput(f"not JSON: {error.msg} at column {error.colno}") from error
    if not isinstance(value, dict):
        raise InvalidInput("not a JSON object")
    try:
        return CatalogRecord.model_validate(value)
    except ValidationError as error:
        raise InvalidInput(describe_validation_error(error)) from error


_CHUNK_RECORDS = 50
_CHUNK_CHARACTERS = 1_000_000  # a transaction carries at most 4 MB


def import_catalog(
    lines: Iterable[str],
    now: datetime,
    request_rebuild: RebuildRequest | None = None,
    *,
    on_line: Callable[[int, LineError | None], None] | None = None,
) -> ImportReport:
    """Imports JSON Lines catalog records, idempotent by externalId. A bad line is reported
    with its number and skipped; the good lines are imported, in batches. `on_line` sees each
    line's outcome once it is stored (the CLI's progress bar)."""
    report = ImportReport()
    pending: list[tuple[int, CatalogRecord]] = []

    def flush() -> None:
        outcomes = store.upsert_records([record for _, record in pending], now)
        for (number, _), outcome in zip(pending, outcomes, strict=True):
            report.changes[outcome.change] += 1
            if on_line is not None:
                on_line(number, None)
        pending.clear()

    size = 0
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            record = parse_line(text)
        except InvalidInput as error:
            problem = LineError(number, error.info)
            report.errors.append(problem)
            if on_line is not None:
                on_line(number, problem)
            continue
        # A repeated externalId waits for the earlier one to be stored: the last line wins.
        if any(seen.external_id == record.external_id for _, seen in pending) or (
            size + len(text) > _CHUNK_CHARACTERS
        ):
            flush()
            size = 0
        pending.append((number, record))
        size += len(text)
        if len(pending) >= _CHUNK_RECORDS:
            flush()
            size = 0
    if pending:
        flush()
    if report.searchable_changed and request_rebuild is not None:
        request_rebuild(f"catalog import: {report.summary()}")
    return report


def resolve_item(reference: str) -> CatalogItem:
    """An item by catalog id (digits) or by externalId."""
    item_id = int(reference) if reference.isdigit() else store.find_item_id(reference)
    item = store.get_item(item_id) if item_id is not None else None
    if item is None:
        raise NotFound(f"Catalog item {reference} does not exist")
    return item


def set_published(
    reference: str,
    published: bool,
    now: datetime,
    *,
    request_rebuild: RebuildRequest | None = None,
) -> store.Upserted:
    item = resolve_item(reference)
    outcome = store.set_published(item.id, published, now)
    if outcome.change is not Change.UNCHANGED and request_rebuild is not None:
        request_rebuild(f"catalog item {item.id} {outcome.change.value}")
    return outcome


def _license_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > MAX_LICENSE_NAME_LENGTH:
        raise InvalidInput(f"A license name is 1-{MAX_LICENSE_NAME_LENGTH} characters")
    return name


def grant_license(tenant_id: int, license_name: str, now: datetime) -> str:
    name = _license_name(license_name)
    store.grant_license(tenant_id, name, now)
    return name


def revoke_license(tenant_id: int, license_name: str) -> str:
    name = _license_name(license_name)
    if not store.revoke_license(tenant_id, name):
        raise NotFound(f"Tenant {tenant_id} does not hold the license '{name}'")
    return name


def record_import(
    tenant_id: int, reference: str, now: datetime, *, version: int | None = None
) -> tuple[CatalogItem, int]:
    """Records that the tenant imported the item, at its current catalog version unless an
    earlier one is named (an import made before the item last changed)."""
    item = resolve_item(reference)
    imported = item.version if version is None else version
    if not 1 <= imported <= item.version:
        raise InvalidInput(f"Catalog item {item.id} has versions 1 to {item.version}")
    store.record_import(tenant_id, item.id, imported, now=now)
    return item, imported
