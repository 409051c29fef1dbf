"""Optimistic writes: read, build, write on condition that nothing changed; on a lost race,
read again. Bounded, so a hot item answers "retry later" instead of spinning a Lambda."""

from collections.abc import Callable, Mapping
from typing import Any

from psap.errors import StoreUnavailable
from psap.storage.aws_errors import ConditionFailed

ATTEMPTS = 5


class Raced(StoreUnavailable):
    """Every attempt lost to a concurrent writer: our problem (5xx), retry later."""


def optimistic_write[T](
    what: str, attempt: Callable[[], T], attempts: int = ATTEMPTS, *, gave_up: str | None = None
) -> T:
    """Runs `attempt` (a read, then a write conditional on what was read) until it returns;
    a ConditionFailed from it (a transaction cancellation is one) means another writer came
    between, and the next attempt reads again. After `attempts` lost races: Raced, whose
    message is `what: gave_up` ("too many concurrent writers, retry later" unless told).
    An attempt raises ConditionFailed itself for other reasons to read again (the record
    vanished under its number); domain errors and StoreUnavailable pass through at once."""
    for _ in range(attempts):
        try:
            return attempt()
        except ConditionFailed:
            continue
    raise Raced(f"{what}: {gave_up or 'too many concurrent writers, retry later'}")


def revision_of(item: Mapping[str, Any] | None) -> int:
    """The `rev` of an unmarshalled item; 0 for no item."""
    return int(item["rev"]) if item else 0


def revised_put(table: str, item: dict[str, Any], old: Mapping[str, Any] | None) -> dict[str, Any]:
    """A transaction Put of `item` on condition that the stored item is still at the
    revision `old` was read at (no `old`: that there is still no item)."""
    put: dict[str, Any] = {"TableName": table, "Item": item}
    if old is None:
        put["ConditionExpression"] = "attribute_not_exists(pk)"
    else:
        put["ConditionExpression"] = "rev = :seen"
        put["ExpressionAttributeValues"] = {":seen": {"N": str(revision_of(old))}}
    return put
