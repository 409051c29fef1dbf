"""Resource-center catalog administration, the indexer and the admin CLI, on moto resources
built from template.yaml (JSON Lines import idempotent by externalId with per-line
errors, publish/unpublish, licenses, tenant imports, index rebuilt on change)."""

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from psap.clock import utc_now
from psap.config import resource_center_table, search_index_bucket
from psap.errors import Conflict, InvalidInput, NotFound
from psap.resource_center import catalog, store
from psap.resource_center.engine import artifact as artifacts
from psap.resource_center.engine import builder
from psap.resource_center.engine.builder import build_artifact
from psap.resource_center.indexing import rebuild_index
from psap.resource_center.models import CatalogRecord
from psap.resource_center.store import Change
from psap.resource_center.store import batches as store_batches
from psap.resource_center.store import items as store_items
from psap.storage.dynamodb import batch_get, dynamodb
from psap.storage.s3 import s3
from psap.storage.sqs import sqs
from tests.conftest import TEMPLATE
from tests.unit.test_resource_center_artifact import CountingEncoder
from tools.admin import main

TENANT = 7


def line(external_id: str, **fields: Any) -> str:
    record = {
        "externalId": external_id,
        "itemType": "HELP_ARTICLE",
        "title": f"Article {external_id}",
        "summary": "What it is about.",
        "body": f"Steps for {external_id}: open the menu and choose the action.",
        "category": "CAD How-To",
        "thumbnailUrl": None,
        "url": f"https://resources.example.com/items/{external_id}",
        "requiredLicenseName": None,
        "published": True,
    }
    record.update(fields)
    return json.dumps(record)


def queue_url() -> str:
    return TEMPLATE.queues["SearchIndexQueue"].url


def rebuild_requests() -> list[dict[str, Any]]:
    answer = sqs().receive_message(QueueUrl=queue_url(), MaxNumberOfMessages=10)
    return [json.loads(message["Body"]) for message in answer.get("Messages", [])]


def items_by_external_id() -> dict[str, Any]:
    return {item.record.external_id: item for item in store.catalog_items()}


def import_lines(lines: list[str]) -> catalog.ImportReport:
    request = catalog.queue_rebuild_request(queue_url())
    return catalog.import_catalog(lines, utc_now(), request)


def test_import_assigns_ids_and_is_idempotent_by_external_id(aws: None) -> None:
    # Given a file of three records
    lines = [line("a"), line("b"), line("c")]
    first = import_lines(lines)
    ids = {name: item.id for name, item in items_by_external_id().items()}
    # When the same file is imported again
    again = import_lines(lines)
    # Then nothing changes: same ids, version 1, no second rebuild request
    assert first.changes[Change.CREATED] == 3
    assert again.changes[Change.UNCHANGED] == 3
    assert {name: item.id for name, item in items_by_external_id().items()} == ids
    assert sorted(ids.values()) == [1, 2, 3]
    assert all(item.version == 1 for item in items_by_external_id().values())
    assert len(rebuild_requests()) == 1


def test_a_content_change_bumps_the_version_and_the_published_flag_alone_does_not(
    aws: None,
) -> None:
    import_lines([line("a"), line("b")])
    report = import_lines([line("a", body="New steps."), line("b", published=False)])
    items = items_by_external_id()
    assert (report.changes[Change.UPDATED], report.changes[Change.UNPUBLISHED]) == (1, 1)
    assert (items["a"].version, items["a"].record.body) == (2, "New steps.")
    assert (items["b"].version, items["b"].published) == (1, False)


def test_bad_lines_are_reported_by_number_and_the_good_lines_are_imported(aws: None) -> None:
    lines = [
        line("good-1"),
        "{not json",
        "",  # blank lines are skipped
        line("bad-type", itemType="VIDEO"),
        json.dumps({"externalId": "missing-fields"}),
        line("extra", color="red"),
        "[1, 2]",
        line("good-2"),
    ]
    report = import_lines(lines)
    assert report.changes[Change.CREATED] == 2
    assert set(items_by_external_id()) == {"good-1", "good-2"}
    assert [error.line for error in report.errors] == [2, 4, 5, 6, 7]
    messages = {error.line: error.message for error in report.errors}
    assert messages[2].startswith("not JSON")
    assert "itemType" in messages[4]
    assert "title" in messages[5] and "url" in messages[5]
    assert "color" in messages[6]
    assert messages[7] == "not a JSON object"


def test_a_repeated_external_id_in_one_file_keeps_the_last_line(aws: None) -> None:
    report = import_lines([line("a", title="First"), line("a", title="Second")])
    items = items_by_external_id()
    assert list(items) == ["a"]
    assert (items["a"].record.title, items["a"].version) == ("Second", 2)
    assert report.changes[Change.CREATED] == 1 and report.changes[Change.UPDATED] == 1


def test_imports_larger_than_one_batch_are_stored_whole(aws: None) -> None:
    report = import_lines([line(f"item-{number:03d}") for number in range(120)])
    assert report.changes[Change.CREATED] == 120
    assert sorted(item.id for item in items_by_external_id().values()) == list(range(1, 121))


def test_a_create_that_lost_a_race_becomes_an_update_without_a_duplicate(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_lines([line("a")])
    # Given an importer that did not yet see the item another importer just created
    original = store.find_item_id
    stale = [True]

    def find_item_id(external_id: str) -> int | None:
        if stale:
            stale.pop()
            return None
        return original(external_id)

    monkeypatch.setattr(store_items, "find_item_id", find_item_id)
    # When it upserts the same externalId with other content
    record = CatalogRecord.model_validate_json(line("a", title="Changed"))
    outcome = store.upsert_record(record, utc_now())
    # Then its create fails on the externalId guard and it updates the existing item
    assert outcome.change is Change.UPDATED
    assert list(items_by_external_id()) == ["a"]
    assert items_by_external_id()["a"].record.title == "Changed"


def test_a_batch_whose_create_lost_a_race_falls_back_record_by_record(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_lines([line("taken")])
    stale = [True]  # the first lookup misses the guard another importer just wrote

    def lookup(*arguments: Any, **options: Any) -> list[dict[str, Any]]:
        if stale:
            stale.pop()
            return []
        return batch_get(*arguments, **options)

    monkeypatch.setattr(store_batches, "batch_get", lookup)
    records = [CatalogRecord.model_validate_json(line(name)) for name in ("taken", "fresh")]
    outcomes = store.upsert_records(records, utc_now())
    assert [outcome.change for outcome in outcomes] == [Change.UNCHANGED, Change.CREATED]
    assert sorted(items_by_external_id()) == ["fresh", "taken"]


def test_publish_and_unpublish_by_external_id_or_id_ask_for_one_rebuild(aws: None) -> None:
    import_lines([line("a", published=False)])
    rebuild_requests()  # the import's own request
    request = catalog.queue_rebuild_request(queue_url())
    item_id = items_by_external_id()["a"].id
    published = catalog.set_published("a", True, utc_now(), request_rebuild=request)
    again = catalog.set_published(str(item_id), True, utc_now(), request_rebuild=request)
    unpublished = catalog.set_published(str(item_id), False, utc_now(), request_rebuild=request)
    assert [published.change, again.change, unpublished.change] == [
        Change.PUBLISHED,
        Change.UNCHANGED,
        Change.UNPUBLISHED,
    ]
    assert len(rebuild_requests()) == 2  # none for the no-op
    with pytest.raises(NotFound):
        catalog.set_published("no-such-item", True, utc_now())


def test_licenses_are_granted_per_tenant_and_revoking_one_not_held_is_not_found(
    aws: None,
) -> None:
    catalog.grant_license(TENANT, " Protocol Coaching Library ", utc_now())
    catalog.grant_license(TENANT, "Protocol Coaching Library", utc_now())
    assert store.tenant_licenses(TENANT) == {"Protocol Coaching Library"}
    assert store.tenant_licenses(TENANT + 1) == frozenset()
    catalog.revoke_license(TENANT, "Protocol Coaching Library")
    with pytest.raises(NotFound):
        catalog.revoke_license(TENANT, "Protocol Coaching Library")
    with pytest.raises(InvalidInput):
        catalog.grant_license(TENANT, "  ", utc_now())


def test_the_tenants_license_set_always_agrees_with_its_license_grants(aws: None) -> None:
    # The search reads the one LICENSES item; the grants are the LICENSE# items. Both are
    # written in one transaction, so no sequence of grants and revokes sets them apart.
    table = resource_center_table()

    def granted_items() -> frozenset[str]:
        answer = dynamodb().query(
            TableName=table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :license)",
            ExpressionAttributeValues={
                ":pk": {"S": store.tenant_pk(TENANT)},
                ":license": {"S": "LICENSE#"},
            },
        )
        return frozenset(item["licenseName"]["S"] for item in answer["Items"])

    for name in ("A", "B", "C"):
        catalog.grant_license(TENANT, name, utc_now())
    catalog.revoke_license(TENANT, "B")
    with pytest.raises(NotFound):
        catalog.revoke_license(TENANT, "B")
    assert store.tenant_licenses(TENANT) == granted_items() == {"A", "C"}
    catalog.revoke_license(TENANT, "A")
    catalog.revoke_license(TENANT, "C")
    assert store.tenant_licenses(TENANT) == granted_items() == frozenset()
    catalog.grant_license(TENANT, "A", utc_now())
    assert store.tenant_licenses(TENANT) == granted_items() == {"A"}


def test_a_tenant_import_records_the_current_or_a_named_earlier_version(aws: None) -> None:
    import_lines([line("a")])
    import_lines([line("a", body="Second version.")])
    item, version = catalog.record_import(TENANT, "a", utc_now())
    assert (item.version, version) == (2, 2)
    _, version = catalog.record_import(TENANT + 1, "a", utc_now(), version=1)
    assert store.imported_versions(TENANT, [item.id]) == {item.id: 2}
    assert store.imported_versions(TENANT + 1, [item.id]) == {item.id: 1}
    with pytest.raises(InvalidInput):
        catalog.record_import(TENANT, "a", utc_now(), version=3)
    with pytest.raises(NotFound):
        catalog.record_import(TENANT, "nothing", utc_now())


def test_a_rebuild_embeds_only_new_or_changed_documents(aws: None) -> None:
    bucket = search_index_bucket()
    import_lines([line("a"), line("b"), line("c", published=False)])
    first, _ = rebuild_index(bucket)
    unchanged, _ = rebuild_index(bucket)
    import_lines([line("b", body="Changed steps."), line("c"), line("d")])
    changed, _ = rebuild_index(bucket)
    assert (first.documents, first.embedded) == (2, 2)
    assert (unchanged.documents, unchanged.embedded, unchanged.reused) == (2, 0, 2)
    assert (changed.documents, changed.embedded, changed.reused) == (4, 3, 1)
    assert [first.index_version, unchanged.index_version, changed.index_version] == [1, 2, 3]
    pointer = store.index_pointer()
    assert pointer is not None and (pointer.version, pointer.documents) == (3, 4)


class StopAfter:
    """`should_stop` that says stop once `checks` chunks were embedded: an interruption."""

    def __init__(self, checks: int) -> None:
        self.left = checks

    def __call__(self) -> bool:
        self.left -= 1
        return self.left < 0


def test_an_interrupted_first_build_resumes_where_it_stopped(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given ten documents embedded two per chunk, and a build stopped after two chunks
    monkeypatch.setattr(builder, "EMBED_CHUNK_DOCUMENTS", 2)
    bucket = search_index_bucket()
    import_lines([line(f"doc-{number}") for number in range(10)])
    encoder = CountingEncoder()
    stopped, artifact = rebuild_index(bucket, encoder, should_stop=StopAfter(1))
    # Then nothing is published, and the checkpoint keeps the four embedded documents
    assert (stopped.finished, stopped.published, stopped.embedded, artifact) == (
        False,
        False,
        4,
        None,
    )
    assert store.index_pointer() is None
    checkpoint = artifacts.load_checkpoint(bucket)
    assert checkpoint is not None and checkpoint.size == 4
    # When it is interrupted again, then resumed to the end
    again, _ = rebuild_index(bucket, encoder, should_stop=StopAfter(1))
    finished, built = rebuild_index(bucket, encoder)
    # Then every document was embedded exactly once, and the index is the whole catalog
    assert (again.finished, again.embedded) == (False, 4)
    assert (finished.finished, finished.published, finished.embedded, finished.reused) == (
        True,
        True,
        2,
        8,
    )
    assert len(encoder.embedded) == 10 == len(set(encoder.embedded))
    assert built is not None and built.size == 10
    assert artifacts.load_checkpoint(bucket) is None  # a finished build clears it
    whole, _ = build_artifact(
        [item for item in store.catalog_items() if item.published],
        9,
        "t",
        encoder=CountingEncoder(),
    )
    np.testing.assert_array_equal(built.embeddings, whole.embeddings)
    np.testing.assert_array_equal(built.passage_starts, whole.passage_starts)


class RemainingTime:
    def __init__(self, milliseconds: int) -> None:
        self.milliseconds = milliseconds

    def get_remaining_time_in_millis(self) -> int:
        return self.milliseconds


def test_the_indexer_asks_for_another_run_when_its_time_runs_out(
    aws: None,
    import_function: Callable[[str], ModuleType],
    load_event: Callable[[str], dict[str, Any]],
    lambda_context: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(builder, "EMBED_CHUNK_DOCUMENTS", 1)
    for name, value in TEMPLATE.functions["ResourceCenterIndexerFunction"].environment.items():
        monkeypatch.setenv(name, value)  # the queue it continues through
    import_lines([line("a"), line("b"), line("c")])
    rebuild_requests()  # the import's own request, already in the event below
    app = import_function("resource_center_indexer")
    event = load_event("resource_center_indexer")
    # Given a run with less time left than the indexer's margin
    monkeypatch.setattr(
        lambda_context,
        "get_remaining_time_in_millis",
        RemainingTime(app.STOP_MARGIN_MS - 1).get_remaining_time_in_millis,
    )
    answer = app.handler(event, lambda_context)
    # Then it stops after one chunk and queues a request to go on
    assert answer["finished"] is False
    assert store.index_pointer() is None
    (request,) = rebuild_requests()
    assert request["reason"].startswith("resume the interrupted build")
    # And the next run with time to spare finishes the index
    monkeypatch.setattr(
        lambda_context,
        "get_remaining_time_in_millis",
        RemainingTime(900_000).get_remaining_time_in_millis,
    )
    assert app.handler(event, lambda_context)["finished"] is True
    pointer = store.index_pointer()
    assert pointer is not None and pointer.documents == 3


def test_the_index_pointer_never_moves_to_an_older_version(aws: None) -> None:
    newer = store.IndexPointer(version=5, key="k5", documents=1, built_at="t")
    older = store.IndexPointer(version=4, key="k4", documents=1, built_at="t")
    assert store.publish_index(newer) is True
    assert store.publish_index(older) is False
    assert store.index_pointer() == newer


def test_only_the_three_newest_index_artifacts_are_kept(aws: None) -> None:
    bucket = search_index_bucket()
    import_lines([line("a")])
    for _ in range(5):
        rebuild_index(bucket)
    listed = s3().list_objects_v2(Bucket=bucket, Prefix=artifacts.KEY_PREFIX)
    keys = [entry["Key"] for entry in listed.get("Contents", [])]
    assert keys == [artifacts.artifact_key(version) for version in (3, 4, 5)]


def test_the_indexer_function_rebuilds_once_per_batch_of_change_messages(
    aws: None,
    import_function: Callable[[str], ModuleType],
    load_event: Callable[[str], dict[str, Any]],
    lambda_context: Any,
) -> None:
    import_lines([line("a"), line("b")])
    handler = import_function("resource_center_indexer").handler
    event = load_event("resource_center_indexer")
    assert len(event["Records"]) == 2
    answer = handler(event, lambda_context)
    assert answer == {"indexVersion": 1, "documents": 2, "finished": True}
    pointer = store.index_pointer()
    assert pointer is not None and pointer.version == 1


# ------------------------------------------------------------------------------- admin CLI


def run(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    code = main(["--auth-table", "unused", "--knowledge-table", "unused", *arguments])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_import_prints_each_rejected_line_and_a_summary(
    aws: None, tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEARCH_INDEX_QUEUE_URL", queue_url())
    source = tmp_path / "catalog.jsonl"
    source.write_text("\n".join([line("a"), "oops", line("b", itemType="X")]) + "\n")
    code, out, err = run(capsys, "resource-center", "import", str(source))
    assert code == 2
    assert "line 2: not JSON" in err
    assert "line 3: itemType" in err
    assert "2 line(s) rejected" in err
    assert "1 created" in out and "2 rejected" in out
    assert [request["reason"] for request in rebuild_requests()] == [
        "catalog import: 1 created, 0 updated, 0 published, 0 unpublished, 0 unchanged, 2 rejected"
    ]


def test_cli_publish_license_and_record_import(
    aws: None, tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SEARCH_INDEX_QUEUE_URL", raising=False)
    source = tmp_path / "catalog.jsonl"
    source.write_text(line("a", published=False) + "\n")
    assert run(capsys, "resource-center", "import", str(source))[0] == 0
    code, out, err = run(capsys, "resource-center", "publish", "a")
    assert (code, out.strip()) == (0, "catalog item 1 (a): published")
    assert "not asked to rebuild" in err  # no queue configured for this target
    code, out, _ = run(
        capsys, "resource-center", "license", "grant", "--tenant", "7", "--license", "NG911"
    )
    assert (code, out.strip()) == (0, "tenant 7 holds the license 'NG911'")
    code, out, _ = run(capsys, "resource-center", "record-import", "--tenant", "7", "--item", "1")
    assert (code, out.strip()) == (0, "tenant 7 imported catalog item 1 (a) at version 1 of 1")
    code, _, err = run(
        capsys, "resource-center", "license", "revoke", "--tenant", "8", "--license", "NG911"
    )
    assert code == 2 and "does not hold the license 'NG911'" in err


def test_bulk_created_items_are_stored_exactly_like_imported_ones(aws: None) -> None:
    # The demo's fast loader must not drift from the import path.
    table = resource_center_table()
    import_lines([line("imported")])
    (bulk,) = store.bulk_create([CatalogRecord.model_validate_json(line("bulk"))], utc_now())
    raw = {
        item["sk"]["S"]: item
        for item in dynamodb().scan(TableName=table)["Items"]
        if item["pk"]["S"] == store.CATALOG_PK
    }
    imported, loaded = (
        {
            key: value
            for key, value in item.items()
            if key
            not in {
                "sk",
                "id",
                "externalId",
                "title",
                "body",
                "url",
                "contentHash",
                "createdAt",
                "updatedAt",
            }
        }
        for item in raw.values()
    )
    assert imported == loaded
    assert store.find_item_id("bulk") == bulk.id
    assert store.get_item(bulk.id) == bulk
    with pytest.raises(Conflict):
        store.bulk_create([CatalogRecord.model_validate_json(line("imported"))], utc_now())
