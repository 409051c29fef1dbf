"""GET /api/v1/external/knowledge through its Lambda handler, on moto tables built from
template.yaml. Test names follow the spec's "List knowledge entries" rules."""

import importlib.util
import json
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from psap.clock import utc_now
from psap.config import knowledge_table
from psap.knowledge.models import KnowledgeSource, KnowledgeType
from psap.knowledge.store import NewEntry, bulk_load_entries, create_entry, delete_entry
from psap.storage.dynamodb import dynamodb

ROOT = Path(__file__).resolve().parents[2]
TENANT = 7
OTHER_TENANT = 8
G, IC, P = KnowledgeType.GUIDE_CARD, KnowledgeType.INSTRUCTION_CARD, KnowledgeType.POLICY


def add_many(tenant: int, count: int) -> list[int]:
    entries = [NewEntry(f"Card {n}", "NENA", G) for n in range(count)]
    return bulk_load_entries(tenant, entries, utc_now())


def add(
    tenant: int, name: str, provider: str = "NENA", kind: KnowledgeType = G, **extra: Any
) -> int:
    return create_entry(tenant, NewEntry(name, provider, kind, **extra), utc_now()).id


@pytest.fixture
def list_handler(aws: None, import_function: Callable[[str], ModuleType]) -> Any:
    return import_function("knowledge_list").handler


@pytest.fixture
def call(list_handler: Any, load_event: Any, lambda_context: Any) -> Callable[..., tuple[int, Any]]:
    def invoke(
        query: dict[str, str] | None = None,
        tenant: int = TENANT,
        permissions: str = "VIEW_KNOWLEDGE",
    ) -> tuple[int, Any]:
        event = load_event("knowledge_list")
        event["queryStringParameters"] = query or None
        event["multiValueQueryStringParameters"] = (
            {key: [value] for key, value in query.items()} if query else None
        )
        event["requestContext"]["authorizer"].update(tenantId=str(tenant), permissions=permissions)
        answer = list_handler(event, lambda_context)
        return answer["statusCode"], json.loads(answer["body"])

    return invoke


def ids(body: dict[str, Any]) -> list[int]:
    return [item["id"] for item in body["items"]]


@pytest.mark.spec("knowledge-list-rule-1")
def test_rule1_lists_only_api_import_entries_that_are_not_deleted(call: Any) -> None:
    # Given an API entry, a service-side entry and a deleted API entry
    kept = add(TENANT, "Chest Pain")
    add(TENANT, "Radio Procedures", source=KnowledgeSource.SERVICE)
    gone = add(TENANT, "Old Card")
    assert delete_entry(TENANT, gone, utc_now())
    # When the tenant lists its knowledge
    status, body = call()
    # Then only the API entry that is not deleted is there, and the totals agree
    assert status == 200
    assert ids(body) == [kept]
    assert body["totalItems"] == 1


@pytest.mark.spec(
    "knowledge-list-rule-1",
    "resources-knowledge-summary-fields",
    "resources-knowledge-page-fields",
    "resources-timestamps-and-dates",
)
def test_rule1_items_are_summaries_with_every_field_of_the_dto(call: Any) -> None:
    add(TENANT, "Choking", description="Adult and child", external_id="gc-choking")
    status, body = call()
    assert status == 200
    (item,) = body["items"]
    assert set(item) == {
        "id",
        "name",
        "description",
        "source",
        "provider",
        "knowledgeType",
        "externalId",
        "publishedVersion",
        "createdAt",
        "updatedAt",
    }
    assert item["source"] == "API_IMPORT"
    assert item["externalId"] == "gc-choking"
    assert item["publishedVersion"] is None
    assert item["createdAt"].endswith("Z") and len(item["createdAt"]) == 24
    assert set(body) == {"items", "page", "size", "totalItems", "totalPages"}


@pytest.mark.spec("knowledge-list-rule-3")
def test_rule3_results_are_sorted_by_id(call: Any) -> None:
    created = [
        add(TENANT, f"Card {n}", provider=provider)
        for n, provider in enumerate(["B", "A", "C", "A"])
    ]
    status, body = call()
    assert status == 200
    assert ids(body) == sorted(created)


@pytest.mark.spec(
    "knowledge-list-rule-4",
    "limits-page-size-default",
    "limits-page-number-base",
    "resources-knowledge-page-fields",
)
def test_rule4_page_is_zero_based_and_size_defaults_to_50(call: Any) -> None:
    created = add_many(TENANT, 53)
    status, first = call()
    assert status == 200
    assert (first["page"], first["size"], first["totalItems"], first["totalPages"]) == (
        0,
        50,
        53,
        2,
    )
    assert ids(first) == created[:50]
    status, second = call({"page": "1"})
    assert ids(second) == created[50:]


@pytest.mark.spec(
    "knowledge-list-rule-4", "limits-page-size-cap", "resources-knowledge-page-fields"
)
def test_rule4_size_above_200_is_silently_reduced_to_200(call: Any) -> None:
    created = add_many(TENANT, 201)
    status, body = call({"size": "5000"})
    assert status == 200
    assert body["size"] == 200
    assert ids(body) == created[:200]
    assert body["totalPages"] == 2


@pytest.mark.spec("knowledge-list-rule-5")
def test_rule5_provider_filters_by_exact_match(call: Any) -> None:
    nena = add(TENANT, "One", provider="NENA")
    add(TENANT, "Two", provider="NENA-2")
    add(TENANT, "Three", provider="nena")
    status, body = call({"provider": "NENA"})
    assert (status, ids(body), body["totalItems"]) == (200, [nena], 1)


@pytest.mark.spec("knowledge-list-rule-5")
def test_rule5_knowledge_type_filters_by_exact_match(call: Any) -> None:
    add(TENANT, "Card", kind=G)
    instruction = add(TENANT, "Instruction", kind=IC)
    status, body = call({"knowledgeType": "INSTRUCTION_CARD"})
    assert (status, ids(body), body["totalItems"]) == (200, [instruction], 1)


@pytest.mark.spec("knowledge-list-rule-5")
def test_rule5_both_filters_combine_and_omitting_one_means_no_filtering(call: Any) -> None:
    wanted = add(TENANT, "A", provider="APCO", kind=P)
    add(TENANT, "B", provider="APCO", kind=G)
    add(TENANT, "C", provider="NENA", kind=P)
    _, both = call({"provider": "APCO", "knowledgeType": "POLICY"})
    _, provider_only = call({"provider": "APCO"})
    _, type_only = call({"knowledgeType": "POLICY"})
    _, neither = call()
    assert ids(both) == [wanted]
    assert provider_only["totalItems"] == 2
    assert type_only["totalItems"] == 2
    assert neither["totalItems"] == 3


def test_provider_with_separator_characters_does_not_leak_into_other_filters(call: Any) -> None:
    # A provider containing the key separator must not collide with a provider+type scope.
    odd = add(TENANT, "Odd", provider="A#K#GUIDE_CARD")
    add(TENANT, "Plain", provider="A", kind=G)
    _, body = call({"provider": "A#K#GUIDE_CARD"})
    assert ids(body) == [odd]


@pytest.mark.spec("resources-knowledge-page-fields")
def test_page_past_the_end_is_empty_with_the_true_totals(call: Any) -> None:
    for n in range(3):
        add(TENANT, f"Card {n}")
    status, body = call({"page": "9", "size": "2"})
    assert status == 200
    assert body == {"items": [], "page": 9, "size": 2, "totalItems": 3, "totalPages": 2}


def test_creates_count_on_many_items_and_totals_stay_exact(call: Any) -> None:
    # Given 40 entries created one by one (the request path), 7 of them then deleted
    created = [add(TENANT, f"Card {n}") for n in range(40)]
    for knowledge_id in created[::6]:
        assert delete_entry(TENANT, knowledge_id, utc_now())
    # When the tenant lists them
    status, body = call({"size": "5"})
    # Then the total is exact, and the count of the unfiltered listing is spread over
    # several items, so concurrent creates do not all write one item
    assert status == 200
    assert body["totalItems"] == 33
    answer = dynamodb().query(
        TableName=knowledge_table(),
        KeyConditionExpression="pk = :pk AND begins_with(sk, :count)",
        ExpressionAttributeValues={":pk": {"S": f"T#{TENANT}#KL#ALL"}, ":count": {"S": "#COUNT"}},
    )
    counters = answer["Items"]
    assert len(counters) >= 8
    assert sum(int(item["count"]["N"]) for item in counters) == 33


def test_a_count_kept_in_the_unsharded_item_still_counts(call: Any) -> None:
    # Given a tenant whose listing was counted in one `#COUNT` item before the count was
    # sharded (3 entries), and one entry created since
    for n in range(3):
        add(TENANT, f"Old {n}")
    table = knowledge_table()
    for scope in ("ALL", "P#NENA", f"K#{G.value}", f"PK#NENA#{G.value}"):
        pk = f"T#{TENANT}#KL#{scope}"
        shards = dynamodb().query(
            TableName=table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :count)",
            ExpressionAttributeValues={":pk": {"S": pk}, ":count": {"S": "#COUNT#"}},
        )["Items"]
        for shard in shards:
            dynamodb().delete_item(TableName=table, Key={"pk": shard["pk"], "sk": shard["sk"]})
        dynamodb().put_item(
            TableName=table, Item={"pk": {"S": pk}, "sk": {"S": "#COUNT"}, "count": {"N": "3"}}
        )
    newer = add(TENANT, "New")
    # When one of the old entries is deleted (its shard goes below zero) and the tenant lists
    old_id = ids(call({"size": "1"})[1])[0]
    assert delete_entry(TENANT, old_id, utc_now())
    status, body = call({"provider": "NENA"})
    # Then the total is the old count and the new shards together: 3 + 1 - 1
    assert status == 200
    assert body["totalItems"] == 3
    assert newer in ids(body)


def test_empty_tenant_lists_nothing(call: Any) -> None:
    status, body = call()
    assert status == 200
    assert body == {"items": [], "page": 0, "size": 50, "totalItems": 0, "totalPages": 0}


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ({"page": "-1"}, "page"),
        ({"size": "0"}, "size"),
        ({"size": "-5"}, "size"),
        ({"page": "first"}, "page"),
        ({"size": "1.5"}, "size"),
        ({"knowledgeType": "FLOWCHART"}, "knowledgeType"),
    ],
)
@pytest.mark.spec("errors-error-info")
def test_bad_input_is_400_error_info_naming_the_parameter(
    call: Any, query: dict[str, str], parameter: str
) -> None:
    status, body = call(query)
    assert status == 400
    assert set(body) == {"info", "reason"}
    assert f"'{parameter}'" in body["info"]
    assert body["reason"] == "INVALID_PARAMETER"


@pytest.mark.parametrize("permissions", ["VIEW_KNOWLEDGE", "MANAGE_KNOWLEDGE"])
@pytest.mark.spec("endpoints-permission-knowledge-list", "data-auth-rule-3")
def test_view_or_manage_knowledge_may_list(call: Any, permissions: str) -> None:
    add(TENANT, "Card")
    status, body = call(permissions=permissions)
    assert (status, body["totalItems"]) == (200, 1)


@pytest.mark.spec("errors-403-body", "data-auth-rule-2", "endpoints-permission-knowledge-list")
def test_403_body_is_exact_for_a_token_without_knowledge_permissions(
    list_handler: Any, load_event: Any, lambda_context: Any
) -> None:
    event = load_event("knowledge_list")
    event["requestContext"]["authorizer"]["permissions"] = "MANAGE_USERS,BROWSE_EVENTS"
    answer = list_handler(event, lambda_context)
    assert answer["statusCode"] == 403
    assert json.loads(answer["body"]) == {
        "info": "Access denied — View Knowledge or Manage Knowledge permission required",
        "reason": "FORBIDDEN",
    }


def test_403_comes_before_parameter_validation(call: Any) -> None:
    status, body = call({"size": "not-a-number"}, permissions="MANAGE_USERS")
    assert status == 403
    assert body["reason"] == "FORBIDDEN"


@pytest.mark.spec("errors-401-body")
def test_request_without_authorizer_context_is_401(
    list_handler: Any, load_event: Any, lambda_context: Any
) -> None:
    event = load_event("knowledge_list")
    event["requestContext"].pop("authorizer")
    answer = list_handler(event, lambda_context)
    assert answer["statusCode"] == 401
    assert json.loads(answer["body"]) == {
        "info": "Authentication required",
        "reason": "UNAUTHENTICATED",
    }


@pytest.mark.spec("service-tenant-from-credential")
def test_tenant_isolation_a_token_never_sees_another_tenants_entries(call: Any) -> None:
    mine = add(TENANT, "Mine", provider="Shared")
    add(OTHER_TENANT, "Theirs", provider="Shared")
    add(OTHER_TENANT, "Theirs too", provider="Shared")
    _, body = call({"provider": "Shared"})
    assert ids(body) == [mine]
    assert body["totalItems"] == 1
    _, other = call(tenant=OTHER_TENANT)
    assert mine not in ids(other)
    assert other["totalItems"] == 2


def test_a_late_page_reads_at_most_size_plus_two_full_items(call: Any) -> None:
    # Given 130 entries, when page 5 of size 20 is read, then the full items read (batch
    # reads and item reads) stay within size + 2; skipping reads keys-only pointers.
    add_many(TENANT, 130)
    full_items: list[int] = []

    def count(http_response: Any, parsed: dict[str, Any], model: Any, **_: Any) -> None:
        if model.name == "BatchGetItem":
            full_items.append(sum(len(items) for items in parsed.get("Responses", {}).values()))
        elif model.name == "GetItem":
            full_items.append(1 if "Item" in parsed else 0)

    dynamodb().meta.events.register("after-call.dynamodb", count)
    status, body = call({"page": "5", "size": "20"})
    assert status == 200
    assert len(body["items"]) == 20
    assert sum(full_items) <= 20 + 2


def test_bulk_loaded_entries_are_stored_exactly_like_created_ones(aws: None) -> None:
    # The fast loader used for large fixtures must not drift from the request path.
    def partition(tenant: int, knowledge_id: int) -> dict[tuple[str, str], Any]:
        table = knowledge_table()
        items = dynamodb().scan(TableName=table)["Items"]
        return {
            (
                # The partition registry's shard is a hash of the entry's key: not compared.
                re.sub(r"^PART#\d+$", "PART", item["pk"]["S"].replace(f"T#{tenant}#", "")),
                # The counter shard is the entry's id modulo the shards: not compared.
                re.sub(r"^#COUNT#\d+$", "#COUNT#SHARD", item["sk"]["S"])
                .replace(f"{knowledge_id:019d}", "ID")
                .replace(f"T#{tenant}#K#{knowledge_id}", "K#ID"),
            ): {
                k: v
                for k, v in item.items()
                if k not in {"pk", "sk", "id", "createdAt", "updatedAt", "tenantId"}
            }
            for item in items
            if item["pk"]["S"].startswith(f"T#{tenant}#")
        }

    created = add(TENANT, "Card", provider="NENA")
    (loaded,) = bulk_load_entries(OTHER_TENANT, [NewEntry("Card", "NENA", G)], utc_now())
    mine = {
        (pk.replace(f"K#{created}", "K#ID"), sk): v
        for (pk, sk), v in partition(TENANT, created).items()
    }
    theirs = {
        (pk.replace(f"K#{loaded}", "K#ID"), sk): v
        for (pk, sk), v in partition(OTHER_TENANT, loaded).items()
    }
    assert mine == theirs
    # the entry, four pointers, four counters and its partition registry entry
    assert len(mine) == 1 + 4 + 4 + 1


@pytest.fixture
def contract_handler(aws: None) -> Any:
    """The same route declared on a validating resolver with its response model
    (functions/knowledge_list/contract.py, what the OpenAPI document documents)."""
    source = ROOT / "functions" / "knowledge_list" / "contract.py"
    spec = importlib.util.spec_from_file_location("psap_test_contract_knowledge_list", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.handler


@pytest.mark.parametrize(
    "query",
    [
        {},
        {"page": "0", "size": "1"},
        {"page": "1", "size": "1"},
        {"page": "00001", "size": " 2 "},
        {"size": "5000"},
        {"page": "9", "size": "2"},
        {"provider": "Zürich 911"},
        {"knowledgeType": "POLICY", "provider": "APCO"},
        {"page": "-1"},
        {"size": "1.5", "knowledgeType": "FLOWCHART", "page": "first"},
        {"size": str(2**31)},
        {"provider": "NENA\u0000"},
    ],
)
def test_the_light_function_answers_byte_for_byte_as_its_validating_contract(
    list_handler: Any,
    contract_handler: Any,
    load_event: Any,
    lambda_context: Any,
    query: dict[str, str],
) -> None:
    # Given entries with text beyond ASCII, a published version and no description
    add(TENANT, "Chest Pain — adult", provider="Zürich 911", description="Übung\nzwei")
    add(TENANT, "Radio", provider="APCO", kind=P, external_id="p-1")
    add(TENANT, "Card", provider="NENA")
    # When the light function and its validating contract answer the same request
    answers = []
    for handler in (list_handler, contract_handler):
        event = load_event("knowledge_list")
        event["queryStringParameters"] = query or None
        event["multiValueQueryStringParameters"] = {k: [v] for k, v in query.items()} or None
        event["requestContext"]["authorizer"]["tenantId"] = str(TENANT)
        answers.append(handler(event, lambda_context))
    light, validated = answers
    # Then status, headers and body are the same, byte for byte
    assert light == validated
    assert (light["statusCode"] != 200) or json.loads(light["body"])["totalItems"] > 0
