"""`python -m local.stack` command line: refusals that must be clear and immediate."""

import fcntl
import signal
import socket
from pathlib import Path

import pytest

from local import stack
from local.stack import main

CONCURRENCY_TEMPLATE = Path(__file__).parent / "fixtures" / "concurrency.yaml"


@pytest.fixture
def taken_port():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def test_a_taken_api_port_is_one_clear_line_and_exit_1(taken_port, tmp_path, capsys):
    handler_before = signal.getsignal(signal.SIGINT)
    code = main(
        ["--port", str(taken_port), "--state-file", str(tmp_path / "stack.json"), "--no-demo"]
    )
    output = capsys.readouterr()
    assert code == 1
    assert f"port {taken_port} on 127.0.0.1 is already in use" in output.out
    assert "--port <port>" in output.out
    assert "Traceback" not in output.out + output.err
    assert not (tmp_path / "stack.json").exists()
    assert signal.getsignal(signal.SIGINT) is handler_before


def test_a_taken_aws_port_names_the_aws_port_option(taken_port, tmp_path, capsys):
    # The caller's own handler: Python's default, or SIG_IGN under a background shell job.
    handler_before = signal.getsignal(signal.SIGINT)
    code = main(
        [
            "--port",
            "0",
            "--aws-port",
            str(taken_port),
            "--state-file",
            str(tmp_path / "s.json"),
            "--no-demo",
        ]
    )
    output = capsys.readouterr()
    assert code == 1
    assert f"port {taken_port}" in output.out
    assert "--aws-port <port>" in output.out
    # And the caller's Ctrl-C handling is back once main() has returned
    assert signal.getsignal(signal.SIGINT) is handler_before


# Every interface, a LAN address and a name: anything that is not loopback.
@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com"])  # noqa: S104
def test_non_loopback_hosts_are_refused(host, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--host", host])
    assert exit_info.value.code == 2
    assert "--host" in capsys.readouterr().err


def test_a_running_stacks_state_file_and_log_are_left_alone(tmp_path, capsys):
    # Given a stack running with this state file (it holds the lock beside the file)
    state_file = tmp_path / "stack.json"
    state_file.write_text('{"baseUrl": "the first stack"}\n')
    log_file = tmp_path / "stack.log"
    log_file.write_text("the first stack's log\n")
    with (tmp_path / "stack.json.lock").open("a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        lock.write("4242\n")
        lock.flush()
        # When a second stack starts with it (another port, so the port is no obstacle)
        code = main(["--port", "0", "--state-file", str(state_file), "--no-demo"])
    # Then it refuses, names the running one, and touches neither file
    output = capsys.readouterr()
    assert code == 1
    assert "already running" in output.out and "4242" in output.out
    assert state_file.read_text() == '{"baseUrl": "the first stack"}\n'
    assert log_file.read_text() == "the first stack's log\n"


@pytest.mark.parametrize(
    "option",
    [
        ["--account-concurrency", "0"],
        ["--account-concurrency", "lots"],
        ["--idle-worker-seconds", "0"],
        ["--idle-worker-seconds", "-5"],
    ],
)
def test_concurrency_options_must_be_positive(option, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(option)
    assert exit_info.value.code == 2
    assert option[0] in capsys.readouterr().err


def test_reservations_the_account_cannot_grant_are_one_clear_line_and_exit_1(tmp_path, capsys):
    # Given a template reserving 3 executions and an account of 3 (nothing left unreserved)
    code = main(
        [
            *("--port", "0", "--state-file", str(tmp_path / "s.json"), "--no-demo"),
            *("--template", str(CONCURRENCY_TEMPLATE), "--account-concurrency", "3"),
            *("--concurrency-scale", "1"),
        ]
    )
    output = capsys.readouterr()
    assert code == 1
    assert "reserves 3 concurrent executions" in output.out
    assert "--account-concurrency" in output.out
    assert "Traceback" not in output.out + output.err


def test_the_shell_variables_name_the_mcp_endpoint():
    # Given the state file of a stack on a port of its own
    state = {"baseUrl": "http://127.0.0.1:3005", "tenants": []}
    # When psap-local-env's variables are made from it
    variables = stack.shell_variables(state)
    # Then the MCP endpoint an assistant connects to is among them
    assert variables["MCP_URL"] == "http://127.0.0.1:3005/mcp"
