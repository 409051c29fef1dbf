"""The admin CLI's refusals and hints say what to type next, and what they say runs."""

import shlex
from typing import Any

import pytest

from psap.config import auth_table, knowledge_table
from tools.admin import main


def run(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    tables = ["--auth-table", auth_table(), "--knowledge-table", knowledge_table()]
    code = main([*tables, *arguments])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(autouse=True)
def cad_bearer(monkeypatch: pytest.MonkeyPatch) -> None:
    # The bearer credential the CAD issued is read from a variable, never from argv.
    monkeypatch.setenv("CAD_TOKEN", "bearer-the-cad-issued")


def _create_connector(
    capsys: pytest.CaptureFixture[str], tenant: str, url: str
) -> tuple[int, str, str]:
    """`connector create` of a CAD connector, the bearer the CAD issued read from CAD_TOKEN."""
    return run(
        capsys,
        "connector", "create", "--tenant", tenant, "--name", "CAD", "--url", url,
        "--bearer-env", "CAD_TOKEN",
    )  # fmt: skip


def _tenant(capsys: pytest.CaptureFixture[str]) -> str:
    code, out, _ = run(capsys, "tenant", "create", "--name", "Riverside County 911")
    assert code == 0
    return out.split()[2]


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/hooks", "http://cad.example.org/hooks"])
def test_an_http_connector_url_is_refused_naming_the_local_dev_option(
    aws: None, capsys: Any, url: str
) -> None:
    tenant = _tenant(capsys)
    code, out, err = _create_connector(capsys, tenant, url)
    assert code == 2
    assert "must use https" in err
    assert "--local-dev" in err
    assert "Traceback" not in out + err


def test_an_https_refusal_does_not_suggest_local_dev(aws: None, capsys: Any) -> None:
    # --local-dev would not help a private address over https: no misleading hint.
    tenant = _tenant(capsys)
    code, _, err = _create_connector(capsys, tenant, "https://10.0.0.8/hooks")
    assert code == 2
    assert "--local-dev" not in err


def test_the_connector_test_hint_runs_as_printed(cad_aws: None, capsys: Any) -> None:
    # Given a connector
    tenant = _tenant(capsys)
    code, out, _ = _create_connector(capsys, tenant, "https://cad.example.org/hooks")
    assert code == 0
    connector = next(word for word in out.replace('"', " ").split() if word.startswith("con-"))
    # When a test delivery is queued, the output says how to look at it
    code, out, _ = run(capsys, "connector", "test", "--tenant", tenant, "--connector", connector)
    assert code == 0
    hint = out.split("see it with: ", 1)[1].strip()
    words = shlex.split(hint)
    assert words[0] == "psap-admin"
    assert "--tenant" in words
    # Then that command, as printed, shows the delivery
    code, out, err = run(capsys, *words[1:])
    assert code == 0, err
    assert '"eventType": "connector.test"' in out
