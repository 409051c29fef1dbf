"""The admin CLI against moto tables: tenants, credentials, and its error behaviour."""

from typing import Any

import pytest

from psap.config import auth_table, knowledge_table
from tools.admin import main


def run(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    tables = ["--auth-table", auth_table(), "--knowledge-table", knowledge_table()]
    code = main([*tables, *arguments])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_issue_list_and_revoke_a_credential(aws: None, capsys: Any) -> None:
    # Given a tenant
    code, out, _ = run(capsys, "tenant", "create", "--name", "Riverside County 911")
    assert (code, out.strip()) == (0, "created tenant 1 (Riverside County 911)")
    # When a credential is issued, the token is printed once
    code, out, _ = run(
        capsys,
        "credential",
        "issue",
        "--tenant",
        "1",
        "--kind",
        "partner",
        "--permissions",
        "view_knowledge,MANAGE_KNOWLEDGE",
        "--label",
        "sync job",
        "--expires-in-days",
        "30",
    )
    assert code == 0
    token = out.strip().splitlines()[-1]
    assert token.startswith("psap_partner_")
    credential_id = out.split()[1]
    # Then listing shows it without the token, and revoking marks it revoked
    code, out, _ = run(capsys, "credential", "list", "--tenant", "1")
    assert code == 0 and credential_id in out and "active" in out
    assert "MANAGE_KNOWLEDGE,VIEW_KNOWLEDGE" in out
    assert token not in out
    code, out, _ = run(
        capsys, "credential", "revoke", "--tenant", "1", "--credential", credential_id
    )
    assert code == 0 and "revoked" in out
    _, out, _ = run(capsys, "credential", "list", "--tenant", "1")
    assert "revoked" in out


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            (
                "credential",
                "issue",
                "--tenant",
                "1",
                "--kind",
                "partner",
                "--permissions",
                "VIEW_EVERYTHING",
                "--label",
                "x",
            ),
            "unknown permission(s) VIEW_EVERYTHING",
        ),
        (
            (
                "credential",
                "issue",
                "--tenant",
                "99",
                "--kind",
                "partner",
                "--label",
                "x",
                "--permissions",
                "ADMIN",
                "--expires-in-days",
                "30",
            ),
            "Tenant 99 does not exist",
        ),
        (("credential", "list", "--tenant", "99"), "Tenant 99 does not exist"),
        (
            ("credential", "revoke", "--tenant", "1", "--credential", "cred-nope"),
            "Credential cred-nope does not exist",
        ),
        (
            (
                "credential",
                "issue",
                "--tenant",
                "1",
                "--kind",
                "cad",
                "--permissions",
                "ADMIN",
                "--label",
                "x",
            ),
            "a cad credential carries no data-interface permissions",
        ),
        (
            (
                "credential",
                "issue",
                "--tenant",
                "1",
                "--kind",
                "partner",
                "--label",
                "x",
                "--expires-in-days",
                "0",
            ),
            "0 is refused: every credential expires, after a whole number of days from 1 to 365",
        ),
        (("tenant", "create", "--name", "  "), "A tenant needs a non-empty name"),
        (
            (
                "knowledge",
                "add",
                "--tenant",
                "1",
                "--name",
                "x",
                "--provider",
                "p",
                "--type",
                "FLOWCHART",
            ),
            "'FLOWCHART' is not a valid KnowledgeType",
        ),
    ],
)
def test_bad_arguments_give_a_clear_message_and_exit_2_without_traceback(
    aws: None, capsys: Any, arguments: tuple[str, ...], message: str
) -> None:
    run(capsys, "tenant", "create", "--name", "Riverside County 911")
    code, out, err = run(capsys, *arguments)
    assert code == 2
    assert message in err
    assert "Traceback" not in err + out


def test_usage_errors_exit_2_with_usage(aws: None, capsys: Any) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["credential", "issue", "--tenant", "one"])
    assert exit_.value.code == 2
    assert "invalid int value" in capsys.readouterr().err


def test_no_target_is_a_clear_message(tmp_path: Any, capsys: Any) -> None:
    code = main(["--state-file", str(tmp_path / "missing.json"), "tenant", "list"])
    assert code == 2
    assert "start the local stack" in capsys.readouterr().err


def test_knowledge_add_loads_an_entry_the_list_shows(aws: None, capsys: Any) -> None:
    from psap.knowledge.store import list_entries
    from psap.paging import PageRequest

    run(capsys, "tenant", "create", "--name", "Riverside County 911")
    code, out, _ = run(
        capsys,
        "knowledge",
        "add",
        "--tenant",
        "1",
        "--name",
        "Chest Pain",
        "--provider",
        "NENA",
        "--type",
        "GUIDE_CARD",
        "--external-id",
        "gc-chest-pain",
    )
    assert code == 0 and "created knowledge entry" in out
    items, total = list_entries(1, None, None, page=PageRequest(0, 50))
    assert total == 1 and items[0].external_id == "gc-chest-pain"
