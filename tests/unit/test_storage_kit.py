"""The storage kit: AWS error translation, optimistic writes, paged queries, id sequences."""

import os
from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, ReadTimeoutError

from psap.errors import Conflict, StoreUnavailable
from psap.storage.aws_errors import (
    ConditionFailed,
    ObjectMissing,
    TransactionCancelled,
    VersionChanged,
    translated,
)
from psap.storage.dynamodb import dynamodb, read_item, transact_write
from psap.storage.optimistic import Raced, optimistic_write, revised_put, revision_of
from psap.storage.queries import partition_request, query_all, query_page, query_pages
from psap.storage.sequences import BLOCK_SIZE, forget_blocks, next_id, raise_floor


def _client_error(code: str, message: str = "refused", **extra: Any) -> ClientError:
    response: dict[str, Any] = {"Error": {"Code": code, "Message": message}, **extra}
    return ClientError(response, "Operation")  # type: ignore[arg-type]


def _raise(error: Exception) -> None:
    raise error


# ------------------------------------------------------------------------- translation


@pytest.mark.parametrize(
    "error",
    [
        _client_error("ThrottlingException", "Rate exceeded"),
        _client_error("ProvisionedThroughputExceededException"),
        _client_error("RequestLimitExceeded"),
        _client_error("ServiceUnavailable"),
        _client_error("InternalServerError"),
        _client_error("AccessDeniedException"),
        EndpointConnectionError(endpoint_url="https://dynamodb.us-east-1.amazonaws.com"),
        ReadTimeoutError(endpoint_url="https://dynamodb.us-east-1.amazonaws.com"),
    ],
)
def test_what_the_caller_cannot_cause_is_unavailable(error: Exception) -> None:
    with pytest.raises(StoreUnavailable) as raised, translated("user"):
        _raise(error)
    # Exactly unavailable: no store may read throttling as a lost race or a missing object.
    assert type(raised.value) is StoreUnavailable
    assert raised.value.args[0].startswith("user: ")
    assert raised.value.__cause__ is error


def test_a_failed_condition_is_typed_and_still_unavailable_for_who_does_not_catch_it() -> None:
    with pytest.raises(ConditionFailed) as raised, translated("upload job"):
        _raise(_client_error("ConditionalCheckFailedException"))
    assert isinstance(raised.value, StoreUnavailable)


def test_a_cancelled_transaction_carries_each_item_reason_in_order() -> None:
    error = _client_error(
        "TransactionCanceledException",
        CancellationReasons=[{"Code": "None"}, {"Code": "ConditionalCheckFailed"}, {}],
    )
    with pytest.raises(TransactionCancelled) as raised, translated("transaction failed"):
        _raise(error)
    assert raised.value.codes == ["None", "ConditionalCheckFailed", "None"]
    assert raised.value.item_failed(1)
    assert not raised.value.item_failed(0)
    assert not raised.value.item_failed(5)
    assert isinstance(raised.value, ConditionFailed)


@pytest.mark.parametrize("code", ["NoSuchKey", "404", "NotFound", "ResourceNotFoundException"])
def test_a_missing_object_is_object_missing(code: str) -> None:
    with pytest.raises(ObjectMissing), translated("S3 get key"):
        _raise(_client_error(code))


def test_another_version_of_a_pinned_object_is_never_unavailable() -> None:
    # Reading again cannot succeed: a caller treating StoreUnavailable as transient must
    # not see it as one.
    with pytest.raises(VersionChanged) as raised, translated("S3 get key"):
        _raise(_client_error("PreconditionFailed"))
    assert not isinstance(raised.value, StoreUnavailable)


def test_codes_only_keeps_the_aws_message_out() -> None:
    with pytest.raises(StoreUnavailable) as raised, translated("secret", codes_only=True):
        _raise(_client_error("AccessDeniedException", "not allowed on s3cr3t-value"))
    assert str(raised.value) == "secret: AccessDeniedException"
    with pytest.raises(StoreUnavailable) as timed_out, translated("secret", codes_only=True):
        _raise(ReadTimeoutError(endpoint_url="https://secretsmanager"))
    assert str(timed_out.value) == "secret: ReadTimeoutError"


def test_what_is_not_an_aws_error_passes_through() -> None:
    with pytest.raises(KeyError), translated("user"):
        _raise(KeyError("id"))


# ------------------------------------------------------------------------- optimistic writes


def test_optimistic_write_reads_again_after_a_lost_race() -> None:
    calls: list[int] = []

    def attempt() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise ConditionFailed("user 7: changed since read")
        return "written"

    assert optimistic_write("user 7", attempt) == "written"
    assert len(calls) == 3


def test_optimistic_write_gives_up_after_its_attempts_with_the_one_raced_error() -> None:
    calls: list[int] = []

    def attempt() -> None:
        calls.append(1)
        raise TransactionCancelled("transaction failed", ["ConditionalCheckFailed"])

    with pytest.raises(Raced) as raised:
        optimistic_write("user 7", attempt, attempts=4)
    assert len(calls) == 4
    assert str(raised.value) == "user 7: too many concurrent writers, retry later"
    assert isinstance(raised.value, StoreUnavailable)  # 5xx, as every copy answered


def test_optimistic_write_says_how_it_gave_up_when_told() -> None:
    with pytest.raises(Raced, match=r"^event 3: links kept changing, retry later$"):
        optimistic_write(
            "event 3",
            lambda: _raise(ConditionFailed("x")),
            gave_up="links kept changing, retry later",
        )


@pytest.mark.parametrize(
    "error", [Conflict("number taken"), StoreUnavailable("throttled"), ValueError("bug")]
)
def test_optimistic_write_never_retries_what_is_not_a_lost_race(error: Exception) -> None:
    calls: list[int] = []

    def attempt() -> None:
        calls.append(1)
        raise error

    with pytest.raises(type(error)):
        optimistic_write("user 7", attempt)
    assert len(calls) == 1


def test_a_revised_put_is_conditional_on_the_revision_read() -> None:
    item = {"pk": {"S": "T#1#U#7"}, "sk": {"S": "USER"}}
    assert revision_of(None) == 0
    assert revised_put("t", item, None)["ConditionExpression"] == "attribute_not_exists(pk)"
    put = revised_put("t", item, {"rev": 4})
    assert put["ConditionExpression"] == "rev = :seen"
    assert put["ExpressionAttributeValues"] == {":seen": {"N": "4"}}


# ------------------------------------------------------------------------- against moto


@pytest.fixture
def table(aws: None) -> str:
    return os.environ["TENANT_DATA_TABLE"]


def _put(table: str, pk: str, sk: str, **attributes: Any) -> dict[str, Any]:
    return {"Put": {"TableName": table, "Item": {"pk": {"S": pk}, "sk": {"S": sk}, **attributes}}}


def test_a_conditional_write_that_fails_raises_condition_failed(table: str) -> None:
    item = {"pk": {"S": "KIT"}, "sk": {"S": "ONE"}}
    put = {"TableName": table, "Item": item, "ConditionExpression": "attribute_not_exists(pk)"}
    with translated("kit"):
        dynamodb().put_item(**put)  # type: ignore[arg-type]
    with pytest.raises(ConditionFailed), translated("kit"):
        dynamodb().put_item(**put)  # type: ignore[arg-type]
    assert read_item(table, item, "kit") == {"pk": "KIT", "sk": "ONE"}
    assert read_item(table, {"pk": {"S": "KIT"}, "sk": {"S": "NONE"}}, "kit") is None


def test_a_cancelled_transaction_says_which_item_failed(table: str) -> None:
    transact_write([_put(table, "KIT", "A")])
    taken = _put(table, "KIT", "A")
    taken["Put"]["ConditionExpression"] = "attribute_not_exists(pk)"
    with pytest.raises(TransactionCancelled) as raised:
        transact_write([_put(table, "KIT", "B"), taken])
    assert raised.value.item_failed(1) and not raised.value.item_failed(0)
    with pytest.raises(Conflict, match="taken"):
        transact_write([taken], on_cancel=lambda codes: Conflict(f"taken: {codes}"))


def test_paged_queries_read_every_page_and_only_what_is_asked(table: str) -> None:
    transact_write([_put(table, "KIT#P", f"{n:03d}") for n in range(7)])
    request = {**partition_request(table, "KIT#P"), "Limit": 3}
    pages = list(query_pages(request, "kit"))
    assert [len(page) for page in pages] == [3, 3, 1]
    assert [item["sk"] for item in query_all(request, "kit")] == [f"{n:03d}" for n in range(7)]
    first = query_page(request, "kit")
    second = query_page(request, "kit", first["LastEvaluatedKey"])
    assert second["Items"][0]["sk"] == {"S": "003"}


def test_one_id_sequence_for_every_kind(table: str) -> None:
    forget_blocks()
    assert next_id(table, "KIT") == 1  # this container's block: 1..BLOCK_SIZE
    assert next_id(table, "KIT", 5) == BLOCK_SIZE + 5  # a run: its own ADD, past the block
    assert next_id(table, "KIT") == 2  # the block goes on
    raise_floor(table, "KIT", 1000)
    raise_floor(table, "KIT", 50)  # below: left as it is, no error
    forget_blocks()  # a new container: its block starts past the floor
    assert next_id(table, "KIT") == 1001
    assert next_id(table, "OTHER") == 1
