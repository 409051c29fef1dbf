"""Integer id sequences: one counter item per kind of record, shared by every tenant.

Ids are unique across tenants (as knowledge ids are), so an id of another tenant can only
ever answer 404, never another tenant's record with the same number.
"""

from botocore.exceptions import BotoCoreError, ClientError

from psap.errors import StoreUnavailable
from psap.storage.dynamodb import dynamodb


def sequence_key(kind: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"SEQ#{kind}"}, "sk": {"S": "SEQ"}}


def next_id(table: str, kind: str, count: int = 1) -> int:
    """Reserves `count` consecutive ids of `kind` and returns the last one."""
    try:
        answer = dynamodb().update_item(
            TableName=table,
            Key=sequence_key(kind),
            UpdateExpression="ADD #v :n",
            ExpressionAttributeNames={"#v": "value"},
            ExpressionAttributeValues={":n": {"N": str(count)}},
            ReturnValues="UPDATED_NEW",
        )
    except (ClientError, BotoCoreError) as error:
        raise StoreUnavailable(f"sequence {kind}: {error}") from error
    return int(answer["Attributes"]["value"]["N"])


def raise_floor(table: str, kind: str, at_least: int) -> None:
    """Moves the sequence to `at_least` if it is below, so ids taken from elsewhere (an
    import that keeps the platform's ids) are never handed out again."""
    try:
        dynamodb().update_item(
            TableName=table,
            Key=sequence_key(kind),
            UpdateExpression="SET #v = :floor",
            ConditionExpression="attribute_not_exists(#v) OR #v < :floor",
            ExpressionAttributeNames={"#v": "value"},
            ExpressionAttributeValues={":floor": {"N": str(at_least)}},
        )
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
            return
        raise StoreUnavailable(f"sequence {kind}: {error}") from error
    except BotoCoreError as error:
        raise StoreUnavailable(f"sequence {kind}: {error}") from error
