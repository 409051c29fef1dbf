"""Users, enrollments, evaluations, incidents and events over real HTTP through the local
stack (gateway, authorizer, functions) with the demo tenant data it loads at start-up."""

from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.e2e

BASE = "/api/v1/external"
STATES = {"SCHEDULED", "IN_PROGRESS", "SUBMITTED", "WAITING_SIGNOFF", "COMPLETE", "CANCELLED"}


def get(stack: dict[str, Any], path: str, token: str, **params: Any) -> httpx.Response:
    return httpx.get(
        stack["baseUrl"] + BASE + path,
        headers={"Authorization": f"Bearer {token}"},
        params=params,
        timeout=30,
    )


def tenant(stack: dict[str, Any], index: int = 0) -> dict[str, Any]:
    facts: dict[str, Any] = stack["tenants"][index]
    return facts


def admin(stack: dict[str, Any], index: int = 0) -> str:
    return str(tenant(stack, index)["credentials"]["admin"])


def test_demo_users_page_by_page_sorted_by_last_name(stack: dict[str, Any]) -> None:
    data = tenant(stack)["tenantData"]
    first = get(stack, "/user", admin(stack), size=20, sort="lastName,asc")
    assert first.status_code == 200
    body = first.json()
    assert body["totalElements"] == len(data["userIds"])
    assert (body["totalPages"], body["first"], body["last"]) == (3, True, False)
    names = [user["lastName"].casefold() for user in body["content"]]
    assert names == sorted(names)
    last = get(stack, "/user", admin(stack), page=2, size=20).json()
    assert (last["last"], last["numberOfElements"]) == (True, len(data["userIds"]) - 40)


def test_a_trainees_enrollments_with_task_lists_and_consistent_counters(
    stack: dict[str, Any],
) -> None:
    data = tenant(stack)["tenantData"]
    answer = get(stack, f"/train/user/{data['traineeId']}/enrollments", admin(stack))
    assert answer.status_code == 200
    enrollments = answer.json()
    assert enrollments and {item["status"] for item in enrollments} <= STATES
    for enrollment in enrollments:
        assert enrollment["user"]["id"] == data["traineeId"]
        for task_list in enrollment["taskLists"]:
            counts = [
                task_list[name]
                for name in (
                    "notStartedItemCount",
                    "explainedItemCount",
                    "demonstratedItemCount",
                    "proficientItemCount",
                )
            ]
            assert sum(counts) == task_list["totalItems"] == len(task_list["items"])
    nobody = get(stack, f"/train/user/{data['userWithoutEnrollments']}/enrollments", admin(stack))
    assert (nobody.status_code, nobody.json()) == (200, [])


@pytest.mark.spec("states-enrollment-status")
def test_every_enrollment_state_appears_in_the_demo_tenant(stack: dict[str, Any]) -> None:
    data = tenant(stack)["tenantData"]
    seen: set[str] = set()
    for user_id in data["userIds"]:
        answer = get(stack, f"/train/user/{user_id}/enrollments", admin(stack))
        seen.update(item["status"] for item in answer.json())
        if seen == STATES:
            break
    assert seen == STATES


def test_a_users_evaluations_newest_first_with_exact_totals(stack: dict[str, Any]) -> None:
    data = tenant(stack)["tenantData"]
    path = f"/qa/user/{data['evaluatedUserId']}/evaluations"
    body = get(stack, path, admin(stack), size=20).json()
    assert body["totalElements"] == data["evaluationCount"]
    created = [item["createdAt"] for item in body["content"]]
    assert created == sorted(created, reverse=True)
    assert all(not item["deleted"] for item in body["content"])
    assert body["content"][0]["results"][0]["qaResponse"]["answer"][0]["speakerSegment"]["words"]
    oldest = get(stack, path, admin(stack), size=5, sort="createdAt,asc").json()
    assert [item["createdAt"] for item in oldest["content"]] == sorted(
        item["createdAt"] for item in oldest["content"]
    )
    training = get(stack, path, admin(stack), isTraining="true").json()
    others = get(stack, path, admin(stack), isTraining="false").json()
    assert training["totalElements"] + others["totalElements"] == data["evaluationCount"]


def test_an_incident_and_its_event_name_each_other(stack: dict[str, Any]) -> None:
    data = tenant(stack)["tenantData"]
    incident = get(stack, f"/mcp/resources/incidents/{data['incidentIds'][0]}", admin(stack))
    assert incident.status_code == 200
    event_ref = incident.json()["event"]
    event = get(stack, f"/mcp/resources/events/{event_ref['id']}", admin(stack)).json()
    assert event["number"] == event_ref["number"]
    assert event["incident"] == {"id": data["incidentIds"][0], "number": incident.json()["number"]}
    assert event["personnel"] and event["media"]


@pytest.mark.spec("service-tenant-from-credential")
def test_tenant_isolation_another_tenants_ids_are_404(stack: dict[str, Any]) -> None:
    theirs = tenant(stack, 1)["tenantData"]
    for path in (
        f"/mcp/resources/incidents/{theirs['incidentIds'][0]}",
        f"/mcp/resources/events/{theirs['eventIds'][0]}",
        f"/train/user/{theirs['userIds'][0]}/enrollments",
        f"/qa/user/{theirs['userIds'][0]}/evaluations",
    ):
        answer = get(stack, path, admin(stack, 0))
        assert answer.status_code == 404, path
        assert answer.json()["reason"] == "NOT_FOUND"
        assert get(stack, path, admin(stack, 1)).status_code == 200, path


@pytest.mark.spec("endpoints-permission-users", "endpoints-permission-incident", "data-auth-rule-2")
def test_permissions_over_http(stack: dict[str, Any]) -> None:
    data = tenant(stack)["tenantData"]
    read_only = tenant(stack)["credentials"]["readOnly"]  # VIEW_KNOWLEDGE, BROWSE_EVENTS, VIEW_QA
    no_knowledge = tenant(stack)["credentials"]["noKnowledge"]  # MANAGE_USERS/PHASES, BROWSE
    incident = f"/mcp/resources/incidents/{data['incidentIds'][0]}"
    evaluations = f"/qa/user/{data['evaluatedUserId']}/evaluations"
    assert get(stack, incident, read_only).status_code == 200
    assert get(stack, evaluations, read_only).status_code == 200
    denied = get(stack, "/user", read_only)
    assert denied.status_code == 403
    assert denied.json() == {
        "info": "Access denied — Manage Users permission required",
        "reason": "FORBIDDEN",
    }
    assert get(stack, evaluations, no_knowledge).json()["info"] == (
        "Access denied — View QA permission required"
    )
    assert get(stack, "/user", no_knowledge).status_code == 200


@pytest.mark.spec("endpoints-path-ids-are-integers", "errors-error-info")
def test_bad_ids_and_parameters_are_400_error_info(stack: dict[str, Any]) -> None:
    answer = get(stack, "/mcp/resources/events/EV-1", admin(stack))
    assert answer.status_code == 400 and "'eventId'" in answer.json()["info"]
    answer = get(stack, "/user", admin(stack), sort="password,asc")
    assert answer.status_code == 400 and "'sort'" in answer.json()["info"]
