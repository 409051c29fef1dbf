"""Publishing (ours: the spec says only that exactly one version is published at a time),
unpublishing and the soft delete, through the handlers on moto."""

from typing import Any

import pytest

from tests.support.knowledge import (
    ALL_API,
    OTHER_TENANT,
    VIEW,
    KnowledgeApi,
    card_payload,
)

pytestmark = pytest.mark.harness(api=KnowledgeApi)


@pytest.fixture
def drafts(api: KnowledgeApi) -> dict[str, Any]:
    """An entry with three unpublished versions."""
    entry = api.created(card_payload())
    for _ in range(2):
        api.appended(entry["id"], {"apiControl": ALL_API})
    return dict(api.read(entry["id"]))


@pytest.mark.spec("versioning-rule-2")
def test_versioning_rule2_publishing_makes_exactly_one_version_published(
    api: KnowledgeApi, drafts: dict[str, Any]
) -> None:
    knowledge_id = drafts["id"]
    status, summary = api.publish(knowledge_id, 2)
    assert status == 200
    assert summary["publishedVersion"] == 2
    assert summary["updatedAt"] > drafts["updatedAt"]
    # Publishing another one moves the one published version
    api.publish(knowledge_id, 1)
    published = [api.read(knowledge_id, version=n)["published"] for n in (1, 2, 3)]
    assert published == [True, False, False]
    assert api.listing()["items"][0]["publishedVersion"] == 1


def test_drafts_load_first_and_publish_later(api: KnowledgeApi, drafts: dict[str, Any]) -> None:
    assert drafts["publishedVersion"] is None
    assert api.publish(drafts["id"], 3)[1]["publishedVersion"] == 3
    assert api.read(drafts["id"])["published"] is True


def test_publishing_the_published_version_again_changes_nothing(
    api: KnowledgeApi, drafts: dict[str, Any]
) -> None:
    _, first = api.publish(drafts["id"], 2)
    status, again = api.publish(drafts["id"], 2)
    assert status == 200
    assert again == first


@pytest.mark.parametrize("version", [0, 4, 99])
def test_publishing_a_version_that_does_not_exist_is_404(
    api: KnowledgeApi, drafts: dict[str, Any], version: int
) -> None:
    status, body = api.publish(drafts["id"], version)
    assert (status, body["reason"]) == (404, "NOT_FOUND")
    assert api.read(drafts["id"])["publishedVersion"] is None


@pytest.mark.spec("resources-knowledge-summary-fields")
def test_unpublish_leaves_published_version_null(api: KnowledgeApi, drafts: dict[str, Any]) -> None:
    api.publish(drafts["id"], 3)
    status, summary = api.unpublish(drafts["id"])
    assert (status, summary["publishedVersion"]) == (200, None)
    entry = api.read(drafts["id"])
    assert (entry["publishedVersion"], entry["published"]) == (None, False)
    assert api.unpublish(drafts["id"]) == (200, summary)


@pytest.mark.spec("data-auth-rule-3")
def test_publish_and_unpublish_need_manage_knowledge(
    api: KnowledgeApi, drafts: dict[str, Any]
) -> None:
    assert api.publish(drafts["id"], 1, permissions=VIEW)[0] == 403
    assert api.unpublish(drafts["id"], permissions=VIEW)[0] == 403


@pytest.mark.spec("service-tenant-from-credential")
def test_publish_of_another_tenants_entry_is_404(api: KnowledgeApi, drafts: dict[str, Any]) -> None:
    assert api.publish(drafts["id"], 1, tenant=OTHER_TENANT)[0] == 404
    assert api.unpublish(drafts["id"], tenant=OTHER_TENANT)[0] == 404


def test_publish_through_the_sample_event(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())  # the sample event names a demo entry: this one
    path = {"knowledgeId": str(entry["id"]), "version": "1"}
    status, summary = api.call("knowledge_publish", path=path)
    assert (status, summary["id"], summary["publishedVersion"]) == (200, entry["id"], 1)
    unpublished = api.call("knowledge_unpublish", path={"knowledgeId": str(entry["id"])})
    assert unpublished[1]["publishedVersion"] is None


@pytest.mark.spec("knowledge-list-rule-1")
def test_delete_is_204_and_the_list_omits_the_entry_with_counters_right(api: KnowledgeApi) -> None:
    kept = api.created(card_payload(external_id="gc-kept"))
    gone = api.created(card_payload(external_id="gc-gone"))
    status, body = api.delete(gone["id"])
    assert (status, body) == (204, None)
    listed = api.listing()
    assert [item["id"] for item in listed["items"]] == [kept["id"]]
    assert listed["totalItems"] == 1
    assert api.listing(provider="NENA", knowledgeType="GUIDE_CARD")["totalItems"] == 1


def test_a_deleted_entry_answers_404_to_get_append_publish_card_and_delete(
    api: KnowledgeApi,
) -> None:
    entry = api.created(card_payload())
    api.delete(entry["id"])
    assert api.get(entry["id"])[0] == 404
    assert api.append(entry["id"], {"apiControl": ALL_API})[0] == 404
    assert api.publish(entry["id"], 1)[0] == 404
    assert api.card(entry["id"])[0] == 404
    assert api.delete(entry["id"])[0] == 404


def test_a_deleted_entrys_external_id_is_free_for_a_new_entry(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    api.delete(entry["id"])
    again = api.created(card_payload())
    assert again["id"] != entry["id"]


def test_delete_of_an_unknown_or_other_tenants_entry_is_404(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    assert api.delete(entry["id"], tenant=OTHER_TENANT)[0] == 404
    assert api.delete(entry["id"] + 1)[0] == 404
    assert api.delete(entry["id"], permissions=VIEW)[0] == 403
    assert api.read(entry["id"])["id"] == entry["id"]


def test_delete_through_the_sample_event(api: KnowledgeApi) -> None:
    entry = api.created(card_payload())
    assert api.call("knowledge_delete", path={"knowledgeId": str(entry["id"])}) == (204, None)
