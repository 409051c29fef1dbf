"""Tenant offboarding: export everything a tenant owns to a signed archive, then purge it.

The job runs in bounded steps (a page of ids, pointers or registry entries, a day of audit
chains, 25 partitions to delete) and writes a checkpoint item after each (auth table,
TENANT#{t} / OFFBOARDING), so a crash resumes where it stopped: the kind files in the work
directory are cut back to their checkpointed sizes and the step runs again. Every read is a
Query of one of the tenant's partitions: the users' and deliveries' listings, and the
tenant's partition registry (psap.storage.partitions) for what no listing reaches (records
whose ids come from shared sequences, deleted evaluations, CAD submissions, jobs). Nothing
scans a table, nothing walks a shared sequence.

Exported partitions are recorded in `partitions.jsonl` beside the kind files; the purge
walks that list after the archive is sealed, so nothing is deleted before it is archived.
Audit records are exported and kept (retention); credentials are revoked, never deleted.
"""

import base64
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from psap.audit.chain import Link, head_line, record_line
from psap.audit.store import chains_between, days_with_records
from psap.auth import issuing
from psap.auth import store as tenants
from psap.auth.credentials import tenant_limits_key
from psap.clock import format_timestamp, utc_now
from psap.config import (
    auth_table,
    cad_table,
    knowledge_table,
    resource_center_table,
    settings,
    tenant_data_table,
)
from psap.errors import Conflict
from psap.events.store import EVENTS
from psap.incidents.store import INCIDENTS
from psap.knowledge.models import KnowledgeType
from psap.knowledge.store import entry_scopes, external_id_key, listing_pk
from psap.media.store import hash_key
from psap.offboarding.archive import ArchiveFile, write_archive
from psap.qa.store import listing_partitions as evaluation_listings
from psap.storage import numbered
from psap.storage.attributes import from_item
from psap.storage.aws import translated
from psap.storage.documents import decode_document
from psap.storage.dynamodb import dynamodb, read_item
from psap.storage.partitions import registered_page, registry_partitions
from psap.storage.queries import partition_request, query_pages
from psap.storage.s3 import s3
from psap.users.store import UserSortField, user_from_item, user_pk
from psap.users.store import listing_partitions as user_listings
from psap.users.store import pointer_pk as user_pointer_pk
from psap.webhooks.secrets import secret_name, secrets_manager
from psap.webhooks.store import TENANT_DIRECTORY

PROBE: Final = 100  # ids per BatchGetItem
PURGE_STEP: Final = 25  # partitions deleted per step
_CHECKPOINT_SK: Final = "OFFBOARDING"
_PARTITIONS: Final = "partitions.jsonl"
# Connector attributes that name where a secret is kept: the archive holds settings only.
_SECRET_WORDS: Final = ("secret", "bearer", "token")
DEFAULT_AUDIT_DAYS: Final = 365


class Kind(StrEnum):
    KNOWLEDGE = "knowledge"
    USERS = "users"  # with their enrollments and task lists (same partition)
    EVALUATIONS = "evaluations"
    INCIDENTS = "incidents"
    EVENTS = "events"
    MEDIA = "media"
    CONNECTORS = "connectors"
    DELIVERIES = "deliveries"
    RESOURCE_CENTER = "resourceCenter"
    CAD_SUBMISSIONS = "cadSubmissions"  # CAD intake idempotency records, with raw bodies
    INCIDENT_UPLOADS = "incidentUploads"  # upload jobs
    AUDIT_EXPORTS = "auditExports"  # audit export jobs (the records themselves are kept)
    AUDIT = "audit"  # exported, kept
    REGISTRY = "registry"  # the partition registry itself: purged, no file of its own


class Refused(Conflict):
    """The tenant still has credentials in force: nothing was changed."""


@dataclass
class Page:
    """One step's work: lines for the kind's file, partitions to purge later, next cursor."""

    lines: list[dict[str, Any]] = field(default_factory=list)
    purge: list[dict[str, Any]] = field(default_factory=list)
    cursor: Any = None
    # Lines of other kinds' files (a registry page names partitions of several kinds).
    elsewhere: dict["Kind", list[dict[str, Any]]] = field(default_factory=dict)

    def add(self, kind: "Kind", lines: list[dict[str, Any]]) -> None:
        self.elsewhere.setdefault(kind, []).extend(lines)


@dataclass
class Report:
    tenant_id: int
    archive: Path
    exported: dict[str, int]
    deleted: dict[str, int]
    revoked: list[str]


# ------------------------------------------------------------------------------ reading


def _plain(value: Mapping[str, Any]) -> Any:
    """A DynamoDB attribute value as JSON; a stored (compressed) document as its JSON."""
    ((tag, inner),) = value.items()
    if tag in ("S", "BOOL"):
        return inner
    if tag == "NULL":
        return None
    if tag == "N":
        return int(inner) if inner.lstrip("-").isdigit() else float(inner)
    if tag == "B":
        try:
            return {"document": decode_document(bytes(inner))}
        except Exception:  # not a document: kept byte for byte
            return {"base64": base64.b64encode(bytes(inner)).decode()}
    if tag == "L":
        return [_plain(element) for element in inner]
    if tag == "M":
        return {name: _plain(element) for name, element in inner.items()}
    if tag == "BS":
        return [base64.b64encode(bytes(element)).decode() for element in inner]
    return sorted(inner)  # SS, NS


def _line(raw: Mapping[str, Any]) -> dict[str, Any]:
    return {name: _plain(value) for name, value in raw.items()}


def _partition(table: str, pk: str) -> Iterator[dict[str, Any]]:
    for page in query_pages(partition_request(table, pk), f"partition {pk}"):
        yield from page


def _dynamo(kind: Kind, table: str, pk: str) -> dict[str, Any]:
    return {"kind": kind.value, "table": table, "pk": pk}


# ------------------------------------------------------------------------------ kinds


# The item of a registered partition that places it in index partitions, by kind.
_MAIN_SK: Final = {
    Kind.KNOWLEDGE: "ENTRY",
    Kind.EVALUATIONS: "EVAL",
    Kind.INCIDENTS: "RECORD",
    Kind.EVENTS: "RECORD",
    Kind.MEDIA: "RECORD",
}


def _derived(tenant_id: int, kind: Kind, items: list[dict[str, Any]]) -> list[str]:
    """The index partitions a registered partition's main item places it in (listing
    pointers and counters, number and content guards): purged with it."""
    main = [raw for raw in items if raw["sk"]["S"] == _MAIN_SK.get(kind)]
    if not main:
        return []
    first = from_item(main[0])
    if kind == Kind.KNOWLEDGE and "provider" in first:
        provider = str(first["provider"])
        partitions = [
            listing_pk(tenant_id, scope)
            for scope in entry_scopes(provider, KnowledgeType(first["knowledgeType"]))
        ]
        if first.get("externalId"):
            guard = external_id_key(tenant_id, provider, str(first["externalId"]))
            partitions.append(guard["pk"]["S"])
        return partitions
    if kind == Kind.EVALUATIONS:
        return evaluation_listings(tenant_id, first)
    if kind in (Kind.INCIDENTS, Kind.EVENTS) and "number" in first:
        record_kind = INCIDENTS if kind == Kind.INCIDENTS else EVENTS
        return [numbered.number_key(record_kind, tenant_id, str(first["number"]))["pk"]["S"]]
    if kind == Kind.MEDIA:
        sha256 = Path(str(first.get("originalKey", ""))).stem
        if "eventId" not in first or not sha256:
            return []
        return [hash_key(tenant_id, int(first["eventId"]), sha256)["pk"]["S"]]
    return []


def _objects(kind: Kind, bucket: str, prefix: str) -> dict[str, Any]:
    return {"kind": kind.value, "bucket": bucket, "prefix": prefix}


def _tenant_objects(table: str, tenant_id: int) -> list[dict[str, Any]]:
    """The tenant's object prefixes in the buckets beside a registry's table."""
    found = settings()
    prefixes: list[tuple[Kind, str | None, str]] = []
    if table == found.knowledge_table:
        prefixes.append((Kind.KNOWLEDGE, found.knowledge_content_bucket, f"tenants/{tenant_id}/"))
    if table == found.tenant_data_table:
        prefixes += [
            (Kind.MEDIA, found.media_bucket, f"media/T{tenant_id}/"),
            (
                Kind.INCIDENT_UPLOADS,
                found.incident_upload_bucket,
                f"tenants/{tenant_id}/incident-uploads/",
            ),
            (Kind.AUDIT_EXPORTS, found.audit_export_bucket, f"tenants/{tenant_id}/audit-exports/"),
        ]
    return [_objects(kind, bucket, prefix) for kind, bucket, prefix in prefixes if bucket]


def _registered(table_of: Callable[[], str]) -> Callable[[int, Any], Page]:
    """A page of the tenant's partition registry in one table (psap.storage.partitions):
    each registered partition whole, into its kind's file, and its index partitions."""

    def collect(tenant_id: int, cursor: Any) -> Page:
        table = table_of()
        entries, following = registered_page(table, tenant_id, cursor, limit=PROBE)
        page = Page(cursor=following)
        if cursor is None:
            page.purge.extend(_tenant_objects(table, tenant_id))
        for registered in entries:
            kind = Kind(registered.kind)
            items = list(_partition(table, registered.pk))
            page.add(kind, [_line(raw) for raw in items])
            page.purge.append(_dynamo(kind, table, registered.pk))
            derived = _derived(tenant_id, kind, items)
            page.purge.extend(_dynamo(kind, table, pk) for pk in derived)
        if following is None:
            page.purge.extend(
                _dynamo(Kind.REGISTRY, table, pk) for pk in registry_partitions(tenant_id)
            )
        return page

    return collect


def _user_ids(tenant_id: int, cursor: Any) -> tuple[list[int], Any]:
    """A page of the tenant's user ids from its unfiltered id listing, and the next cursor."""
    pointers = user_pointer_pk(tenant_id, "ALL", UserSortField.ID)
    request: dict[str, Any] = {
        **partition_request(tenant_data_table(), pointers),
        "Limit": PROBE,
    }
    if cursor:
        request["ExclusiveStartKey"] = cursor
    with translated("user listing"):
        answer = dynamodb().query(**request)
    ids = [int(item["sk"]["S"].rsplit("\x1f", 1)[-1]) for item in answer.get("Items", [])]
    return ids, answer.get("LastEvaluatedKey")


def _users(tenant_id: int, cursor: Any) -> Page:
    table = tenant_data_table()
    ids, following = _user_ids(tenant_id, cursor)
    page = Page(cursor=following)
    for user_id in ids:
        pk = user_pk(tenant_id, user_id)
        items = list(_partition(table, pk))
        page.lines.extend(_line(raw) for raw in items)
        page.purge.append(_dynamo(Kind.USERS, table, pk))
        for raw in items:
            if raw["sk"]["S"] == "USER":
                user = user_from_item(from_item(raw))
                listings = user_listings(tenant_id, user)
                page.purge.extend(_dynamo(Kind.USERS, table, pk) for pk in listings)
    return page


def _connector_ids(tenant_id: int) -> list[str]:
    return [str(raw["sk"]["S"]) for raw in _partition(cad_table(), f"T#{tenant_id}#CON")]


def _connectors(tenant_id: int, cursor: Any) -> Page:
    table = cad_table()
    page = Page()
    for raw in _partition(table, f"T#{tenant_id}#CON"):
        page.lines.append(
            {
                name: value
                for name, value in _line(raw).items()
                if not any(word in name.lower() for word in _SECRET_WORDS)
            }
        )
    page.purge.append(_dynamo(Kind.CONNECTORS, table, f"T#{tenant_id}#CON"))
    for connector_id in _connector_ids(tenant_id):
        for suffix in ("DLV", "DEAD", "HELD", "JOB"):
            page.purge.append(
                _dynamo(Kind.CONNECTORS, table, f"T#{tenant_id}#CON#{connector_id}#{suffix}")
            )
        if settings().connector_secret_prefix:
            page.purge.append(
                {"kind": Kind.CONNECTORS.value, "secret": secret_name(tenant_id, connector_id)}
            )
    # `T#{t}#DUE`: due pointers from before the minute index. In the minute index
    # (`DUE#{minute}#{shard}`, shared by every tenant) a pointer whose delivery is gone is
    # dropped by the scheduler when its minute comes, within LOST_MESSAGE_GRACE or its wait.
    for pk in (f"T#{tenant_id}#DUE", f"T#{tenant_id}#RATE"):
        page.purge.append(_dynamo(Kind.CONNECTORS, table, pk))
    page.purge.append(
        {
            "kind": Kind.CONNECTORS.value,
            "table": table,
            "pk": TENANT_DIRECTORY,
            "sk": f"T#{tenant_id:012d}",
        }
    )
    return page


def _deliveries(tenant_id: int, cursor: Any) -> Page:
    """A page of one connector's delivery listing; each delivery's partition (attempts)."""
    table = cad_table()
    connectors = _connector_ids(tenant_id)
    position = dict(cursor or {"connector": 0})
    index = int(position["connector"])
    if index >= len(connectors):
        return Page()
    request: dict[str, Any] = {
        **partition_request(table, f"T#{tenant_id}#CON#{connectors[index]}#DLV"),
        "Limit": PROBE,
    }
    if position.get("after"):
        request["ExclusiveStartKey"] = position["after"]
    with translated("delivery listing"):
        answer = dynamodb().query(**request)
    page = Page()
    for pointer in answer.get("Items", []):
        pk = f"T#{tenant_id}#DLV#{pointer['deliveryId']['S']}"
        page.lines.extend(_line(raw) for raw in _partition(table, pk))
        page.purge.append(_dynamo(Kind.DELIVERIES, table, pk))
    following = answer.get("LastEvaluatedKey")
    if following:
        page.cursor = {"connector": index, "after": following}
    elif index + 1 < len(connectors):
        page.cursor = {"connector": index + 1}
    return page


def _resource_center(tenant_id: int, cursor: Any) -> Page:
    if not settings().resource_center_table:
        return Page()
    table = resource_center_table()
    pk = f"T#{tenant_id}#RC"
    return Page(
        lines=[_line(raw) for raw in _partition(table, pk)],
        purge=[_dynamo(Kind.RESOURCE_CENTER, table, pk)],
    )


def _audit(tenant_id: int, cursor: Any) -> Page:
    """One day of the tenant's chains, each whole and ended by its head, so the archive's
    audit file verifies with `psap-admin audit verify`. The days are those the writers
    marked (audit.store.days_with_records), not every day of the retention window. Kept,
    never purged. The cursor is the last day done."""
    after = _audit_cursor_day(cursor)
    days = [day for day in days_with_records(tenant_id) if after is None or day > after]
    if not days:
        return Page()
    day = days[0]
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    page = Page(cursor=day.isoformat() if len(days) > 1 else None)
    last: Link | None = None
    for chain in chains_between(tenant_id, start, start):
        for entry in chain:
            if last is not None and last.chain != entry.link.chain:
                page.lines.append(head_line(last))
            last = entry.link
            page.lines.append(record_line(entry.record, entry.link))
    if last is not None:
        page.lines.append(head_line(last))
    return page


def _audit_cursor_day(cursor: Any) -> date | None:
    """The last day a step archived. A job started by the previous version counted days of
    the retention window from its start (an int): that count names the same day."""
    if cursor is None:
        return None
    if isinstance(cursor, int):
        days = settings().audit_retention_days or DEFAULT_AUDIT_DAYS
        return (utc_now() - timedelta(days=days - cursor + 1)).date()
    return date.fromisoformat(str(cursor))


# Steps in order: each a collector and the kind its own lines go to (None: a registry page,
# whose lines go to the kind each registered partition names).
STEPS: Final[list[tuple[Kind | None, Callable[[int, Any], Page]]]] = [
    (None, _registered(knowledge_table)),
    (Kind.USERS, _users),
    (None, _registered(tenant_data_table)),
    (Kind.CONNECTORS, _connectors),
    (Kind.DELIVERIES, _deliveries),
    (None, _registered(cad_table)),
    (Kind.RESOURCE_CENTER, _resource_center),
    (Kind.AUDIT, _audit),
]
ORDER: Final = [kind for kind in Kind if kind is not Kind.REGISTRY]


# ------------------------------------------------------------------------------ purging


def _purge(target: Mapping[str, Any]) -> int:
    """Deletes one recorded target; the number of items, objects or secrets deleted."""
    if "secret" in target:
        try:
            with translated("connector secret"):
                secrets_manager().delete_secret(
                    SecretId=target["secret"], ForceDeleteWithoutRecovery=True
                )
        except Exception as error:
            if "ResourceNotFound" in type(error.__cause__ or error).__name__ + str(error):
                return 0
            raise
        return 1
    if "bucket" in target:
        return _purge_objects(str(target["bucket"]), str(target["prefix"]))
    table = str(target["table"])
    if "sk" in target:
        with translated("delete item"):
            removed = dynamodb().delete_item(
                TableName=table,
                Key={"pk": {"S": target["pk"]}, "sk": {"S": target["sk"]}},
                ReturnValues="ALL_OLD",
            )
        return 1 if removed.get("Attributes") else 0
    deleted = 0
    request = {**partition_request(table, str(target["pk"])), "ProjectionExpression": "pk, sk"}
    for page in query_pages(request, f"partition {target['pk']}"):
        for first in range(0, len(page), 25):
            batch = [{"DeleteRequest": {"Key": key}} for key in page[first : first + 25]]
            pending: dict[str, Any] = {table: batch}
            while pending:
                with translated("batch delete"):
                    answer = dynamodb().batch_write_item(RequestItems=pending)
                pending = dict(answer.get("UnprocessedItems") or {})
            deleted += len(batch)
    return deleted


def _purge_objects(bucket: str, prefix: str) -> int:
    deleted = 0
    with translated(f"objects under {prefix}"):
        pages = s3().get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix=prefix)
        for page in pages:
            versions: list[Any] = [
                {"Key": found["Key"], "VersionId": found["VersionId"]}
                for found in [*page.get("Versions", []), *page.get("DeleteMarkers", [])]
            ]
            if versions:
                s3().delete_objects(Bucket=bucket, Delete={"Objects": versions, "Quiet": True})
                deleted += sum(1 for found in page.get("Versions", []))
    return deleted


# ------------------------------------------------------------------------------ the job


def _checkpoint_key(tenant_id: int) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": _CHECKPOINT_SK}}


def read_checkpoint(tenant_id: int) -> dict[str, Any] | None:
    item = read_item(auth_table(), _checkpoint_key(tenant_id), "offboarding checkpoint")
    return json.loads(str(item["state"])) if item else None


def _save(tenant_id: int, state: Mapping[str, Any]) -> None:
    with translated("offboarding checkpoint"):
        dynamodb().put_item(
            TableName=auth_table(),
            Item={**_checkpoint_key(tenant_id), "state": {"S": json.dumps(state)}},
        )


def active_credentials(tenant_id: int) -> list[str]:
    now = utc_now()
    return [
        credential.credential_id
        for credential in tenants.list_credentials(tenant_id)
        if not credential.revoked and (credential.expires_at is None or now < credential.expires_at)
    ]


def revoke_all(tenant_id: int) -> list[str]:
    """Revokes every credential in force (the cascade takes what each issued)."""
    revoked: list[str] = []
    for credential_id in active_credentials(tenant_id):
        if credential_id in revoked:
            continue
        revocation = issuing.revoke(tenant_id, credential_id)
        revoked.extend(
            credential.credential_id for credential in [revocation.credential, *revocation.cascaded]
        )
    return revoked


def _file(work: Path, kind: str) -> Path:
    return work / f"{kind}.jsonl"


def _append(path: Path, lines: list[dict[str, Any]]) -> None:
    with path.open("a", encoding="utf-8") as file:
        for line in lines:
            file.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")


def _sizes(work: Path) -> dict[str, int]:
    return {path.name: path.stat().st_size for path in work.glob("*.jsonl")}


def _cut_back(work: Path, sizes: Mapping[str, int]) -> None:
    """A crash after an append and before its checkpoint: forget the unrecorded lines."""
    for path in work.glob("*.jsonl"):
        with path.open("r+b") as file:
            file.truncate(sizes.get(path.name, 0))


def offboard(
    tenant_id: int,
    out: Path,
    key: bytes,
    *,
    force: bool = False,
    on_step: Callable[[str], None] | None = None,
) -> Report:
    """Runs (or resumes) the tenant's offboarding to its end. `on_step` is called after
    each checkpoint with the step's name (a test injects its crash there)."""
    tenants.get_tenant(tenant_id)  # NotFound names the tenant
    state = read_checkpoint(tenant_id)
    revoked: list[str] = []
    if state is None:
        active = active_credentials(tenant_id)
        if active and not force:
            raise Refused(
                f"Tenant {tenant_id} still has {len(active)} active credential(s) "
                f"({', '.join(active)}): revoke them, or offboard with --force"
            )
        revoked = revoke_all(tenant_id)
        state = {
            "phase": "export",
            "kind": 0,
            "cursor": None,
            "sizes": {},
            "purgeLine": 0,
            "deleted": {},
            "revoked": revoked,
            "startedAt": format_timestamp(utc_now()),
            "archive": str(out),
        }
        if (work := _work(out)).exists():
            for stale in work.glob("*.jsonl"):
                stale.unlink()
        _save(tenant_id, state)
    work = _work(Path(state["archive"]))
    work.mkdir(parents=True, exist_ok=True)
    step = _stepper(tenant_id, state, work, on_step)
    while state["phase"] == "export":
        _export_step(tenant_id, state, work)
        step("export")
    if state["phase"] == "seal":
        files = [ArchiveFile(f"{kind.value}.jsonl", _file(work, kind.value)) for kind in ORDER]
        for file in files:
            file.path.touch()
        write_archive(
            Path(state["archive"]), tenant_id, files, key=key, created_at=state["startedAt"]
        )
        state["phase"] = "purge"
        step("seal")
    while state["phase"] == "purge":
        _purge_step(state, work)
        step("purge")
    if state["phase"] == "finish":
        state["revoked"] = [*state["revoked"], *revoke_all(tenant_id)]
        with translated("tenant limits"):
            dynamodb().delete_item(TableName=auth_table(), Key=tenant_limits_key(tenant_id))
        state["phase"] = "done"
        state["finishedAt"] = format_timestamp(utc_now())
        step("finish")
    exported = {kind.value: _lines(_file(work, kind.value)) for kind in ORDER if work.exists()}
    return Report(
        tenant_id=tenant_id,
        archive=Path(state["archive"]),
        exported=exported,
        deleted=dict(state["deleted"]),
        revoked=list(state["revoked"]),
    )


def _work(out: Path) -> Path:
    return out.with_name(out.name + ".work")


def _lines(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as file:
        return sum(1 for _ in file)


def _stepper(
    tenant_id: int, state: dict[str, Any], work: Path, on_step: Callable[[str], None] | None
) -> Callable[[str], None]:
    def step(name: str) -> None:
        state["sizes"] = _sizes(work)
        _save(tenant_id, state)
        if on_step is not None:
            on_step(name)

    return step


def _export_step(tenant_id: int, state: dict[str, Any], work: Path) -> None:
    _cut_back(work, state["sizes"])
    own, collector = STEPS[state["kind"]]
    page = collector(tenant_id, state["cursor"])
    if own is not None:
        page.add(own, page.lines)
    for kind, lines in page.elsewhere.items():
        _append(_file(work, kind.value), lines)
    _append(work / _PARTITIONS, page.purge)
    if page.cursor is None:
        state["kind"] += 1
        state["cursor"] = None
        if state["kind"] == len(STEPS):
            state["phase"] = "seal"
    else:
        state["cursor"] = page.cursor


def _purge_step(state: dict[str, Any], work: Path) -> None:
    path = work / _PARTITIONS
    targets = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    first = int(state["purgeLine"])
    seen: set[str] = set()
    for text in targets[first : first + PURGE_STEP]:
        if text in seen:
            continue
        seen.add(text)
        target = json.loads(text)
        deleted = _purge(target)
        state["deleted"][target["kind"]] = state["deleted"].get(target["kind"], 0) + deleted
    state["purgeLine"] = first + PURGE_STEP
    if state["purgeLine"] >= len(targets):
        state["phase"] = "finish"


def archive_key_from(environment: Mapping[str, str], key_file: str | None) -> bytes | None:
    """The archive key: a key file's bytes, else $PSAP_ARCHIVE_KEY; None when neither."""
    if key_file:
        return Path(key_file).read_bytes().strip()
    value = environment.get("PSAP_ARCHIVE_KEY", "").strip()
    return value.encode() if value else None
