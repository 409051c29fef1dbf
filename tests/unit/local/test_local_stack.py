"""`python -m local.stack` command line: refusals that must be clear and immediate."""

import signal
import socket

import pytest

from local.stack import main


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
