"""DynamoDB partition capacity on the embedded AWS (local/partition_capacity.py): the counting
rules, the meter on real requests, and the throttle with DynamoDB's own error."""

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from local import partition_capacity
from local.aws import OPERATOR_CREDENTIALS
from local.partition_capacity import (
    Consumption,
    PartitionMeter,
    ThroughputExceeded,
    item_size,
    key_pattern,
    read_units,
    write_units,
)
from local.stack import _parser
from local.template import REGION

ROOT = Path(__file__).resolve().parents[3]

# ------------------------------------------------------------------ the counting rules


def test_an_item_is_sized_as_dynamodb_sizes_it() -> None:
    # Names and strings count their UTF-8 bytes
    assert item_size({"pk": {"S": "abc"}}) == 2 + 3
    assert item_size({"é": {"S": "日本"}}) == 2 + 6
    # A number: one byte per two significant digits, plus one (zeros trimmed)
    assert item_size({"n": {"N": "12345"}}) == 1 + 4
    assert item_size({"n": {"N": "1000"}}) == 1 + 2
    # Binary counts its bytes (base64 on the wire), booleans and nulls one byte
    assert item_size({"b": {"B": "AAECAwQ="}}) == 1 + 5
    assert item_size({"t": {"BOOL": True}, "z": {"NULL": True}}) == 2 + 2
    # Lists and maps: 3 bytes, plus 1 per element, plus the elements (and a map's names)
    assert item_size({"l": {"L": [{"S": "ab"}, {"BOOL": False}]}}) == 1 + 3 + (1 + 2) + (1 + 1)
    assert item_size({"m": {"M": {"k": {"S": "xy"}}}}) == 1 + 3 + (1 + 1 + 2)
    # Sets: the sum of their elements
    assert item_size({"s": {"SS": ["a", "bc"]}}) == 1 + 3


def test_a_write_is_one_unit_per_started_kilobyte_twice_in_a_transaction() -> None:
    assert write_units(0) == 1
    assert write_units(1024) == 1
    assert write_units(1025) == 2
    assert write_units(1025, transactional=True) == 4


def test_a_read_is_one_unit_per_started_4_kb_half_if_eventually_consistent() -> None:
    assert read_units(0, consistent=True) == 1
    assert read_units(4096, consistent=True) == 1
    assert read_units(4097, consistent=True) == 2
    assert read_units(4097, consistent=False) == 1
    assert read_units(100, consistent=False) == 0.5
    assert read_units(4097, consistent=False, transactional=True) == 4


def test_a_key_pattern_replaces_the_ids() -> None:
    assert key_pattern("T#000000000012#PART#03") == "T#{id}#PART#{id}"
    assert key_pattern(f"T#12#DLV#{uuid.uuid4()}") == "T#{id}#DLV#{id}"
    assert key_pattern("T#12#DAY#2026-11-27#S#04") == "T#{id}#DAY#{id}#S#{id}"
    assert key_pattern("TENANT#7") == "TENANT#{id}"
    assert key_pattern("TOKEN#9f86d081884c7d659a2feaa0c55ad015") == "TOKEN#{id}"
    assert key_pattern("SEQ#knowledge") == "SEQ#knowledge"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_the_meter_refuses_a_key_at_its_limit_until_the_next_second() -> None:
    # Given a meter at SCALE 10: 100 WCU and 300 RCU per key and second
    clock, lines = Clock(), list[str]()
    meter = PartitionMeter(clock=clock, log=lines.append)
    meter.enforce(10)
    # When one key consumes 100 WCU in one second
    meter.record([Consumption("t", "T#1#PART#0", "PutItem", wcu=100)])
    # Then the next write to it is refused and logged, a read of it and another key are not
    with pytest.raises(ThroughputExceeded):
        meter.check("PutItem", [("t", "T#1#PART#0", True)])
    meter.check("GetItem", [("t", "T#1#PART#0", False)])
    meter.check("PutItem", [("t", "T#2#PART#0", True)])
    assert lines == ["DynamoDB throttled PutItem on t key T#1#PART#0"]
    # And in the next second it is served again
    clock.now += 1
    meter.check("PutItem", [("t", "T#1#PART#0", True)])
    report = meter.report()
    assert report["tables"]["t"]["T#{id}#PART#{id}"] == {
        "peakWcu": 100.0,
        "peakRcu": 0.0,
        "peakWcuKey": "T#1#PART#0",
        "peakRcuKey": "",
        "throttled": 1,
    }


# ------------------------------------------------------------------ on the embedded AWS


@pytest.fixture
def client(moto_endpoint: str) -> Any:
    return boto3.client(
        "dynamodb",
        endpoint_url=moto_endpoint,
        region_name=REGION,
        aws_access_key_id=OPERATOR_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=OPERATOR_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        # No retries: each refusal is seen as the caller's first answer.
        config=Config(retries={"mode": "standard", "total_max_attempts": 1}),
    )


@pytest.fixture
def table(client: Any) -> Iterator[str]:
    name = f"capacity-{uuid.uuid4().hex[:8]}"
    client.create_table(
        TableName=name,
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
            {"AttributeName": "gpk", "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "byG",
                "KeySchema": [{"AttributeName": "gpk", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    yield name
    client.delete_table(TableName=name)


def padded(pk: str, sk: str, size: int, **extra: Any) -> dict[str, Any]:
    """An item of exactly `size` bytes (its `pad` string fills what the rest leaves)."""
    item = {"pk": {"S": pk}, "sk": {"S": sk}, **extra, "pad": {"S": ""}}
    item["pad"] = {"S": "x" * (size - item_size(item))}
    assert item_size(item) == size
    return item


def peaks(meter: PartitionMeter, table: str) -> dict[str, tuple[float, float]]:
    found = meter.report()["tables"].get(table, {})
    return {pattern: (entry["peakWcu"], entry["peakRcu"]) for pattern, entry in found.items()}


def test_each_request_is_counted_as_dynamodb_counts_it(client: Any, table: str) -> None:
    with partition_capacity.partition_capacity(None) as meter:
        # A put of 1,500 bytes: 2 WCU; replaced by 2,100 bytes: 3 WCU (the larger)
        client.put_item(TableName=table, Item=padded("A#1", "x", 1500))
        assert peaks(meter, table) == {"A#{id}": (2.0, 0.0)}
        meter.reset()
        client.put_item(TableName=table, Item=padded("A#1", "x", 2100))
        assert peaks(meter, table) == {"A#{id}": (3.0, 0.0)}
        # A strongly consistent read of 5,000 bytes: 2 RCU; eventually consistent: 1
        meter.reset()
        client.put_item(TableName=table, Item=padded("B#1", "x", 5000))
        meter.reset()
        client.get_item(TableName=table, Key=_key("B#1", "x"), ConsistentRead=True)
        assert peaks(meter, table) == {"B#{id}": (0.0, 2.0)}
        meter.reset()
        client.get_item(TableName=table, Key=_key("B#1", "x"), ProjectionExpression="pk")
        assert peaks(meter, table) == {"B#{id}": (0.0, 1.0)}
        # A transaction: twice the units of each item
        meter.reset()
        client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": table, "Item": padded("C#1", "x", 1500)}},
                {"Put": {"TableName": table, "Item": padded("C#1", "y", 500)}},
            ]
        )
        assert peaks(meter, table) == {"C#{id}": (4.0 + 2.0, 0.0)}
        meter.reset()
        client.transact_get_items(
            TransactItems=[{"Get": {"TableName": table, "Key": _key("C#1", "x")}}]
        )
        assert peaks(meter, table) == {"C#{id}": (0.0, 2.0)}
        # A Query sums what it read, before its filter: 3 x 1,500 bytes = 2 RCU consistent
        for sort in ("a", "b", "c"):
            client.put_item(TableName=table, Item=padded("D#1", sort, 1500))
        meter.reset()
        client.query(
            TableName=table,
            KeyConditionExpression="pk = :p",
            FilterExpression="attribute_exists(nothing)",
            ExpressionAttributeValues={":p": {"S": "D#1"}},
            ConsistentRead=True,
        )
        assert peaks(meter, table) == {"D#{id}": (0.0, 2.0)}
        # A batch: each item on its own (3 x 1 WCU on one key)
        meter.reset()
        client.batch_write_item(
            RequestItems={
                table: [{"PutRequest": {"Item": padded("E#1", sort, 300)}} for sort in "abc"]
            }
        )
        assert peaks(meter, table) == {"E#{id}": (3.0, 0.0)}
        # A GSI write counts on the index's key too (KEYS_ONLY: a small projected item)
        meter.reset()
        client.put_item(TableName=table, Item=padded("F#1", "x", 1500, gpk={"S": "G#7"}))
        assert peaks(meter, table) == {"F#{id}": (2.0, 0.0)}
        assert peaks(meter, f"{table}/byG") == {"G#{id}": (1.0, 0.0)}


def _key(pk: str, sk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


def test_a_hot_key_is_metered_and_throttled_with_dynamodbs_error(
    client: Any, table: str, moto_endpoint: str, tmp_path: Path
) -> None:
    # Given partition capacity at SCALE 100: 10 WCU per key and second
    with partition_capacity.partition_capacity(100) as meter:
        # When 40 writes of 1,500 bytes (2 WCU each) go to one partition key at once
        answers = []
        for number in range(40):
            try:
                client.put_item(
                    TableName=table, Item=padded("T#000000000042#HOT", f"{number}", 1500)
                )
                answers.append("ok")
            except ClientError as error:
                answers.append(error.response["Error"]["Code"])
                refusal = error.response
        # Then the key was refused once it had taken 10 WCU in a second: at most 5 writes
        # a second pass, and the refusal is DynamoDB's, which botocore retries
        assert "ProvisionedThroughputExceededException" in answers
        assert refusal["ResponseMetadata"]["HTTPStatusCode"] == 400
        assert refusal["ThrottlingReasons"] == [  # type: ignore[typeddict-item]
            {
                "reason": "TableWriteKeyRangeThroughputExceeded",
                "resource": f"arn:aws:dynamodb:{REGION}:123456789012:table/{table}",
            }
        ]
        report = meter.report()
        hot = report["tables"][table]["T#{id}#HOT"]
        assert hot["peakWcu"] == 10.0  # 5 writes x 2 WCU, then refused
        assert hot["throttled"] == answers.count("ProvisionedThroughputExceededException")
        # And `psap-local capacity` prints the same report from the embedded AWS's server
        state = tmp_path / "stack.json"
        state.write_text(json.dumps({"awsEndpointUrl": moto_endpoint}))
        printed = subprocess.run(
            [sys.executable, "-m", "local.stack", "capacity", "--state-file", str(state)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        assert json.loads(printed.stdout)["tables"][table]["T#{id}#HOT"] == hot


def test_a_retrying_client_gets_every_write_through_a_throttled_key(
    moto_endpoint: str, table: str
) -> None:
    # Given a client in botocore's standard retry mode, and 6 WCU per key and second (each
    # write takes 5: the third in any one second is refused however slow the machine is)
    retrying = boto3.client(
        "dynamodb",
        endpoint_url=moto_endpoint,
        region_name=REGION,
        aws_access_key_id=OPERATOR_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=OPERATOR_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        config=Config(retries={"mode": "standard", "max_attempts": 10}),
    )
    with partition_capacity.partition_capacity(1000 / 6) as meter:
        # When 12 five-unit writes go to one key
        for number in range(12):
            retrying.put_item(TableName=table, Item=padded("HOT#1", f"{number:02d}", 4_900))
        # Then some were throttled, and every one is stored once
        assert meter.report()["throttled"] > 0
    stored = retrying.query(
        TableName=table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "HOT#1"}},
    )
    assert [item["sk"]["S"] for item in stored["Items"]] == [f"{n:02d}" for n in range(12)]


def test_psap_local_takes_a_positive_partition_capacity_scale() -> None:
    assert _parser().parse_args([]).partition_capacity is None
    assert _parser().parse_args(["--partition-capacity", "10"]).partition_capacity == 10.0
    with pytest.raises(SystemExit):
        _parser().parse_args(["--partition-capacity", "0"])


def test_an_index_key_change_and_a_refused_condition_are_counted(client: Any, table: str) -> None:
    with partition_capacity.partition_capacity(None) as meter:
        client.put_item(TableName=table, Item=padded("H#1", "x", 900, gpk={"S": "G#1"}))
        meter.reset()
        # When an update moves the item to another index key
        client.update_item(
            TableName=table,
            Key=_key("H#1", "x"),
            UpdateExpression="SET gpk = :g",
            ExpressionAttributeValues={":g": {"S": "G#2"}},
        )
        # Then the index writes a delete on the old key and a put on the new one
        recent = [entry for second in meter.recent(5) for entry in second["consumed"]]
        index_writes = {(e["key"], e["wcu"]) for e in recent if e["table"] == f"{table}/byG"}
        assert index_writes == {("G#1", 1.0), ("G#2", 1.0)}
        # And an update that shrinks the item costs its old size (1,500 bytes: 2 WCU)
        client.put_item(TableName=table, Item=padded("J#1", "x", 1500))
        meter.reset()
        client.update_item(
            TableName=table,
            Key=_key("J#1", "x"),
            UpdateExpression="REMOVE #pad",
            ExpressionAttributeNames={"#pad": "pad"},
        )
        assert peaks(meter, table) == {"J#{id}": (2.0, 0.0)}
        # And a write refused by its condition still costs its units
        meter.reset()
        with pytest.raises(ClientError):
            client.put_item(
                TableName=table,
                Item=padded("H#1", "x", 100),
                ConditionExpression="attribute_not_exists(pk)",
            )
        assert peaks(meter, table) == {"H#{id}": (1.0, 0.0)}
