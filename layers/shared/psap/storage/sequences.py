"""Integer id sequences: one counter item per kind of record, handed out in blocks.

Ids are unique across tenants (as knowledge ids are), so an id of another tenant can only
ever answer 404, never another tenant's record with the same number. Every store draws its
ids here (tenants, incidents, events, media, catalog items, index versions, knowledge).

One counter item per kind serves the whole platform, and one item takes at most 1 000 writes
a second. So a container does not write it per id: it reserves a block of BLOCK_SIZE ids with
one atomic ADD and hands them out from memory (docs/design.md, "Ids, counters and exports").
Ids stay unique (every block is an ADD's own range) and increase within a container, but
they are not dense and not in creation order across containers: a container that stops
leaves the rest of its block unused, and two containers interleave their blocks.
"""

import threading
from dataclasses import dataclass
from typing import Final

from psap.storage.aws_errors import ConditionFailed, translated
from psap.storage.dynamodb import dynamodb

# 100 ids per write: a kind's counter item then takes 100 000 creates a second, platform-wide.
BLOCK_SIZE: Final = 100


def sequence_key(kind: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"SEQ#{kind}"}, "sk": {"S": "SEQ"}}


def reserve_run(table: str, kind: str, count: int) -> int:
    """Adds `count` to the counter item: the `count` ids up to the returned one are the
    caller's. For runs that must be consecutive, and for rare kinds kept dense (tenants)."""
    with translated(f"sequence {kind}"):
        answer = dynamodb().update_item(
            TableName=table,
            Key=sequence_key(kind),
            UpdateExpression="ADD #v :n",
            ExpressionAttributeNames={"#v": "value"},
            ExpressionAttributeValues={":n": {"N": str(count)}},
            ReturnValues="UPDATED_NEW",
        )
    return int(answer["Attributes"]["value"]["N"])


@dataclass
class _Block:
    next: int  # the next id to hand out
    last: int  # the block's last id


_blocks: dict[tuple[str, str], _Block] = {}
_lock = threading.Lock()  # the import CLI draws ids from several threads


def next_id(table: str, kind: str, count: int = 1) -> int:
    """Reserves `count` consecutive ids of `kind` and returns the last one.

    One id comes from this container's block (a new block is reserved when it runs out);
    a run of several ids is reserved with its own ADD, since a caller counts on them being
    consecutive."""
    if count != 1:
        return reserve_run(table, kind, count)
    with _lock:
        block = _blocks.get((table, kind))
        if block is None or block.next > block.last:
            last = reserve_run(table, kind, BLOCK_SIZE)
            block = _blocks[(table, kind)] = _Block(last - BLOCK_SIZE + 1, last)
        block.next += 1
        return block.next - 1


def forget_blocks() -> None:
    """Drops the blocks this process holds (a test's fresh embedded AWS starts at 0)."""
    with _lock:
        _blocks.clear()


def raise_floor(table: str, kind: str, at_least: int) -> None:
    """Moves the sequence to `at_least` if it is below, so ids taken from elsewhere (an
    import that keeps the platform's ids) are not handed out again in later blocks.

    Once per import batch, not per record (the item is shared by every tenant). A block
    reserved before the floor moved may still hold an imported id: within the tenant the
    record's conditional write refuses it and the writer draws the next id."""
    try:
        with translated(f"sequence {kind}"):
            dynamodb().update_item(
                TableName=table,
                Key=sequence_key(kind),
                UpdateExpression="SET #v = :floor",
                ConditionExpression="attribute_not_exists(#v) OR #v < :floor",
                ExpressionAttributeNames={"#v": "value"},
                ExpressionAttributeValues={":floor": {"N": str(at_least)}},
            )
    except ConditionFailed:
        return  # already at or above the floor
