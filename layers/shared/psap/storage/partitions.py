"""The tenant's partition registry: where a tenant's offboarding finds partitions that no
tenant listing reaches (keyed by a CAD submission's id, a job's random id, a shared sequence's id,
or an evaluation the tenant deleted).

Layout, in the same table as the partitions it names (every key begins with the tenant):

  T#{t}#PART#{shard}  / {pk}    kind (the offboarding's file for it)

An entry is written once, before (or in the same transaction as) the partition's first item,
so no partition exists unregistered; writing it again is harmless (same key, same content).
The registry is spread over SHARDS partitions (by a hash of the named key) so that a tenant
creating records fast never puts all its registrations on one key; reading it back is
SHARDS Queries of the tenant's own keys.
"""

import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from psap.storage.aws_errors import ConditionFailed, translated
from psap.storage.dynamodb import dynamodb
from psap.storage.queries import query_page

SHARDS: Final = 8
# Keys this warm container has registered: a hot path (CAD intake) pays the registry's one
# write per new CAD source, not per request. Bounded; forgetting only costs a write again.
_REMEMBERED_MAX: Final = 10_000
_remembered: set[tuple[str, str]] = set()


class PartitionKind:
    """What a registered partition holds, by the offboarding archive's file for it."""

    EVALUATION: Final = "evaluations"
    CAD_SUBMISSIONS: Final = "cadSubmissions"
    INCIDENT_UPLOAD: Final = "incidentUploads"
    AUDIT_EXPORT: Final = "auditExports"
    TENANT_EXPORT: Final = "tenantExports"
    KNOWLEDGE: Final = "knowledge"
    INCIDENT: Final = "incidents"
    EVENT: Final = "events"
    MEDIA: Final = "media"


def registry_pk(tenant_id: int, shard: int) -> str:
    return f"T#{tenant_id}#PART#{shard}"


def registry_item(
    tenant_id: int, pk: str, kind: str, *, expires_at_epoch: int | None = None
) -> dict[str, Any]:
    shard = zlib.crc32(pk.encode()) % SHARDS
    item = {
        "pk": {"S": registry_pk(tenant_id, shard)},
        "sk": {"S": pk},
        "kind": {"S": kind},
    }
    if expires_at_epoch is not None:
        # A partition whose items expire (TTL) takes its entry with it, in a table whose
        # TTL attribute is expiresAtEpoch: the registry does not grow with expired data.
        item["expiresAtEpoch"] = {"N": str(expires_at_epoch)}
    return item


def registration(table: str, tenant_id: int, pk: str, *, kind: str) -> dict[str, Any]:
    """The registry entry as a transaction's Put, written with the partition's first item
    (unconditional: a replay writes the same item)."""
    return {"Put": {"TableName": table, "Item": registry_item(tenant_id, pk, kind)}}


def register(
    table: str, tenant_id: int, pk: str, *, kind: str, expires_at_epoch: int | None = None
) -> None:
    """Registers the partition (a conditional put: an existing entry costs no change), once
    per warm container. Called before the partition's first write; `expires_at_epoch` for a
    partition that expires as a whole (DynamoDB TTL), not before it."""
    if (table, pk) in _remembered:
        return
    try:
        with translated("partition registry"):
            dynamodb().put_item(
                TableName=table,
                Item=registry_item(tenant_id, pk, kind, expires_at_epoch=expires_at_epoch),
                ConditionExpression="attribute_not_exists(pk)",
            )
    except ConditionFailed:
        pass  # registered already: by another container, or before a cold start
    if len(_remembered) >= _REMEMBERED_MAX:
        _remembered.clear()
    _remembered.add((table, pk))


@dataclass(frozen=True)
class Registered:
    pk: str
    kind: str


def registered_page(
    table: str, tenant_id: int, cursor: dict[str, Any] | None, *, limit: int
) -> tuple[list[Registered], dict[str, Any] | None]:
    """A page of the tenant's registered partitions and the cursor of the next (None at
    the end): one Query of one shard."""
    position = cursor or {"shard": 0}
    shard = int(position["shard"])
    request = {
        "TableName": table,
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": registry_pk(tenant_id, shard)}},
        "ConsistentRead": True,
        "Limit": limit,
    }
    answer = query_page(request, "partition registry", position.get("after"))
    found = [
        Registered(pk=str(item["sk"]["S"]), kind=str(item["kind"]["S"]))
        for item in answer.get("Items", [])
    ]
    following = answer.get("LastEvaluatedKey")
    if following:
        return found, {"shard": shard, "after": following}
    return found, ({"shard": shard + 1} if shard + 1 < SHARDS else None)


def registry_partitions(tenant_id: int) -> Iterator[str]:
    """The registry's own partitions (what the offboarding deletes last)."""
    return (registry_pk(tenant_id, shard) for shard in range(SHARDS))


def forget_registrations() -> None:
    """Forgets what this container registered (a test's fresh embedded AWS has none)."""
    _remembered.clear()
