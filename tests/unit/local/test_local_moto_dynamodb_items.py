"""The embedded AWS answers DynamoDB items from their stored form (local/moto_dynamodb_items.py):
exactly what moto's generic walk answers, for any item, and items round-trip through it."""

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from moto.core.serialize import BaseJSONSerializer, XFormedAttributePicker, get_serializer_class
from moto.core.utils import get_service_model

from local import moto_dynamodb_items
from local.aws import dynamodb_client

moto_dynamodb_items.install()

texts = st.text(max_size=8)
names = st.text(min_size=1, max_size=6)
numbers = st.decimals(allow_nan=False, allow_infinity=False, places=3).map(str)
binaries = st.binary(max_size=8)
scalars = st.one_of(
    texts.map(lambda text: {"S": text}),
    numbers.map(lambda number: {"N": number}),
    binaries.map(lambda data: {"B": data}),
    st.sets(texts, min_size=1, max_size=3).map(lambda values: {"SS": sorted(values)}),
    st.sets(numbers, min_size=1, max_size=3).map(lambda values: {"NS": sorted(values)}),
    st.sets(binaries, min_size=1, max_size=3).map(lambda values: {"BS": sorted(values)}),
    st.just({"NULL": True}),
    st.booleans().map(lambda flag: {"BOOL": flag}),
)
attribute_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        # DynamoDB attribute names have at least one character (moto's walk mishandles "").
        st.dictionaries(names, inner, max_size=3).map(lambda members: {"M": members}),
        st.lists(inner, max_size=3).map(lambda elements: {"L": elements}),
    ),
    max_leaves=12,
)
items = st.dictionaries(names, attribute_values, max_size=6)


class _WalkingSerializer(get_serializer_class("dynamodb", "json")):  # type: ignore[misc]
    """moto's serializer as it was: every map walked through the service model."""

    _serialize_type_map = BaseJSONSerializer._psap_walk_map  # type: ignore[attr-defined]


def _answer(serializer_class: type[Any], operation: str, result: dict[str, Any]) -> Any:
    serializer = serializer_class(
        operation_model=get_service_model("dynamodb").operation_model(operation),
        pretty_print=False,
        value_picker=XFormedAttributePicker(),
    )
    return json.loads(serializer.serialize(result)["body"])


@settings(max_examples=300, deadline=None)
@given(item=items, more=st.lists(items, max_size=3))
def test_items_are_answered_exactly_as_the_walk_answers_them(
    item: dict[str, Any], more: list[dict[str, Any]]
) -> None:
    fast = get_serializer_class("dynamodb", "json")
    get_item = {"Item": item}
    assert _answer(fast, "GetItem", get_item) == _answer(_WalkingSerializer, "GetItem", get_item)
    batch = {"Responses": {"table": [item, *more]}, "UnprocessedKeys": {}}
    walked = _answer(_WalkingSerializer, "BatchGetItem", batch)
    assert _answer(fast, "BatchGetItem", batch) == walked
    query = {"Items": [item, *more], "Count": 1 + len(more), "LastEvaluatedKey": item}
    assert _answer(fast, "Query", query) == _answer(_WalkingSerializer, "Query", query)


def test_an_item_of_every_type_round_trips_through_the_embedded_aws(moto_endpoint: str) -> None:
    client = dynamodb_client(moto_endpoint)
    client.create_table(
        TableName="items-as-stored",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    item: dict[str, Any] = {
        "pk": {"S": "a"},
        "empty": {"S": ""},
        "binary": {"B": b"\x00\x01 not text"},
        "binaries": {"BS": [b"x", b"y"]},
        "strings": {"SS": ["a", "b"]},
        "numbers": {"NS": ["1", "2.5"]},
        "nested": {"M": {"n": {"N": "1.50"}, "l": {"L": [{"S": "q"}, {"NULL": True}]}}},
        "flag": {"BOOL": False},
    }
    client.put_item(TableName="items-as-stored", Item=item)
    assert client.get_item(TableName="items-as-stored", Key={"pk": {"S": "a"}})["Item"] == item
