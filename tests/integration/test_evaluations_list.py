"""GET /api/v1/external/qa/user/{userId}/evaluations through its Lambda handler, on moto
tables built from template.yaml: the evaluation shape down to speaker segments and protocol
results, the page, sort and filters with totals from counters, large transcripts, 404s,
permissions and tenant isolation."""

import copy
import random
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from local.demo_tenant_data import evaluations_for, large_evaluation
from psap.qa.models import EvaluationStatus, QaEvaluation
from psap.qa.store import bulk_load_evaluations, put_evaluation
from psap.storage import documents
from psap.storage.dynamodb import dynamodb
from psap.storage.ordering import UpsertOutcome
from psap.users.models import User
from psap.users.store import put_user
from tests.support.spec_examples import EVALUATION, SPEC_FIELDS, USER, for_tenant
from tests.support.tenant_data import ItemsRead, TenantDataApi, strict_json, table

QA_USER = USER["id"]


pytestmark = pytest.mark.harness(api=TenantDataApi)


@pytest.fixture
def api(api: TenantDataApi) -> TenantDataApi:
    """The tenant-data API, its tenant with the QA user the evaluations name."""
    put_user(api.tenant, User.model_validate(USER))
    return api


def evaluation(evaluation_id: int, created: datetime, **changes: Any) -> QaEvaluation:
    record = copy.deepcopy(EVALUATION)
    record.update(id=evaluation_id, createdAt=created.isoformat(), **changes)
    return QaEvaluation.model_validate(record)


def brief(evaluation_id: int, created: datetime, **fields: Any) -> QaEvaluation:
    """An evaluation with only what listing looks at: quick to load in numbers."""
    return QaEvaluation.model_validate(
        {"id": evaluation_id, "userId": QA_USER, "createdAt": created.isoformat(), **fields}
    )


def day(n: int) -> datetime:
    return datetime(2026, 1, 1, 12, tzinfo=UTC) + timedelta(days=n)


def ids(body: dict[str, Any]) -> list[int]:
    return [item["id"] for item in body["content"]]


@pytest.mark.spec("resources-evaluation-fields")
def test_evaluation_shape_is_the_specs_field_for_field(api: TenantDataApi) -> None:
    # Given an evaluation with every field of the spec's tables set
    put_evaluation(api.tenant, QaEvaluation.model_validate(EVALUATION))
    # When the user's evaluations are read
    status, body = api.evaluations(QA_USER)
    # Then it reads back exactly (names, nesting, types; 5 and 5.0 differ)
    assert status == 200
    (listed,) = body["content"]
    assert strict_json(listed) == strict_json(for_tenant(EVALUATION, api.tenant))


@pytest.mark.spec(
    "resources-evaluation-fields", "resources-nested-enrollment-fields", "versioning-rule-3"
)
def test_key_sets_of_every_nested_shape(api: TenantDataApi) -> None:
    put_evaluation(api.tenant, QaEvaluation.model_validate(EVALUATION))
    (listed,) = api.evaluations(QA_USER)[1]["content"]
    fields = SPEC_FIELDS
    assert set(listed) == fields["evaluation"]
    assert set(listed["evaluationTemplate"]) == fields["evaluationTemplate"]
    assert set(listed["phaseEnrollments"][0]) == fields["enrollmentSummary"]
    assert set(listed["eventSummary"]["variableValues"][0]) == fields["variableValue"]
    (time,) = listed["eventTimes"]["times"]
    assert set(time) == fields["eventTime"]
    assert set(time["segment"]) == fields["contextSource"]
    (result,) = listed["results"]
    assert set(result) == fields["result"]
    criteria = result["evaluationTemplateCriteria"]
    assert set(criteria) == fields["criteria"]
    assert set(criteria["skillArea"]) == fields["skillArea"]
    assert set(criteria["smartTask"]) == fields["smartTask"]
    assert set(result["qaResponse"]) == fields["qaResponse"]
    (answer,) = result["qaResponse"]["answer"]
    assert set(answer) == fields["answerItem"]
    segment = answer["speakerSegment"]
    assert set(segment) == fields["speakerSegment"]
    assert set(segment["words"][0]) == fields["word"]
    assert set(segment["smoothedWords"][0]) == fields["smoothedWord"]
    (protocol,) = result["protocolResults"]
    assert set(protocol) == fields["protocolResult"]
    data = protocol["evaluationData"]
    assert set(data) == fields["evaluationData"]
    assert set(data["selection"]) == fields["selection"]
    assert set(data["selection"]["scoringBreakdown"]) == fields["selectionBreakdown"]
    for group in (data["questions"], data["allCallers"]):
        assert set(group) == fields["questionGroup"]
        assert set(group["questions"][0]) == fields["question"]
        assert set(group["questions"][0]["scoring"]) == fields["questionScoring"]
        assert set(group["scoringBreakdown"]) == fields["questionsBreakdown"]
        assert set(group["contextSources"][0]) == fields["contextSource"]
    assert set(data["preArrival"]) == fields["instructionGroup"]
    assert set(data["preArrival"]["instructions"][0]) == fields["instruction"]
    assert set(data["preArrival"]["instructions"][0]["scoring"]) == fields["instructionScoring"]
    assert set(data["preArrival"]["scoringBreakdown"]) == fields["instructionsBreakdown"]
    assert set(data["assist"]) == fields["assist"]


def test_absent_fields_are_null_and_arrays_empty(api: TenantDataApi) -> None:
    put_evaluation(
        api.tenant,
        QaEvaluation(id=1, user_id=QA_USER, created_at=day(0)),
    )
    (listed,) = api.evaluations(QA_USER)[1]["content"]
    assert set(listed) == SPEC_FIELDS["evaluation"]
    assert listed["status"] is None and listed["evaluationTemplate"] is None
    assert listed["results"] == [] and listed["phaseEnrollments"] == []


def test_default_order_is_newest_first_and_asc_reverses_it(api: TenantDataApi) -> None:
    for n in (3, 1, 2):
        put_evaluation(api.tenant, brief(n, day(n)))
    _, newest = api.evaluations(QA_USER)
    _, oldest = api.evaluations(QA_USER, sort="createdAt,asc")
    _, explicit = api.evaluations(QA_USER, sort="createdAt,desc")
    assert ids(newest) == ids(explicit) == [3, 2, 1]
    assert ids(oldest) == [1, 2, 3]
    assert newest["sort"] == {"empty": False, "sorted": True, "unsorted": False}


@pytest.mark.spec("resources-spring-page-fields")
def test_spring_page_arithmetic_and_size_cap(api: TenantDataApi) -> None:
    bulk_load_evaluations(api.tenant, [brief(n, day(n)) for n in range(1, 56)])
    _, capped = api.evaluations(QA_USER, size="500")
    assert (capped["size"], capped["numberOfElements"], capped["totalPages"]) == (50, 50, 2)
    _, last = api.evaluations(QA_USER, page="1", size="50")
    assert (last["numberOfElements"], last["first"], last["last"]) == (5, False, True)
    assert ids(last) == [5, 4, 3, 2, 1]
    _, past = api.evaluations(QA_USER, page="3", size="50")
    assert (past["content"], past["empty"], past["last"], past["totalElements"]) == (
        [],
        True,
        True,
        55,
    )
    _, default = api.evaluations(QA_USER)
    assert (default["size"], default["pageable"]["pageSize"], default["totalPages"]) == (20, 20, 3)


def test_deleted_evaluations_are_neither_listed_nor_counted(api: TenantDataApi) -> None:
    put_evaluation(api.tenant, evaluation(1, day(1)))
    put_evaluation(api.tenant, evaluation(2, day(2), deleted=True))
    put_evaluation(api.tenant, evaluation(3, day(3)))
    # A later re-import deletes one that was listed.
    put_evaluation(api.tenant, evaluation(3, day(3), deleted=True))
    _, body = api.evaluations(QA_USER)
    assert (ids(body), body["totalElements"]) == ([1], 1)


def test_filters_status_training_and_dates_with_totals(api: TenantDataApi) -> None:
    statuses = [EvaluationStatus.PENDING, EvaluationStatus.COMPLETED]
    records = [
        brief(n, day(n), status=statuses[n % 2].value, isTraining=n % 3 == 0) for n in range(1, 41)
    ]
    bulk_load_evaluations(api.tenant, records)

    def expected(keep: Callable[[QaEvaluation], bool]) -> list[int]:
        return sorted((item.id for item in records if keep(item)), reverse=True)

    cases: list[tuple[dict[str, str], Callable[[QaEvaluation], bool]]] = [
        ({"status": "PENDING"}, lambda e: e.status is EvaluationStatus.PENDING),
        ({"isTraining": "true"}, lambda e: bool(e.is_training)),
        ({"isTraining": "false"}, lambda e: not e.is_training),
        (
            {"status": "COMPLETED", "isTraining": "true"},
            lambda e: e.status is EvaluationStatus.COMPLETED and bool(e.is_training),
        ),
        ({"from": "2026-01-10"}, lambda e: e.created_at is not None and e.id >= 9),
        ({"to": "2026-01-10"}, lambda e: e.id <= 9),
        ({"from": "2026-01-31", "to": "2026-02-05"}, lambda e: 30 <= e.id <= 35),
        (
            {"from": "2026-01-05", "to": "2026-01-05", "status": "PENDING"},
            lambda e: e.id == 4 and e.status is EvaluationStatus.PENDING,
        ),
    ]
    for query, keep in cases:
        status, body = api.evaluations(QA_USER, query=query, size="50")
        assert status == 200, query
        assert ids(body) == expected(keep), query
        assert body["totalElements"] == len(expected(keep)), query


def test_date_range_totals_match_a_count_over_years_months_and_days(api: TenantDataApi) -> None:
    # Given evaluations spread over three years (the totals come from calendar counters)
    rng = random.Random(5)  # noqa: S311 - test data
    created = [
        datetime(2024, 1, 1, tzinfo=UTC) + timedelta(hours=rng.randrange(26_000)) for _ in range(60)
    ]
    records = [brief(n + 1, moment) for n, moment in enumerate(created)]
    bulk_load_evaluations(api.tenant, records)
    for first, last in [
        (date(2024, 1, 1), date(2026, 12, 31)),
        (date(2024, 2, 17), date(2025, 11, 3)),
        (date(2024, 3, 1), date(2024, 3, 31)),
        (date(2025, 6, 30), date(2025, 7, 1)),
        (date(2023, 1, 1), date(2024, 1, 31)),
    ]:
        wanted = sum(1 for moment in created if first <= moment.date() <= last)
        _, body = api.evaluations(QA_USER, query={"from": str(first), "to": str(last)}, size="1")
        assert body["totalElements"] == wanted, (first, last)


def test_reimport_that_moves_an_evaluation_keeps_lists_and_totals_exact(
    api: TenantDataApi,
) -> None:
    put_evaluation(api.tenant, evaluation(1, day(1), status="PENDING"))
    put_evaluation(api.tenant, evaluation(2, day(2), status="PENDING"))
    # When evaluation 1 is re-imported completed and a month later
    outcome = put_evaluation(api.tenant, evaluation(1, day(40), status="COMPLETED"))
    assert outcome is UpsertOutcome.UPDATED
    assert ids(api.evaluations(QA_USER)[1]) == [1, 2]
    _, pending = api.evaluations(QA_USER, status="PENDING")
    assert (ids(pending), pending["totalElements"]) == ([2], 1)
    _, january = api.evaluations(QA_USER, query={"from": "2026-01-01", "to": "2026-01-31"})
    assert (ids(january), january["totalElements"]) == ([2], 1)
    assert api.evaluations(QA_USER)[1]["totalElements"] == 2


def test_a_2000_segment_evaluation_fits_and_reads_back_whole(api: TenantDataApi) -> None:
    # Given an evaluation whose transcript has 2 000 speaker segments (about 3 MB of JSON)
    big = large_evaluation(77, QA_USER, 2000)
    assert len(big.results[0].qa_response.answer) == 2000  # type: ignore[union-attr]
    put_evaluation(api.tenant, big)
    # When it is read through the API
    status, body = api.evaluations(QA_USER)
    # Then every segment, word and smoothed word is there
    assert status == 200
    (listed,) = body["content"]
    assert strict_json(listed) == strict_json(big.model_dump(mode="json", by_alias=True))


def test_a_document_larger_than_one_item_is_split_and_joined(
    api: TenantDataApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given chunks of 60 kB, so the 2 000-segment evaluation spans several items
    monkeypatch.setattr(documents, "CHUNK_BYTES", 60_000)
    big = large_evaluation(78, QA_USER, 2000)
    put_evaluation(api.tenant, big)
    pk = f"T#{api.tenant}#EVAL#78"
    items = dynamodb().query(
        TableName=table(),
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": pk}},
    )["Items"]
    assert len(items) > 3
    assert all(len(item.get("part", item.get("doc", {})).get("B", b"")) <= 60_000 for item in items)
    (listed,) = api.evaluations(QA_USER)[1]["content"]
    assert strict_json(listed) == strict_json(big.model_dump(mode="json", by_alias=True))
    # When it is re-imported small, the extra chunks go in the same transaction
    put_evaluation(api.tenant, evaluation(78, day(0)))
    left = dynamodb().query(
        TableName=table(),
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": pk}},
    )["Items"]
    assert [item["sk"]["S"] for item in left] == ["EVAL"]
    (small,) = api.evaluations(QA_USER)[1]["content"]
    assert small["results"][0]["id"] == EVALUATION["results"][0]["id"]


@pytest.mark.spec("errors-error-info", "endpoints-path-ids-are-integers")
def test_bad_parameters_are_400_error_info_naming_the_parameter(api: TenantDataApi) -> None:
    for query, parameter in [
        ({"status": "MAYBE"}, "status"),
        ({"from": "2026-13-01"}, "from"),
        ({"to": "yesterday"}, "to"),
        ({"from": "2026-02-01", "to": "2026-01-01"}, "from"),
        ({"sort": "score,desc"}, "sort"),
        ({"sort": "createdAt,upward"}, "sort"),
        ({"isTraining": "sometimes"}, "isTraining"),
        ({"page": "-2"}, "page"),
        ({"size": "0"}, "size"),
    ]:
        status, body = api.evaluations(QA_USER, query=query)
        assert status == 400, query
        assert set(body) == {"info", "reason"}
        assert f"'{parameter}'" in body["info"], body
    status, body = api.evaluations("seven")
    assert (status, "'userId'" in body["info"]) == (400, True)


def test_unknown_user_is_404_and_a_known_user_without_evaluations_is_an_empty_page(
    api: TenantDataApi,
) -> None:
    status, body = api.evaluations(31337)
    assert (status, body) == (404, {"info": "user 31337 not found", "reason": "NOT_FOUND"})
    status, body = api.evaluations(QA_USER)
    assert (status, body["totalElements"], body["content"]) == (200, 0, [])


@pytest.mark.spec("service-tenant-from-credential")
def test_tenant_isolation_another_tenants_user_is_404(api: TenantDataApi) -> None:
    put_evaluation(api.tenant, evaluation(1, day(1)))
    status, body = api.evaluations(QA_USER, tenant=api.other_tenant)
    assert (status, body["reason"]) == (404, "NOT_FOUND")


def test_permission_view_qa_is_required_with_the_naming_message(api: TenantDataApi) -> None:
    status, body = api.call(
        "evaluations_list",
        path={"userId": str(QA_USER)},
        permissions="MANAGE_USERS,MANAGE_PHASES,BROWSE_EVENTS",
    )
    assert status == 403
    assert body == {"info": "Access denied — View QA permission required", "reason": "FORBIDDEN"}


def test_put_and_bulk_load_store_the_same_items(api: TenantDataApi) -> None:
    def items(tenant: int) -> set[tuple[str, str]]:
        prefix = f"T#{tenant}#"
        return {
            (item["pk"]["S"].removeprefix(prefix), item["sk"]["S"])
            for item in dynamodb().scan(TableName=table())["Items"]
            if item["pk"]["S"].startswith(prefix + "EV")
        }

    sample = evaluation(5, day(5), status="PENDING", isTraining=True)
    put_evaluation(api.tenant, sample)
    bulk_load_evaluations(api.other_tenant, [sample])
    assert items(api.tenant) == items(api.other_tenant)
    assert len(items(api.tenant)) == 1 + 4 + 4 * 3  # evaluation, pointers, counter items


def test_a_page_reads_at_most_size_plus_two_items_whatever_the_users_total(
    api: TenantDataApi,
) -> None:
    few = list(evaluations_for(QA_USER, 20, 1000))
    bulk_load_evaluations(api.tenant, few)
    other_user = {**USER, "id": QA_USER + 1}
    put_user(api.tenant, User.model_validate(other_user))
    many = list(evaluations_for(QA_USER + 1, 120, 5000))
    bulk_load_evaluations(api.tenant, many)
    counts = []
    for user_id, page in ((QA_USER, "0"), (QA_USER + 1, "0"), (QA_USER + 1, "5")):
        reads = ItemsRead()
        try:
            status, body = api.evaluations(user_id, page=page, size="20")
        finally:
            reads.close()
        assert (status, body["numberOfElements"]) == (200, 20)
        counts.append(reads.batch_items + reads.get_items)
    # The user, the counter and 20 evaluations; pointers walked for page 5 are keys only.
    assert counts[0] == counts[1] == counts[2] <= 22
