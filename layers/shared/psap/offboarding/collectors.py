"""The export steps' collectors, in order: each reads one page of what the tenant owns
(a Query of one of its partitions) into its kind's lines and the partitions to purge."""

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from psap.audit.chain import Link, head_line, record_line
from psap.audit.store import chains_between, days_with_records
from psap.clock import utc_now
from psap.config import (
    cad_table,
    knowledge_table,
    resource_center_table,
    settings,
    tenant_data_table,
)
from psap.events.store import EVENTS
from psap.incidents.store import INCIDENTS
from psap.knowledge.models import KnowledgeType
from psap.knowledge.store import entry_scopes, external_id_key, listing_pk
from psap.media.store import hash_key
from psap.offboarding.pages import (
    PROBE,
    Kind,
    Page,
    dynamo_target,
    item_line,
    objects_target,
    partition_items,
)
from psap.qa.store import listing_partitions as evaluation_listings
from psap.storage import numbered
from psap.storage.attributes import from_item
from psap.storage.aws_errors import translated
from psap.storage.dynamodb import dynamodb
from psap.storage.partitions import registered_page, registry_partitions
from psap.storage.queries import partition_request
from psap.users.store import UserSortField, user_from_item, user_pk
from psap.users.store import listing_partitions as user_listings
from psap.users.store import pointer_pk as user_pointer_pk
from psap.webhooks.secrets import secret_name
from psap.webhooks.store import TENANT_DIRECTORY

# Connector attributes that name where a secret is kept: the archive holds settings only.
_SECRET_WORDS: Final = ("secret", "bearer", "token")
DEFAULT_AUDIT_DAYS: Final = 365


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
            (
                Kind.TENANT_EXPORTS,
                found.audit_export_bucket,
                f"tenants/{tenant_id}/tenant-exports/",
            ),
        ]
    return [objects_target(kind, bucket, prefix) for kind, bucket, prefix in prefixes if bucket]


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
            items = list(partition_items(table, registered.pk))
            page.add(kind, [item_line(raw) for raw in items])
            page.purge.append(dynamo_target(kind, table, registered.pk))
            derived = _derived(tenant_id, kind, items)
            page.purge.extend(dynamo_target(kind, table, pk) for pk in derived)
        if following is None:
            page.purge.extend(
                dynamo_target(Kind.REGISTRY, table, pk) for pk in registry_partitions(tenant_id)
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
        items = list(partition_items(table, pk))
        page.lines.extend(item_line(raw) for raw in items)
        page.purge.append(dynamo_target(Kind.USERS, table, pk))
        for raw in items:
            if raw["sk"]["S"] == "USER":
                user = user_from_item(from_item(raw))
                listings = user_listings(tenant_id, user)
                page.purge.extend(dynamo_target(Kind.USERS, table, pk) for pk in listings)
    return page


def _connector_ids(tenant_id: int) -> list[str]:
    return [str(raw["sk"]["S"]) for raw in partition_items(cad_table(), f"T#{tenant_id}#CON")]


def _connectors(tenant_id: int, cursor: Any) -> Page:
    table = cad_table()
    page = Page()
    for raw in partition_items(table, f"T#{tenant_id}#CON"):
        page.lines.append(
            {
                name: value
                for name, value in item_line(raw).items()
                if not any(word in name.lower() for word in _SECRET_WORDS)
            }
        )
    page.purge.append(dynamo_target(Kind.CONNECTORS, table, f"T#{tenant_id}#CON"))
    for connector_id in _connector_ids(tenant_id):
        for suffix in ("DLV", "DEAD", "HELD", "JOB"):
            page.purge.append(
                dynamo_target(Kind.CONNECTORS, table, f"T#{tenant_id}#CON#{connector_id}#{suffix}")
            )
        if settings().connector_secret_prefix:
            page.purge.append(
                {"kind": Kind.CONNECTORS.value, "secret": secret_name(tenant_id, connector_id)}
            )
    # `T#{t}#DUE`: due pointers from before the minute index. In the minute index
    # (`DUE#{minute}#{shard}`, shared by every tenant) a pointer whose delivery is gone is
    # dropped by the scheduler when its minute comes, within LOST_MESSAGE_GRACE or its wait.
    for pk in (f"T#{tenant_id}#DUE", f"T#{tenant_id}#RATE"):
        page.purge.append(dynamo_target(Kind.CONNECTORS, table, pk))
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
        page.lines.extend(item_line(raw) for raw in partition_items(table, pk))
        page.purge.append(dynamo_target(Kind.DELIVERIES, table, pk))
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
        lines=[item_line(raw) for raw in partition_items(table, pk)],
        purge=[dynamo_target(Kind.RESOURCE_CENTER, table, pk)],
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
