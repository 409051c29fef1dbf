"""Integer id sequences: one counter item per kind of record, shared by every tenant.

Ids are unique across tenants (as knowledge ids are), so an id of another tenant can only
ever answer 404, never another tenant's record with the same number. Every store draws its
ids here (tenants, incidents, events, media, catalog items, index versions).
"""

from psap.storage.aws import ConditionFailed, translated
from psap.storage.dynamodb import dynamodb


def sequence_key(kind: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"SEQ#{kind}"}, "sk": {"S": "SEQ"}}


def next_id(table: str, kind: str, count: int = 1) -> int:
    """Reserves `count` consecutive ids of `kind` and returns the last one."""
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


def raise_floor(table: str, kind: str, at_least: int) -> None:
    """Moves the sequence to `at_least` if it is below, so ids taken from elsewhere (an
    import that keeps the platform's ids) are never handed out again."""
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
