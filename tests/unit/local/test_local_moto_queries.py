"""The embedded AWS's Query (local/moto_queries.py) answers exactly as plain moto: items,
counts and the page's last key, for tables and queries that Hypothesis generates."""

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto import mock_aws
from moto.dynamodb.models.table import Table

from local import moto_queries

TABLE = "queries"
partitions = st.sampled_from(["T#1", "T#2", "T#3"])
sort_keys = st.text(alphabet="0123456789#AB", min_size=1, max_size=4)
stored = st.lists(st.tuples(partitions, sort_keys), max_size=40, unique=True)
conditions = st.one_of(
    st.none(),
    st.tuples(st.sampled_from(["=", "<", "<=", ">", ">="]), sort_keys),
    st.tuples(st.just("BETWEEN"), sort_keys, sort_keys),
    st.tuples(st.just("begins_with"), sort_keys),
)


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        dynamodb.create_table(
            TableName=TABLE,
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )
        yield dynamodb


def _request(
    partition: str, condition: Any, limit: int | None, *, forward: bool = True
) -> dict[str, Any]:
    expression, values = "pk = :p", {":p": {"S": partition}}
    if condition is not None:
        operator, *bounds = condition
        if operator == "BETWEEN":
            low, high = sorted(bounds)
            expression += " AND sk BETWEEN :a AND :b"
            values |= {":a": {"S": low}, ":b": {"S": high}}
        elif operator == "begins_with":
            expression += " AND begins_with(sk, :a)"
            values[":a"] = {"S": bounds[0]}
        else:
            expression += f" AND sk {operator} :a"
            values[":a"] = {"S": bounds[0]}
    request: dict[str, Any] = {
        "TableName": TABLE,
        "KeyConditionExpression": expression,
        "ExpressionAttributeValues": values,
    }
    if limit is not None:
        request["Limit"] = limit
    if not forward:
        request["ScanIndexForward"] = False
    return request


def _pages(client: Any, request: dict[str, Any]) -> list[dict[str, Any]]:
    """Every page of the query, following LastEvaluatedKey (at most 50 pages)."""
    pages: list[dict[str, Any]] = []
    while len(pages) < 50:
        answer = client.query(**request)
        answer.pop("ResponseMetadata", None)
        pages.append(answer)
        if "LastEvaluatedKey" not in answer:
            break
        request = {**request, "ExclusiveStartKey": answer["LastEvaluatedKey"]}
    return pages


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    items=stored,
    partition=partitions,
    condition=conditions,
    limit=st.one_of(st.none(), st.integers(min_value=1, max_value=7)),
    forward=st.booleans(),
)
def test_a_query_answers_as_plain_moto_answers_it(
    client: Any,
    items: list[tuple[str, str]],
    partition: str,
    condition: Any,
    limit: int | None,
    forward: bool,
) -> None:
    # Given a table holding exactly these items
    for existing in client.scan(TableName=TABLE)["Items"]:
        client.delete_item(TableName=TABLE, Key={"pk": existing["pk"], "sk": existing["sk"]})
    for pk, sk in items:
        client.put_item(TableName=TABLE, Item={"pk": {"S": pk}, "sk": {"S": sk}, "v": {"N": "1"}})
    request = _request(partition, condition, limit, forward=forward)
    # When the query is paged through with plain moto, then with the embedded AWS's Query
    plain = _pages(client, request)
    moto_queries.install()
    try:
        with moto_queries.one_request_at_a_time():  # as the embedded AWS serves a request
            indexed = _pages(client, request)
    finally:
        Table.query = moto_queries.plain_query()  # type: ignore[method-assign]
    # Then every page is the same: items, Count, ScannedCount and LastEvaluatedKey
    assert indexed == plain


@pytest.mark.parametrize("forward", [True, False], ids=["oldest first", "newest first"])
def test_a_page_of_one_reads_about_one_item_whatever_the_tables_size(
    client: Any, monkeypatch: pytest.MonkeyPatch, forward: bool
) -> None:
    # Given a table of 300 items over three partitions (an audit chain's head is read newest
    # first, Limit 1, on every append: it must not cost the whole table)
    for existing in client.scan(TableName=TABLE)["Items"]:
        client.delete_item(TableName=TABLE, Key={"pk": existing["pk"], "sk": existing["sk"]})
    for number in range(300):
        item = {"pk": {"S": f"T#{number % 3}"}, "sk": {"S": f"{number:05d}"}, "v": {"N": "1"}}
        client.put_item(TableName=TABLE, Item=item)
    seen: list[int] = []
    all_items = Table.all_items

    def counted(table: Table) -> Any:
        items = all_items(table)
        seen.append(len(items))
        return items

    monkeypatch.setattr(Table, "all_items", counted)
    request = _request("T#1", None, 1, forward=forward)
    # When the embedded AWS answers a query for one item
    moto_queries.install()
    try:
        with moto_queries.one_request_at_a_time():
            answer = client.query(**request)
    finally:
        Table.query = moto_queries.plain_query()  # type: ignore[method-assign]
    # Then the answer is the partition's first (or last) item, and moto looked at two items
    # (the page and the one after it, for LastEvaluatedKey), not at the table's 300
    assert answer["Items"][0]["sk"]["S"] == ("00001" if forward else "00298")
    assert seen == [2]
