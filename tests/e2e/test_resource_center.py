"""Resource-center search over real HTTP through the local stack, on the seeded demo catalog
(local/demo_resource_center.py): gateway, authorizer, the search function with its model and
index, and the indexer driven by the stack's queue poller."""

import json
import time
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest

from local.demo_resource_center import DEMO_LICENSES, PROTOCOL_LICENSE
from tests.support.stack import psap_admin

pytestmark = pytest.mark.e2e

SEARCH = "/api/v1/external/mcp/resources/resource-center/search"
CPR_REFRESHER = "Protocol Refresher: Cardiac Arrest"
ALI_REBID = "Rebidding ALI for an Updated Wireless Location"


def search(stack: dict[str, Any], token: str | None, **params: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return httpx.get(stack["baseUrl"] + SEARCH, headers=headers, params=params, timeout=60)


def token(stack: dict[str, Any], label: str = "admin", tenant_index: int = 0) -> str:
    value: str = stack["tenants"][tenant_index]["credentials"][label]
    return value


def by_title(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {result["title"]: result for result in body["results"]}


def test_the_seeded_catalog_is_searchable_right_after_start(stack: dict[str, Any]) -> None:
    answer = search(stack, token(stack), q="caller's husband collapsed and is not breathing")
    assert answer.status_code == 200
    body = answer.json()
    assert body["totalHits"] >= len(body["results"]) > 0
    titles = [result["title"] for result in body["results"][:5]]
    assert CPR_REFRESHER in titles
    assert {result["itemType"] for result in body["results"]} == {
        "COACHING_CONTENT",
        "HELP_ARTICLE",
    }
    assert any("<mark>" in result["matchedSnippet"] for result in body["results"])


@pytest.mark.spec("resources-search-license-and-import-status")
def test_license_status_is_the_searching_tenants(stack: dict[str, Any]) -> None:
    assert PROTOCOL_LICENSE in DEMO_LICENSES[0] and PROTOCOL_LICENSE not in DEMO_LICENSES[1]
    query = {"q": "cardiac arrest protocol refresher compressions", "pageSize": 50}
    first = by_title(search(stack, token(stack, tenant_index=0), **query).json())
    second = by_title(search(stack, token(stack, tenant_index=1), **query).json())
    assert first[CPR_REFRESHER]["requiredLicenseName"] == PROTOCOL_LICENSE
    assert first[CPR_REFRESHER]["licensed"] is True
    assert second[CPR_REFRESHER]["licensed"] is False


@pytest.mark.spec("resources-search-license-and-import-status")
def test_import_status_is_the_searching_tenants(stack: dict[str, Any]) -> None:
    # The demo's first tenant imported both items; the rebid article changed since.
    cpr = {"q": "cardiac arrest protocol refresher", "pageSize": 50}
    rebid = {"q": "rebid ALI wireless location", "pageSize": 50}
    first_cpr = by_title(search(stack, token(stack, tenant_index=0), **cpr).json())
    first_rebid = by_title(search(stack, token(stack, tenant_index=0), **rebid).json())
    second_rebid = by_title(search(stack, token(stack, tenant_index=1), **rebid).json())
    assert first_cpr[CPR_REFRESHER]["importStatus"] == "IMPORTED"
    assert first_rebid[ALI_REBID]["importStatus"] == "UPDATE_AVAILABLE"
    assert second_rebid[ALI_REBID]["importStatus"] == "NOT_IMPORTED"


@pytest.mark.spec("data-auth-rule-4")
def test_a_credential_without_resource_center_access_gets_help_articles_only(
    stack: dict[str, Any],
) -> None:
    query = {"q": "cardiac arrest CPR compressions", "pageSize": 50}
    full = search(stack, token(stack, "admin"), **query).json()
    limited = search(stack, token(stack, "readOnly"), **query).json()
    assert {result["itemType"] for result in limited["results"]} == {"HELP_ARTICLE"}
    assert limited["totalHits"] < full["totalHits"]


def test_a_missing_q_is_400_error_info_and_a_missing_token_401(stack: dict[str, Any]) -> None:
    answer = search(stack, token(stack))
    assert answer.status_code == 400
    assert answer.json()["reason"] == "INVALID_PARAMETER"
    assert "'q'" in answer.json()["info"]
    answer = search(stack, None, q="cpr")
    assert answer.status_code == 401
    assert answer.json() == {"info": "Authentication required", "reason": "UNAUTHENTICATED"}


def test_a_catalog_import_through_the_cli_gets_indexed_by_the_stacks_indexer(
    stack: dict[str, Any], tmp_path: Path
) -> None:
    # Given the stack's state file and a new catalog item
    state_file = tmp_path / "stack.json"
    state_file.write_text(json.dumps(stack))
    catalog_file = tmp_path / "new.jsonl"
    catalog_file.write_text(
        json.dumps(
            {
                "externalId": "help-e2e-new-article",
                "itemType": "HELP_ARTICLE",
                "title": "Printing a Map Snapshot",
                "summary": "Print the current map view.",
                "body": "Choose Map > Print to print the current map view with the incident.",
                "category": "Mapping and Location",
                "url": "https://resources.example.com/items/help-e2e-new-article",
                "published": True,
            }
        )
        + "\n"
    )
    table = stack["resources"]["ResourceCenterTable"]
    before = current_index_version(stack, table)
    # When it is imported with the admin CLI
    imported = psap_admin(state_file, "resource-center", "import", str(catalog_file))
    assert "1 created" in imported
    # Then the queue poller runs the indexer, which publishes a newer index with the item
    deadline = time.monotonic() + 90
    while current_index_version(stack, table) <= before:
        assert time.monotonic() < deadline, "the indexer did not publish a new index"
        time.sleep(0.5)


def current_index_version(stack: dict[str, Any], table: str) -> int:
    client = boto3.client(
        "dynamodb",
        endpoint_url=stack["awsEndpointUrl"],
        region_name=stack["region"],
        aws_access_key_id=stack["awsAccessKeyId"],
        aws_secret_access_key=stack["awsSecretAccessKey"],
    )
    item = client.get_item(
        TableName=table, Key={"pk": {"S": "INDEX"}, "sk": {"S": "CURRENT"}}, ConsistentRead=True
    ).get("Item")
    return int(item["version"]["N"]) if item else 0
