"""GET /api/v1/external/mcp/resources/resource-center/search through its Lambda handler, on
moto tables and a bucket built from template.yaml, with a real index (the real model) over a
small catalog. Test names follow the spec's search rules."""

import io
import json
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from psap.clock import utc_now
from psap.config import resource_center_table, search_index_bucket
from psap.resource_center import catalog, store
from psap.resource_center.engine.artifact import IndexArtifact
from psap.resource_center.indexing import rebuild_index
from psap.resource_center.search import forget_loaded_index
from psap.resource_center.snippet import MARK_CLOSE, MARK_OPEN, visible_text
from psap.storage.dynamodb import dynamodb
from psap.storage.s3 import put_object

TENANT, OTHER_TENANT = 7, 8
RC_ACCESS = "RESOURCE_CENTER_PUBLISH"
NO_RC_ACCESS = "VIEW_KNOWLEDGE,BROWSE_EVENTS"
COACHING, HELP = "COACHING_CONTENT", "HELP_ARTICLE"


def record(external_id: str, item_type: str, title: str, body: str, **fields: Any) -> str:
    return json.dumps(
        {
            "externalId": external_id,
            "itemType": item_type,
            "title": title,
            "summary": fields.get("summary", f"{title}: what to do."),
            "body": body,
            "category": fields.get("category", "CAD How-To"),
            "thumbnailUrl": fields.get("thumbnailUrl"),
            "url": f"https://resources.example.com/items/{external_id}",
            "requiredLicenseName": fields.get("license"),
            "published": fields.get("published", True),
        }
    )


CATALOG = [
    record(
        "coach-cpr",
        COACHING,
        "Protocol Refresher: Cardiac Arrest",
        "Start chest compressions hard and fast for a patient who is not breathing. "
        "Push at least two inches deep at 100 to 120 compressions a minute.",
        category="Protocol Refreshers",
        license="Protocol Coaching Library",
        thumbnailUrl="https://cdn.example.com/cpr.png",
    ),
    record(
        "coach-choking",
        COACHING,
        "Protocol Refresher: Choking",
        "Give abdominal thrusts to a choking adult who cannot speak or cough.",
        category="Protocol Refreshers",
        license="Protocol Coaching Library",
    ),
    record(
        "help-cpr-card",
        HELP,
        "Quick Reference Card: Cardiac Arrest",
        "Open the cardiac arrest guide card. Chest compressions: hard and fast.",
        category="Quick Reference Cards",
    ),
    record(
        "help-rebid",
        HELP,
        "Rebidding ALI for a Wireless Caller",
        "Press Rebid to refresh the caller's Phase II wireless location and uncertainty.",
        license="NG911 Toolkit",
    ),
    record(
        "help-merge",
        HELP,
        "Merging Duplicate Incidents",
        "Choose Incident > Merge to combine two incidents for the same emergency.",
    ),
    record(
        "help-password",
        HELP,
        "Resetting Your Password",
        "Choose Forgot Password on the sign-in page and follow the emailed link.",
    ),
    record(
        "help-draft-cpr",
        HELP,
        "Draft: New Cardiac Arrest Card",
        "Unpublished draft about cardiac arrest chest compressions.",
        published=False,
    ),
]


@pytest.fixture
def catalog_ids(aws: None) -> dict[str, int]:
    forget_loaded_index()
    catalog.import_catalog(CATALOG, utc_now())
    reindex()
    return {item.record.external_id: item.id for item in store.catalog_items()}


_EARLIER_INDEXES: list[IndexArtifact] = []


def reindex() -> None:
    """Rebuilds as the indexer does; vectors embedded by earlier tests are reused (the same
    content hash gives the same vector), which keeps the suite fast."""
    _, artifact = rebuild_index(search_index_bucket(), reuse=_EARLIER_INDEXES[-1:])
    assert artifact is not None  # nothing interrupts it
    _EARLIER_INDEXES[:] = [artifact]


@pytest.fixture
def search_handler(
    aws: None, import_function: Callable[[str], ModuleType]
) -> Iterator[Callable[..., Any]]:
    forget_loaded_index()
    yield import_function("resource_center_search").handler
    forget_loaded_index()


@pytest.fixture
def call(
    search_handler: Any, load_event: Any, lambda_context: Any
) -> Callable[..., tuple[int, Any]]:
    def invoke(
        query: dict[str, str] | None = None,
        tenant: int = TENANT,
        permissions: str = RC_ACCESS,
    ) -> tuple[int, Any]:
        event = load_event("resource_center_search")
        event["queryStringParameters"] = query or None
        event["multiValueQueryStringParameters"] = (
            {key: [value] for key, value in query.items()} if query else None
        )
        event["requestContext"]["authorizer"].update(tenantId=str(tenant), permissions=permissions)
        answer = search_handler(event, lambda_context)
        return answer["statusCode"], json.loads(answer["body"])

    return invoke


def by_external_id(body: dict[str, Any], ids: dict[str, int]) -> dict[str, dict[str, Any]]:
    names = {number: name for name, number in ids.items()}
    return {names[result["id"]]: result for result in body["results"]}


@pytest.mark.spec("resources-search-fields")
def test_results_have_every_field_of_the_spec_and_the_page_fields(
    call: Any, catalog_ids: dict[str, int]
) -> None:
    status, body = call({"q": "cardiac arrest chest compressions"})
    assert status == 200
    assert set(body) == {"results", "totalHits", "page", "pageSize"}
    assert (body["page"], body["pageSize"]) == (0, 10)
    first = body["results"][0]
    assert set(first) == {
        "itemType",
        "title",
        "summary",
        "matchedSnippet",
        "category",
        "thumbnailUrl",
        "requiredLicenseName",
        "url",
        "id",
        "licensed",
        "importStatus",
    }
    cpr = by_external_id(body, catalog_ids)["coach-cpr"]
    assert cpr["id"] == catalog_ids["coach-cpr"]
    assert cpr["itemType"] == COACHING
    assert cpr["category"] == "Protocol Refreshers"
    assert cpr["thumbnailUrl"] == "https://cdn.example.com/cpr.png"
    assert cpr["url"] == "https://resources.example.com/items/coach-cpr"
    assert f"{MARK_OPEN}compressions{MARK_CLOSE}" in cpr["matchedSnippet"]
    assert len(visible_text(cpr["matchedSnippet"])) <= 300


def test_hybrid_search_ranks_the_item_about_the_query_first(
    call: Any, catalog_ids: dict[str, int]
) -> None:
    _, body = call({"q": "patient is not breathing, start CPR"})
    assert body["results"][0]["id"] == catalog_ids["coach-cpr"]


def test_an_item_sharing_no_keyword_with_the_query_is_found_by_meaning(
    call: Any, catalog_ids: dict[str, int]
) -> None:
    # "log in" shares no stem with the password article ("sign-in", "Forgot Password").
    _, body = call({"q": "I cannot remember how to log in"})
    assert catalog_ids["help-password"] in {result["id"] for result in body["results"]}


@pytest.mark.spec("resources-search-license-and-import-status")
def test_licensed_is_true_when_the_tenant_holds_the_license_or_none_is_needed(
    call: Any, catalog_ids: dict[str, int]
) -> None:
    catalog.grant_license(TENANT, "Protocol Coaching Library", utc_now())
    _, body = call({"q": "cardiac arrest compressions choking rebid merge", "pageSize": "50"})
    results = by_external_id(body, catalog_ids)
    assert results["coach-cpr"]["licensed"] is True
    assert results["coach-cpr"]["requiredLicenseName"] == "Protocol Coaching Library"
    assert results["help-rebid"]["licensed"] is False  # NG911 Toolkit: not held
    assert results["help-merge"]["licensed"] is True  # needs no license
    assert results["help-merge"]["requiredLicenseName"] is None


def test_a_revoked_license_is_no_longer_licensed_once_the_cache_period_passed(
    call: Any, catalog_ids: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LICENSE_CACHE_SECONDS", "0")
    catalog.grant_license(TENANT, "NG911 Toolkit", utc_now())
    _, before = call({"q": "rebid wireless location"})
    catalog.revoke_license(TENANT, "NG911 Toolkit")
    _, after = call({"q": "rebid wireless location"})
    assert by_external_id(before, catalog_ids)["help-rebid"]["licensed"] is True
    assert by_external_id(after, catalog_ids)["help-rebid"]["licensed"] is False


def test_a_search_reads_a_constant_number_of_items_never_a_query(
    call: Any, catalog_ids: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a tenant with many licenses and imports, and license caching off
    monkeypatch.setenv("LICENSE_CACHE_SECONDS", "0")
    for number in range(30):
        catalog.grant_license(TENANT, f"License {number}", utc_now())
    for external_id in catalog_ids:
        if external_id != "help-draft-cpr":
            catalog.record_import(TENANT, external_id, utc_now())
    call({"q": "warm the index"})
    operations: list[str] = []

    def record_operation(model: Any, **_: Any) -> None:
        operations.append(model.name)

    dynamodb().meta.events.register("before-call.dynamodb", record_operation)
    # When it searches for a full page
    status, body = call({"q": "cardiac arrest rebid merge password choking", "pageSize": "50"})
    # Then one GetItem reads its licenses and one BatchGetItem the page's import statuses
    assert status == 200 and len(body["results"]) >= 5
    assert sorted(operations) == ["BatchGetItem", "GetItem"]


def test_licenses_are_read_once_per_cache_period_per_tenant(
    call: Any, catalog_ids: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LICENSE_CACHE_SECONDS", "3600")
    catalog.grant_license(TENANT, "NG911 Toolkit", utc_now())
    call({"q": "rebid wireless location"})
    reads: list[str] = []

    def record_get(model: Any, params: dict[str, Any], **_: Any) -> None:
        if model.name == "GetItem":
            reads.append(params["Key"]["sk"]["S"])

    dynamodb().meta.events.register("before-parameter-build.dynamodb", record_get)
    call({"q": "rebid wireless location"})
    call({"q": "rebid wireless location"}, tenant=OTHER_TENANT)
    assert reads == ["LICENSES"]  # only the tenant not yet cached


@pytest.mark.spec("resources-search-license-and-import-status")
def test_import_status_not_imported_imported_and_update_available(
    call: Any, catalog_ids: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INDEX_REFRESH_SECONDS", "0")
    # Given the tenant imported the rebid article and the merge article
    catalog.record_import(TENANT, "help-rebid", utc_now())
    catalog.record_import(TENANT, "help-merge", utc_now())
    # When the merge article changes in the catalog and the index is rebuilt
    changed = json.loads(CATALOG[4])
    changed["body"] += " Merging cannot be undone."
    catalog.import_catalog([json.dumps(changed)], utc_now())
    reindex()
    _, body = call({"q": "rebid merge incidents password", "pageSize": "50"})
    results = by_external_id(body, catalog_ids)
    # Then each result carries the tenant's status against the catalog's current version
    assert results["help-rebid"]["importStatus"] == "IMPORTED"
    assert results["help-merge"]["importStatus"] == "UPDATE_AVAILABLE"
    assert results["help-password"]["importStatus"] == "NOT_IMPORTED"


@pytest.mark.spec("resources-search-license-and-import-status", "service-tenant-from-credential")
def test_tenant_b_imports_and_licenses_never_affect_tenant_a(
    call: Any, catalog_ids: dict[str, int]
) -> None:
    catalog.record_import(OTHER_TENANT, "help-rebid", utc_now())
    catalog.grant_license(OTHER_TENANT, "NG911 Toolkit", utc_now())
    _, mine = call({"q": "rebid wireless location"})
    _, theirs = call({"q": "rebid wireless location"}, tenant=OTHER_TENANT)
    assert by_external_id(mine, catalog_ids)["help-rebid"]["importStatus"] == "NOT_IMPORTED"
    assert by_external_id(mine, catalog_ids)["help-rebid"]["licensed"] is False
    assert by_external_id(theirs, catalog_ids)["help-rebid"]["importStatus"] == "IMPORTED"
    assert by_external_id(theirs, catalog_ids)["help-rebid"]["licensed"] is True


@pytest.mark.spec("data-auth-rule-4")
def test_without_resource_center_access_only_help_articles_are_returned_or_counted(
    call: Any, catalog_ids: dict[str, int]
) -> None:
    query = {"q": "cardiac arrest chest compressions choking", "pageSize": "50"}
    _, full = call(query, permissions=RC_ACCESS)
    status, limited = call(query, permissions=NO_RC_ACCESS)
    assert status == 200
    assert {result["itemType"] for result in full["results"]} == {COACHING, HELP}
    assert {result["itemType"] for result in limited["results"]} == {HELP}
    # Coaching content is not in totalHits either: it is filtered before ranking.
    coaching_hits = sum(result["itemType"] == COACHING for result in full["results"])
    assert limited["totalHits"] == full["totalHits"] - coaching_hits
    assert limited["totalHits"] == len(limited["results"])


@pytest.mark.spec("data-auth-rule-4")
def test_without_resource_center_access_asking_for_coaching_content_finds_nothing(
    call: Any, catalog_ids: dict[str, int]
) -> None:
    status, body = call({"q": "cardiac arrest", "itemType": COACHING}, permissions=NO_RC_ACCESS)
    assert (status, body["results"], body["totalHits"]) == (200, [], 0)


@pytest.mark.parametrize("permissions", ["ADMIN", "RESOURCE_CENTER_PUBLISH"])
@pytest.mark.spec("data-auth-rule-4")
def test_admin_or_resource_center_publish_sees_coaching_content(
    call: Any, catalog_ids: dict[str, int], permissions: str
) -> None:
    _, body = call({"q": "choking abdominal thrusts"}, permissions=permissions)
    assert body["results"][0]["id"] == catalog_ids["coach-choking"]


def test_any_valid_partner_credential_may_search(call: Any, catalog_ids: dict[str, int]) -> None:
    status, body = call({"q": "merge duplicate incidents"}, permissions="")
    assert status == 200
    assert body["results"][0]["id"] == catalog_ids["help-merge"]


def test_unpublished_items_are_never_returned(call: Any, catalog_ids: dict[str, int]) -> None:
    _, body = call({"q": "draft new cardiac arrest card", "pageSize": "50"})
    assert catalog_ids["help-draft-cpr"] not in {result["id"] for result in body["results"]}
    assert body["totalHits"] == len(body["results"])


def test_unpublishing_removes_an_item_once_the_index_is_rebuilt(
    call: Any, catalog_ids: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INDEX_REFRESH_SECONDS", "0")
    _, before = call({"q": "merge duplicate incidents"})
    catalog.set_published("help-merge", False, utc_now())
    reindex()
    _, after = call({"q": "merge duplicate incidents"})
    assert before["results"][0]["id"] == catalog_ids["help-merge"]
    assert catalog_ids["help-merge"] not in {result["id"] for result in after["results"]}


def test_a_warm_container_keeps_its_index_until_the_refresh_interval_passes(
    call: Any, catalog_ids: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INDEX_REFRESH_SECONDS", "3600")
    call({"q": "merge"})
    catalog.set_published("help-merge", False, utc_now())
    reindex()
    _, stale = call({"q": "merge duplicate incidents"})
    monkeypatch.setenv("INDEX_REFRESH_SECONDS", "0")
    _, fresh = call({"q": "merge duplicate incidents"})
    assert stale["results"][0]["id"] == catalog_ids["help-merge"]
    assert catalog_ids["help-merge"] not in {result["id"] for result in fresh["results"]}


def test_item_type_and_category_filter_the_results(call: Any, catalog_ids: dict[str, int]) -> None:
    _, help_only = call({"q": "cardiac arrest", "itemType": HELP})
    assert {result["itemType"] for result in help_only["results"]} == {HELP}
    _, cards = call({"q": "cardiac arrest", "category": "Quick Reference Cards"})
    assert [result["id"] for result in cards["results"]] == [catalog_ids["help-cpr-card"]]
    _, nothing = call({"q": "cardiac arrest", "category": "quick reference cards"})
    assert nothing["totalHits"] == 0  # exact match


def test_pages_are_0_based_and_do_not_overlap(call: Any, catalog_ids: dict[str, int]) -> None:
    query = {"q": "cardiac arrest compressions password merge rebid choking"}
    _, everything = call({**query, "pageSize": "50"})
    _, first = call({**query, "pageSize": "2"})
    _, second = call({**query, "pageSize": "2", "page": "1"})
    ranked = [result["id"] for result in everything["results"]]
    assert [result["id"] for result in first["results"]] == ranked[:2]
    assert [result["id"] for result in second["results"]] == ranked[2:4]
    assert first["totalHits"] == second["totalHits"] == everything["totalHits"]


def test_a_page_past_the_end_is_empty_with_the_true_total(
    call: Any, catalog_ids: dict[str, int]
) -> None:
    _, body = call({"q": "merge duplicate incidents", "page": "40"})
    assert body["results"] == []
    assert body["totalHits"] > 0
    assert body["page"] == 40


def test_page_size_above_50_is_reduced_to_50(call: Any, catalog_ids: dict[str, int]) -> None:
    status, body = call({"q": "merge", "pageSize": "500"})
    assert (status, body["pageSize"]) == (200, 50)


def test_before_any_index_exists_search_answers_empty(call: Any) -> None:
    status, body = call({"q": "anything at all"})
    assert status == 200
    assert body == {"results": [], "totalHits": 0, "page": 0, "pageSize": 10}


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ({}, "q"),
        ({"q": ""}, "q"),
        ({"q": "    "}, "q"),
        ({"q": "x" * 501}, "q"),
        ({"q": "cpr", "page": "-1"}, "page"),
        ({"q": "cpr", "page": "first"}, "page"),
        ({"q": "cpr", "pageSize": "0"}, "pageSize"),
        ({"q": "cpr", "pageSize": "ten"}, "pageSize"),
        ({"q": "cpr", "itemType": "VIDEO"}, "itemType"),
        ({"q": "cpr", "category": "  "}, "category"),
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


@pytest.mark.spec("errors-401-body")
def test_request_without_authorizer_context_is_401(
    search_handler: Any, load_event: Any, lambda_context: Any
) -> None:
    event = load_event("resource_center_search")
    event["requestContext"].pop("authorizer")
    answer = search_handler(event, lambda_context)
    assert answer["statusCode"] == 401
    assert json.loads(answer["body"]) == {
        "info": "Authentication required",
        "reason": "UNAUTHENTICATED",
    }


def test_an_index_of_an_older_format_answers_empty_instead_of_failing(call: Any) -> None:
    # Right after an upgrade the pointer may name an artifact the new code cannot read.
    bucket = search_index_bucket()
    put_object(bucket, "resource-center/index/old.npz", old_format_artifact(), content_type="x")
    store.publish_index(
        store.IndexPointer(
            version=1, key="resource-center/index/old.npz", documents=1, built_at="t"
        ),
    )
    status, body = call({"q": "cardiac arrest"})
    assert status == 200
    assert (body["results"], body["totalHits"]) == ([], 0)


def old_format_artifact() -> bytes:
    buffer = io.BytesIO()
    header = json.dumps({"formatVersion": 1}).encode()
    np.savez(buffer, header=np.frombuffer(header, dtype=np.uint8))
    return buffer.getvalue()


def test_a_store_failure_while_reading_the_page_statuses_answers_503(
    call: Any, catalog_ids: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a warm search function (index loaded) whose license cache is off
    monkeypatch.setenv("LICENSE_CACHE_SECONDS", "0")
    status, _ = call({"q": "cardiac arrest"})
    assert status == 200
    # When the table its page reads go to is gone (those reads run beside the snippets)
    # (the table is deletion-protected, as every table of the template: lifted first)
    dynamodb().update_table(TableName=resource_center_table(), DeletionProtectionEnabled=False)
    dynamodb().delete_table(TableName=resource_center_table())
    status, body = call({"q": "cardiac arrest"})
    # Then the caller gets 503 ErrorInfo, not a 500 or a page without statuses
    assert status == 503
    assert set(body) == {"info", "reason"}
