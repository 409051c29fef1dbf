"""`psap-local invoke`: one function run locally with an event, as `sam local invoke` runs it.

These run without a stack: the functions that need no AWS, and every refusal (one line, a
non-zero exit, never a traceback). tests/e2e/test_sample_events.py invokes every sample
event against the running stack.
"""

import io
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from local.invoke import invoke_main
from local.stack import main

FIXTURE_TEMPLATE = Path(__file__).parent / "fixtures" / "template.yaml"


def _invoke(capsys, *arguments, stdin: str | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(["invoke", *arguments])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _invoke_echo(
    capsys: pytest.CaptureFixture[str], event: Path, tmp_path: Path, *arguments: str
) -> Any:
    """The fixture template's echo function invoked with the event file `event`."""
    return _invoke(
        capsys, "EchoFunction", "-e", str(event), *arguments,
        "--template", str(FIXTURE_TEMPLATE), "--state-file", str(tmp_path / "stack.json"),
    )  # fmt: skip


@pytest.fixture
def no_stack(tmp_path):
    return ["--state-file", str(tmp_path / "stack.json")]


def test_a_function_that_needs_no_aws_runs_without_a_stack(capsys, no_stack):
    # Given no running stack and the sample event of the method-not-allowed function
    # When it is invoked by its logical id
    code, out, err = _invoke(capsys, "MethodNotAllowedFunction", *no_stack)
    # Then its answer is the result on stdout, with a Lambda context (no 'NoneType' error)
    assert code == 0, err
    answer = json.loads(out)
    assert answer["statusCode"] == 405
    assert "Allow" in answer["headers"]
    # And the run's report is on stderr, as SAM prints it
    assert "REPORT MethodNotAllowedFunction" in err


def test_the_event_can_come_from_stdin(capsys, monkeypatch, no_stack):
    event = json.dumps({"httpMethod": "PUT", "resource": "/api/v1/external/knowledge"})
    code, out, err = _invoke(
        capsys,
        "MethodNotAllowedFunction",
        "--event",
        "-",
        *no_stack,
        stdin=event,
        monkeypatch=monkeypatch,
    )
    assert code == 0, err
    assert json.loads(out)["statusCode"] == 405


def test_the_function_can_be_named_by_its_folder(capsys, tmp_path, no_stack):
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"httpMethod": "PUT", "resource": "/api/v1/external/user"}))
    code, out, err = _invoke(capsys, "method_not_allowed", "-e", str(event), *no_stack)
    assert code == 0, err
    assert json.loads(out)["statusCode"] == 405


def test_the_log_can_go_to_a_file(capsys, tmp_path):
    # Given the fixture template's echo function, which writes to stdout and stderr
    log_file = tmp_path / "function.log"
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"return": {"fine": True}}))
    # When it is invoked with --log-file
    code, out, err = _invoke_echo(capsys, event, tmp_path, "--log-file", str(log_file))
    # Then stdout holds the result alone and the function's lines are in the file
    assert code == 0, err
    assert json.loads(out) == {"fine": True}
    assert "echo says hello on stdout" in log_file.read_text()
    assert "echo says hello" not in err


def test_a_failing_function_exits_non_zero_with_its_error(capsys, tmp_path):
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"raise": "the probe was told to fail"}))
    code, out, err = _invoke_echo(capsys, event, tmp_path)
    assert code == 1
    assert json.loads(out) == {
        "errorType": "ValueError",
        "errorMessage": "the probe was told to fail",
    }
    assert "ValueError: the probe was told to fail" in err


def test_env_vars_override_only_what_the_template_declares(capsys, tmp_path):
    # Given SAM's env-vars file with a Parameters section and the function's own section
    env_vars = tmp_path / "env.json"
    env_vars.write_text(
        json.dumps(
            {
                "Parameters": {"SHARED": "from-parameters", "NOT_DECLARED": "ignored"},
                "EchoFunction": {"OVERRIDDEN": "from-file"},
            }
        )
    )
    event = tmp_path / "event.json"
    event.write_text("{}")
    # When the echo function (which shows SHARED and OVERRIDDEN) is invoked with it
    code, out, err = _invoke_echo(capsys, event, tmp_path, "--env-vars", str(env_vars))
    # Then the function's own section wins over Parameters, as in SAM
    assert code == 0, err
    environment = json.loads(out)["environ"]
    assert environment["SHARED"] == "from-parameters"
    assert environment["OVERRIDDEN"] == "from-file"
    # And the memory size is the template's, in the context and the environment
    assert json.loads(out)["context"]["memory_limit_in_mb"] == 384


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_an_unknown_function_is_one_line_naming_it(capsys, no_stack):
    code, out, err = _invoke(capsys, "NoSuchFunction", *no_stack)
    assert code == 2
    assert out == ""
    line = _one_line(err)
    assert "NoSuchFunction" in line
    assert "--list" in line


def test_a_missing_event_file_is_one_line_naming_it(capsys, tmp_path, no_stack):
    missing = tmp_path / "nowhere.json"
    code, _, err = _invoke(capsys, "MethodNotAllowedFunction", "-e", str(missing), *no_stack)
    assert code == 2
    assert str(missing) in _one_line(err)


def test_a_malformed_event_file_is_one_line_naming_it(capsys, tmp_path, no_stack):
    broken = tmp_path / "broken.json"
    broken.write_text('{"httpMethod": "GET",')
    code, _, err = _invoke(capsys, "MethodNotAllowedFunction", "-e", str(broken), *no_stack)
    assert code == 2
    line = _one_line(err)
    assert str(broken) in line
    assert "not JSON" in line


def test_a_malformed_env_vars_file_is_one_line_naming_it(capsys, tmp_path, no_stack):
    env_vars = tmp_path / "env.json"
    env_vars.write_text(json.dumps({"Parameters": ["not", "an", "object"]}))
    code, _, err = _invoke(
        capsys, "MethodNotAllowedFunction", "--env-vars", str(env_vars), *no_stack
    )
    assert code == 2
    assert str(env_vars) in _one_line(err)


def test_a_function_that_needs_aws_without_a_stack_says_to_start_one(capsys, tmp_path):
    # Given no running stack, and an event without placeholders
    event = tmp_path / "event.json"
    event.write_text("{}")
    # When a function whose role reads DynamoDB is invoked
    code, out, err = _invoke(
        capsys,
        "KnowledgeListFunction",
        "-e",
        str(event),
        "--state-file",
        str(tmp_path / "stack.json"),
    )
    # Then one line says so and how to start a stack
    assert code == 2
    assert out == ""
    line = _one_line(err)
    assert "KnowledgeListFunction needs the embedded AWS" in line
    assert "make run" in line


def test_a_sample_event_with_placeholders_needs_a_stack(capsys, no_stack):
    code, _, err = _invoke(capsys, "AdminConnectorGetFunction", *no_stack)
    assert code == 2
    line = _one_line(err)
    assert "events/admin_connector_get.json uses ${CONNECTOR}" in line
    assert "make run" in line


def test_a_state_file_of_a_stack_that_is_gone_says_it_is_not_running(capsys, tmp_path):
    # Given a state file left by a stack that was killed (its port answers no more)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    state_file = tmp_path / "stack.json"
    state_file.write_text(json.dumps({"awsEndpointUrl": f"http://127.0.0.1:{port}"}))
    # When a function is invoked
    code, _, err = _invoke(capsys, "KnowledgeListFunction", "--state-file", str(state_file))
    # Then one line says the stack is not running
    assert code == 2
    line = _one_line(err)
    assert "not running" in line
    assert str(state_file) in line


def test_list_names_every_function_with_its_sample_event(capsys, no_stack):
    code, out, err = _invoke(capsys, "--list", *no_stack)
    assert code == 0, err
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()}
    assert rows["KnowledgeGetFunction"] == "events/knowledge_get.json"
    assert rows["MethodNotAllowedFunction"] == "events/method_not_allowed.json"
    assert "(no" not in out


def test_print_event_fills_unique_and_invokes_nothing(capsys, tmp_path, no_stack):
    # Given an event with a ${UNIQUE} placeholder, which needs no stack
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"httpMethod": "PUT", "externalId": "gc-${UNIQUE}"}))
    # When it is printed twice
    first = _invoke(
        capsys, "MethodNotAllowedFunction", "-e", str(event), "--print-event", *no_stack
    )
    second = _invoke(
        capsys, "MethodNotAllowedFunction", "-e", str(event), "--print-event", *no_stack
    )
    # Then each has a fresh value and no function ran (no REPORT line)
    assert first[0] == second[0] == 0
    ids = [json.loads(out)["externalId"] for _, out, _ in (first, second)]
    assert ids[0].startswith("gc-") and ids[0] != ids[1] and "${" not in ids[0]
    assert "REPORT" not in first[2]


class _ClosedPipe(io.StringIO):
    """A stdout whose reader has gone (`psap-local invoke --list | head -1`)."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_list_read_by_a_reader_that_stops_early_ends_quietly(tmp_path: Path) -> None:
    # When the listing's reader stops early
    errors = io.StringIO()
    code = invoke_main(["--list"], tmp_path / "stack.json", stdout=_ClosedPipe(), stderr=errors)
    # Then it ends with success and says nothing, as `ls | head` does
    assert (code, errors.getvalue()) == (0, "")
