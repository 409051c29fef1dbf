"""GET /api/v1/external/train/user/{userId}/enrollments through its Lambda handler, on moto
tables built from template.yaml: the full and reduced enrollment shapes, task lists and their
counters, live person references, 404s, permissions and tenant isolation."""

import copy
import json
from typing import Any

import pytest

from psap.errors import InvalidInput
from psap.storage.ordering import UpsertOutcome
from psap.training.models import EnrollmentStatus, PhaseEnrollment
from psap.training.store import put_enrollment
from psap.users.models import User
from psap.users.store import put_user
from tests.support.harness import with_query
from tests.support.spec_examples import (
    ENROLLMENT,
    ENROLLMENT_SUMMARY,
    OFFICER,
    SPEC_FIELDS,
    TASK_LIST,
    USER,
    for_tenant,
)
from tests.support.tenant_data import (
    ItemsRead,
    TenantDataApi,
    strict_json,
)

TRAINEE = USER["id"]


pytestmark = pytest.mark.harness(api=TenantDataApi)


@pytest.fixture
def people(api: TenantDataApi) -> None:
    for record in (USER, OFFICER):
        put_user(api.tenant, User.model_validate(record))


def enrollment(**changes: Any) -> PhaseEnrollment:
    record = copy.deepcopy(ENROLLMENT)
    record.update(changes)
    return PhaseEnrollment.model_validate(record)


@pytest.mark.spec("resources-enrollment-fields")
def test_enrollment_shape_is_the_specs_field_for_field(api: TenantDataApi, people: None) -> None:
    # Given an enrollment with every field of the spec's tables set
    assert put_enrollment(api.tenant, enrollment()) is UpsertOutcome.CREATED
    # When the trainee's enrollments are read
    status, body = api.enrollments(TRAINEE)
    # Then it reads back exactly: full form, task list, template, items, audit, groups
    assert status == 200
    (listed,) = body
    assert strict_json(listed) == strict_json(for_tenant(ENROLLMENT, api.tenant))


@pytest.mark.spec("resources-enrollment-fields", "versioning-rule-3")
def test_key_sets_of_every_nested_shape(api: TenantDataApi, people: None) -> None:
    put_enrollment(api.tenant, enrollment())
    (listed,) = api.enrollments(TRAINEE)[1]
    assert set(listed) == SPEC_FIELDS["enrollment"]
    assert set(listed["user"]) == set(listed["primaryTrainingOfficer"]) == SPEC_FIELDS["user"]
    (task_list,) = listed["taskLists"]
    assert set(task_list) == SPEC_FIELDS["taskList"]
    assert set(task_list["subject"]) == SPEC_FIELDS["person"]
    template = task_list["taskListTemplateVersion"]
    assert set(template) == SPEC_FIELDS["templateVersion"]
    assert set(template["items"][0]) == set(template["groups"][0]) == SPEC_FIELDS["templateEntry"]
    assert set(template["columnLabels"][0]) == SPEC_FIELDS["columnLabel"]
    item = task_list["items"][0]
    assert set(item) == SPEC_FIELDS["taskListItem"]
    assert set(item["auditHistory"][0]) == SPEC_FIELDS["auditHistory"]
    assert set(item["auditHistory"][0]["user"]) == SPEC_FIELDS["person"]
    assert set(task_list["groups"][0]) == SPEC_FIELDS["taskListGroup"]


@pytest.mark.spec("resources-nested-enrollment-fields")
def test_nested_enrollments_carry_id_through_signoff_id_only(
    api: TenantDataApi, people: None
) -> None:
    put_enrollment(api.tenant, enrollment())
    (listed,) = api.enrollments(TRAINEE)[1]
    (nested,) = listed["taskLists"][0]["phaseEnrollments"]
    assert set(nested) == SPEC_FIELDS["enrollmentSummary"]
    assert strict_json(nested) == strict_json(for_tenant(ENROLLMENT_SUMMARY, api.tenant))


@pytest.mark.spec("resources-timestamps-and-dates")
def test_dates_are_yyyy_mm_dd_and_timestamps_iso_utc_with_ms(
    api: TenantDataApi, people: None
) -> None:
    put_enrollment(api.tenant, enrollment())
    (listed,) = api.enrollments(TRAINEE)[1]
    assert listed["startDate"] == "2025-11-03"
    assert listed["signoffCreatedAt"] == "2026-01-06T09:30:00.000Z"


def test_task_list_counters_are_computed_from_the_items(api: TenantDataApi, people: None) -> None:
    # Given a source that sends counters that disagree with its items
    record = copy.deepcopy(ENROLLMENT)
    record["taskLists"][0].update(
        totalItems=99, notStartedItemCount=0, proficientItemCount=42, explainedItemCount=7
    )
    put_enrollment(api.tenant, PhaseEnrollment.model_validate(record))
    (listed,) = api.enrollments(TRAINEE)[1]
    task_list = listed["taskLists"][0]
    # Then the counters say what the items say (trainer positions 2, 3, 1, 0)
    counters = {
        name: task_list[name]
        for name in (
            "totalItems",
            "notStartedItemCount",
            "explainedItemCount",
            "demonstratedItemCount",
            "proficientItemCount",
        )
    }
    assert counters == {
        "totalItems": 4,
        "notStartedItemCount": 1,
        "explainedItemCount": 1,
        "demonstratedItemCount": 1,
        "proficientItemCount": 1,
    }
    assert sum(counters.values()) == 2 * len(task_list["items"])


@pytest.mark.spec("states-enrollment-status")
def test_status_is_one_of_the_six_states(api: TenantDataApi, people: None) -> None:
    for status in EnrollmentStatus:
        put_enrollment(api.tenant, enrollment(status=status.value))
        assert api.enrollments(TRAINEE)[1][0]["status"] == status.value


@pytest.mark.spec("states-enrollment-status")
def test_a_status_outside_the_six_states_is_refused_on_import() -> None:
    with pytest.raises(ValueError, match="status"):
        enrollment(status="ON_HOLD")


def test_several_enrollments_come_by_id_each_with_its_task_lists(
    api: TenantDataApi, people: None
) -> None:
    second_list = {**copy.deepcopy(TASK_LIST), "id": 9002, "items": []}
    put_enrollment(api.tenant, enrollment(id=8003, taskLists=[second_list]))
    put_enrollment(api.tenant, enrollment())
    body = api.enrollments(TRAINEE)[1]
    assert [item["id"] for item in body] == [8001, 8003]
    assert [tl["id"] for tl in body[1]["taskLists"]] == [9002]
    assert body[1]["taskLists"][0]["totalItems"] == 0


def test_a_long_list_comes_in_slices_named_by_a_link_header_the_body_still_an_array(
    api: TenantDataApi, people: None
) -> None:
    # Given a trainee with 7 enrollments
    for offset in range(7):
        put_enrollment(api.tenant, enrollment(id=8100 + offset, taskLists=[]))
    # When a client asks for slices of 3 and follows each answer's Link rel=next
    seen: list[int] = []
    query: dict[str, str] | None = {"size": "3"}
    links: list[str] = []
    while query is not None:
        event = api.proxy_event(
            "enrollments_list",
            tenant=api.tenant,
            permissions="MANAGE_PHASES",
            path={"userId": str(TRAINEE)},
        )
        with_query(event, query)
        status, body, headers = api.answer("enrollments_list", event)
        assert status == 200
        assert isinstance(body, list)
        seen.extend(item["id"] for item in body)
        link = headers.get("Link")
        if link is None:
            query = None
            continue
        links.append(link)
        target = link.split(";")[0].strip("<>")
        assert target.startswith(f"/api/v1/external/train/user/{TRAINEE}/enrollments?")
        query = dict(pair.split("=") for pair in target.split("?")[1].split("&"))
    # Then every enrollment came once, in id order, in three slices of at most 3
    assert seen == [8100 + offset for offset in range(7)]
    assert len(links) == 2
    assert links[0].endswith('after=8102&size=3>; rel="next"')


def test_a_slice_stops_before_its_json_passes_the_answer_budget(
    api: TenantDataApi, people: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given 4 enrollments and an answer budget that holds about two of them
    from psap.training import listing

    for offset in range(4):
        put_enrollment(api.tenant, enrollment(id=8200 + offset))
    one = len(json.dumps(api.enrollments(TRAINEE)[1][0], separators=(",", ":")))
    monkeypatch.setattr(listing, "ANSWER_BUDGET_BYTES", one * 2 + 10)
    # When the client asks without a size
    status, body = api.enrollments(TRAINEE)
    # Then the answer holds the two that fit (the Link names the rest: previous test)
    assert status == 200
    assert [item["id"] for item in body] == [8200, 8201]


def test_an_existing_user_with_no_enrollments_is_an_empty_list(
    api: TenantDataApi, people: None
) -> None:
    assert api.enrollments(OFFICER["id"]) == (200, [])


@pytest.mark.spec("errors-error-info")
def test_unknown_user_is_404_error_info(api: TenantDataApi, people: None) -> None:
    status, body = api.enrollments(424242)
    assert status == 404
    assert body == {"info": "user 424242 not found", "reason": "NOT_FOUND"}


@pytest.mark.spec("service-tenant-from-credential")
def test_tenant_isolation_another_tenants_user_is_404(api: TenantDataApi, people: None) -> None:
    put_enrollment(api.tenant, enrollment())
    status, body = api.enrollments(TRAINEE, tenant=api.other_tenant)
    assert status == 404
    assert body["reason"] == "NOT_FOUND"


@pytest.mark.spec("endpoints-path-ids-are-integers")
def test_a_user_id_that_is_not_an_integer_is_400_naming_it(api: TenantDataApi) -> None:
    for user_id in ("abc", "1.5", "9" * 40 + "x"):
        status, body = api.enrollments(user_id)
        assert status == 400, user_id
        assert "'userId'" in body["info"]


@pytest.mark.spec("endpoints-permission-enrollments", "data-auth-rule-2")
def test_permission_manage_phases_is_required(api: TenantDataApi, people: None) -> None:
    status, body = api.call(
        "enrollments_list", path={"userId": str(TRAINEE)}, permissions="MANAGE_USERS,VIEW_QA"
    )
    assert status == 403
    assert body == {
        "info": "Access denied — Manage Phases permission required",
        "reason": "FORBIDDEN",
    }


def test_people_read_as_the_tenants_current_user_records(api: TenantDataApi, people: None) -> None:
    # Given an enrollment imported while the officer was called James Brooks
    put_enrollment(api.tenant, enrollment())
    # When the officer's user record changes
    put_user(api.tenant, User.model_validate({**OFFICER, "lastName": "Brooks-Hale"}))
    (listed,) = api.enrollments(TRAINEE)[1]
    # Then every place that names the officer says so
    task_list = listed["taskLists"][0]
    assert listed["primaryTrainingOfficer"]["lastName"] == "Brooks-Hale"
    assert task_list["primaryTrainingOfficer"]["lastName"] == "Brooks-Hale"
    assert task_list["items"][0]["auditHistory"][0]["user"]["lastName"] == "Brooks-Hale"
    assert task_list["phaseEnrollments"][0]["primaryTrainingOfficer"]["lastName"] == "Brooks-Hale"


def test_a_person_who_is_not_a_user_of_the_tenant_reads_as_stored(
    api: TenantDataApi, people: None
) -> None:
    outsider = {**OFFICER, "id": 99999, "lastName": "Visiting-Instructor"}
    put_enrollment(api.tenant, enrollment(primaryTrainingOfficer=outsider))
    (listed,) = api.enrollments(TRAINEE)[1]
    assert listed["primaryTrainingOfficer"]["lastName"] == "Visiting-Instructor"


def test_import_needs_the_user_first_and_writes_nothing_otherwise(api: TenantDataApi) -> None:
    with pytest.raises(InvalidInput, match="import users first"):
        put_enrollment(api.tenant, enrollment())
    put_user(api.tenant, User.model_validate(USER))
    assert api.enrollments(TRAINEE) == (200, [])


def test_a_task_list_of_another_trainee_is_refused(api: TenantDataApi, people: None) -> None:
    other = copy.deepcopy(TASK_LIST)
    other["subject"] = {**other["subject"], "id": OFFICER["id"]}
    with pytest.raises(InvalidInput, match="task list 9001"):
        put_enrollment(api.tenant, enrollment(taskLists=[other]))


def test_reimport_updates_and_never_duplicates(api: TenantDataApi, people: None) -> None:
    put_enrollment(api.tenant, enrollment())
    again = put_enrollment(api.tenant, enrollment(status="COMPLETE"))
    assert again is UpsertOutcome.UPDATED
    body = api.enrollments(TRAINEE)[1]
    assert [(item["id"], item["status"]) for item in body] == [(8001, "COMPLETE")]


def test_one_query_and_two_batch_reads_per_request(api: TenantDataApi, people: None) -> None:
    # The enrollment items from the cursor; the user item and the page's task lists; the
    # people they name. O(page), never the user's whole partition.
    put_enrollment(api.tenant, enrollment())
    reads = ItemsRead()
    try:
        api.enrollments(TRAINEE)
    finally:
        reads.close()
    assert reads.calls == ["Query", "BatchGetItem", "BatchGetItem"]
