"""The local stack's moto transactions back up only the items they touch: a cancelled
transaction still leaves every table exactly as it was, a committed one applies whole."""

from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from local.aws import serialize_dynamodb_requests
from psap.storage.dynamodb import dynamodb

TABLE = "transactions"


@pytest.fixture
def client(lambda_environment: dict[str, str]) -> Any:
    serialize_dynamodb_requests()
    with mock_aws():
        dynamodb.cache_clear()
        client = dynamodb()
        client.create_table(
            TableName=TABLE,
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )
        for n in range(50):
            client.put_item(
                TableName=TABLE,
                Item={"pk": {"S": f"p{n % 5}"}, "sk": {"S": f"s{n}"}, "count": {"N": "1"}},
            )
        yield client
    dynamodb.cache_clear()


def increment(item_key: dict[str, Any]) -> dict[str, Any]:
    """A transaction item that adds one to the item's count, in place."""
    return {
        "Update": {
            "TableName": TABLE,
            "Key": item_key,
            "UpdateExpression": "ADD #c :one",
            "ExpressionAttributeNames": {"#c": "count"},
            "ExpressionAttributeValues": {":one": {"N": "1"}},
        }
    }


def everything(client: Any) -> list[dict[str, Any]]:
    items = client.scan(TableName=TABLE)["Items"]
    return sorted(items, key=lambda item: (item["pk"]["S"], item["sk"]["S"]))


def key(pk: str, sk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


def test_the_local_stack_patches_moto_transactions(client: Any) -> None:
    from moto.dynamodb.models import DynamoDBBackend

    assert DynamoDBBackend.transact_write_items.__module__ == "local.moto_transactions"


def test_a_cancelled_transaction_leaves_every_item_as_it_was(client: Any) -> None:
    # Given a transaction that updates in place, puts, deletes and then fails a condition
    before = everything(client)
    with pytest.raises(ClientError) as raised:
        client.transact_write_items(
            TransactItems=[
                increment(key("p0", "s0")),
                {"Put": {"TableName": TABLE, "Item": {**key("p9", "new"), "x": {"S": "y"}}}},
                {"Delete": {"TableName": TABLE, "Key": key("p1", "s1")}},
                {
                    "ConditionCheck": {
                        "TableName": TABLE,
                        "Key": key("p2", "s2"),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
            ]
        )
    # Then it is cancelled and nothing of it remains
    assert raised.value.response["Error"]["Code"] == "TransactionCanceledException"
    assert everything(client) == before


def test_a_committed_transaction_applies_every_item(client: Any) -> None:
    client.transact_write_items(
        TransactItems=[
            increment(key("p0", "s0")),
            {"Put": {"TableName": TABLE, "Item": key("p9", "new")}},
            {"Delete": {"TableName": TABLE, "Key": key("p1", "s1")}},
        ]
    )
    items = {(item["pk"]["S"], item["sk"]["S"]): item for item in everything(client)}
    assert items[("p0", "s0")]["count"] == {"N": "2"}
    assert ("p9", "new") in items and ("p1", "s1") not in items
    assert len(items) == 50


def _backend_table() -> Any:
    from moto.dynamodb.models import dynamodb_backends

    return dynamodb_backends["123456789012"]["us-east-1"].tables[TABLE]


def test_a_cancelled_transaction_copies_no_partition_it_did_not_touch(client: Any) -> None:
    # Given the table and one of its untouched partitions, as objects
    table = _backend_table()
    untouched = table.items[next(iter(table.items))]
    # When a transaction on another partition is cancelled
    with pytest.raises(ClientError):
        client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": TABLE, "Item": key("p9", "new")}},
                {
                    "ConditionCheck": {
                        "TableName": TABLE,
                        "Key": key("p2", "s2"),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
            ]
        )
    # Then the table was restored in place, not replaced by a copy of all its partitions
    # (O(table) time and memory per transaction, what made a long-running stack grow)
    assert _backend_table() is table
    assert table.items[next(iter(table.items))] is untouched


def test_moto_keeps_no_dynamodb_item_objects_after_writes(client: Any) -> None:
    from moto.core import base_backend

    # When many items are written, directly and in transactions
    for n in range(30):
        client.put_item(TableName=TABLE, Item={**key("p7", f"direct-{n}"), "n": {"N": str(n)}})
        client.transact_write_items(
            TransactItems=[{"Put": {"TableName": TABLE, "Item": key("p8", f"tx-{n}")}}]
        )
    # Then moto's own registry of every object it made holds none of them: memory stays flat
    models: dict[str, Any] = getattr(base_backend, "model_data")["dynamodb"]  # noqa: B009
    tracked = {name: len(model.instances_tracked) for name, model in models.items()}
    assert set(tracked.values()) == {0}, tracked
