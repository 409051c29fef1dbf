"""The admin `import` command (tools.tenant_import): JSON Lines validated by the API's
models, per-record errors with line numbers, idempotent on ids, counters kept exact."""

import io
import json
from pathlib import Path
from typing import Any

import pytest

from local.demo_tenant_data import generate, write_jsonl
from psap.auth import store as tenants
from psap.config import auth_table, knowledge_table, tenant_data_table
from psap.errors import NotFound
from tests.support.spec_examples import EVALUATION, USER
from tests.support.tenant_data import TenantDataApi
from tools import admin
from tools.tenant_import import import_files

pytestmark = pytest.mark.harness(api=TenantDataApi)


@pytest.fixture
def api(api: TenantDataApi) -> TenantDataApi:
    """The tenant-data API, on a tenant the admin tool knows (the import names it)."""
    api.tenant = tenants.create_tenant("Import test").tenant_id
    return api


def lines(path: Path, records: list[Any]) -> Path:
    path.write_text(
        "".join(
            (record if isinstance(record, str) else json.dumps(record)) + "\n" for record in records
        ),
        encoding="utf-8",
    )
    return path


def test_a_whole_tenant_imports_and_reads_back_through_the_api(
    api: TenantDataApi, tmp_path: Path
) -> None:
    # Given the demo generator's files for a small tenant
    dataset = generate(9, api.tenant, 500_000, user_count=6, evaluation_count=12, incident_count=3)
    files = write_jsonl(dataset, tmp_path)
    # When they are imported
    reports = import_files(files, api.tenant)
    # Then every record is created, and the API sees them with exact totals
    assert {report.kind: (report.created, report.updated, report.errors) for report in reports} == {
        "users": (6, 0, []),
        "enrollments": (len(dataset.enrollments), 0, []),
        "evaluations": (12, 0, []),
        "incidents": (3, 0, []),
        "events": (3, 0, []),
    }
    assert api.users()[1]["totalElements"] == 6
    evaluated = dataset.evaluations[0].user_id
    listed = sum(
        1 for item in dataset.evaluations if item.user_id == evaluated and not item.deleted
    )
    assert api.evaluations(evaluated, size="50")[1]["totalElements"] == listed
    trainee = dataset.enrollments[0].user
    assert trainee is not None
    assert api.enrollments(trainee.id)[0] == 200
    assert api.incident(dataset.incidents[0].id or 0)[0] == 200
    assert api.event(dataset.events[0].id or 0)[1]["incident"]["id"] == dataset.incidents[0].id


def test_reimport_updates_and_never_duplicates(api: TenantDataApi, tmp_path: Path) -> None:
    dataset = generate(9, api.tenant, 500_000, user_count=4, evaluation_count=6, incident_count=1)
    files = write_jsonl(dataset, tmp_path)
    import_files(files, api.tenant)
    before = api.users()[1]["totalElements"], api.evaluations(dataset.evaluations[0].user_id)[1]
    again = import_files(files, api.tenant)
    assert all(report.created == 0 and not report.errors for report in again)
    assert sum(report.updated for report in again) == sum(
        len(r) for r in dataset.records().values()
    )
    after = api.users()[1]["totalElements"], api.evaluations(dataset.evaluations[0].user_id)[1]
    assert before == after


def test_bad_records_are_reported_by_line_and_the_others_are_imported(
    api: TenantDataApi, tmp_path: Path
) -> None:
    users = lines(
        tmp_path / "users.jsonl",
        [USER, "{not json", {"id": "seven"}, "", {**USER, "id": 7003, "lastLoginAt": "soon"}],
    )
    evaluations = lines(
        tmp_path / "evaluations.jsonl",
        [
            EVALUATION,
            {**EVALUATION, "id": 3102, "status": "MAYBE"},
            {**EVALUATION, "id": 3103, "userId": 4242},
            {**EVALUATION, "id": 3104, "createdAt": None},
        ],
    )
    reports = import_files([evaluations, users], api.tenant)  # users go first anyway
    users_report, evaluations_report = reports
    assert (users_report.kind, users_report.created) == ("users", 1)
    assert [error.split(": ", 1)[0] for error in users_report.errors] == [
        f"{users}:2",
        f"{users}:3",
        f"{users}:5",
    ]
    assert "not JSON" in users_report.errors[0]
    assert "id:" in users_report.errors[1]
    assert "lastLoginAt:" in users_report.errors[2]
    assert evaluations_report.created == 2  # the unknown user's evaluation is stored, unlisted
    assert [error.split(": ", 1)[0] for error in evaluations_report.errors] == [
        f"{evaluations}:2",
        f"{evaluations}:4",
    ]
    assert "status:" in evaluations_report.errors[0]
    assert "createdAt" in evaluations_report.errors[1]
    assert api.evaluations(USER["id"])[1]["totalElements"] == 1


def test_an_enrollment_of_an_unknown_user_is_a_line_error(
    api: TenantDataApi, tmp_path: Path
) -> None:
    dataset = generate(9, api.tenant, 500_000, user_count=6, evaluation_count=0, incident_count=0)
    path = lines(
        tmp_path / "enrollments.jsonl",
        [dataset.enrollments[0].model_dump(mode="json", by_alias=True)],
    )
    (report,) = import_files([path], api.tenant)
    assert report.created == 0
    assert report.errors == [f"{path}:1: " + report.errors[0].split(": ", 1)[1]]
    assert "import users first" in report.errors[0]


def test_the_kind_comes_from_the_file_name_or_kind(api: TenantDataApi, tmp_path: Path) -> None:
    odd = lines(tmp_path / "export.jsonl", [USER])
    with pytest.raises(Exception, match="cannot tell"):
        import_files([odd], api.tenant)
    (report,) = import_files([odd], api.tenant, kind="users")
    assert report.created == 1


def test_an_unknown_tenant_is_refused_before_any_write(api: TenantDataApi, tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        import_files([lines(tmp_path / "users.jsonl", [USER])], 999_999)


def test_the_admin_cli_imports_prints_a_summary_and_fails_on_bad_records(
    api: TenantDataApi,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    good = lines(tmp_path / "users.jsonl", [USER, {**USER, "id": 7009}])
    target = ["--auth-table", auth_table(), "--knowledge-table", knowledge_table()]
    table = ["--tenant-data-table", tenant_data_table(), "--workers", "1"]
    assert admin.main([*target, "import", "--tenant", str(api.tenant), *table, str(good)]) == 0
    output = capsys.readouterr()
    assert f"{good}: users: 2 created, 0 updated, 0 failed" in output.out
    assert "users.jsonl (users) [" in output.err  # the progress bar
    bad = lines(tmp_path / "users-bad.jsonl", ["[]"])
    command = [*target, "import", "--tenant", str(api.tenant), *table, str(bad)]
    assert admin.main(command) == 2
    assert f"{bad}:1: " in capsys.readouterr().err


def test_progress_goes_to_a_pipe_as_a_line_per_tenth(api: TenantDataApi, tmp_path: Path) -> None:
    path = lines(tmp_path / "users.jsonl", [{**USER, "id": 8000 + n} for n in range(10)])
    stream = io.StringIO()
    import_files([path], api.tenant, progress=stream)
    printed = stream.getvalue().splitlines()
    assert len(printed) == 10
    assert printed[-1].startswith("users.jsonl (users) [##############################] 10/10")


def test_a_misspelled_field_or_forbidden_text_is_a_line_error_never_a_silent_drop(
    api: TenantDataApi, tmp_path: Path
) -> None:
    # Given users whose lines misspell a field (top level, nested), hold a NUL or a lone
    # surrogate, or nest beyond the JSON depth limit
    users = lines(
        tmp_path / "users.jsonl",
        [
            {**USER, "id": 7101, "lastname": "Smith"},
            {**USER, "id": 7102, "firstName": "Ann\u0000"},
            '{"id": 7103, "email": "a\\ud800@example.org"}',
            {**USER, "id": 7104, "extra": [[[[{"deep": 1}]]]]},
            "[" * 5000 + "]" * 5000,
            {**USER, "id": 7105},
        ],
    )
    # When imported
    (report,) = import_files([users], api.tenant)
    # Then each bad line is an error naming the field, and only the good line is stored
    assert report.created == 1
    assert [error.split(": ", 1)[1] for error in report.errors] == [
        "lastname: unknown field",
        "firstName: contains a control character (U+0000) at character 3",
        "email: contains a lone surrogate (U+D800) at character 1",
        "extra: unknown field",
        "not accepted JSON (nested deeper than 64 levels)",
    ]
    assert api.users()[1]["totalElements"] == 1
