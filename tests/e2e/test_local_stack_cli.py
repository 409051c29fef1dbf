"""The local stack's command line as a user meets it: a second `make run`, the console, the
shell variables. Runs the installed console scripts (.venv/bin), without PYTHONPATH."""

import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _without_pythonpath() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}


def _second_stack(state_file: Path, port: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "psap-local"), "--port", port, "--state-file", str(state_file), "--no-demo"],
        cwd=ROOT,
        env=_without_pythonpath(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _answers(stack: dict[str, Any]) -> int:
    with urllib.request.urlopen(f"{stack['baseUrl']}/api/v1/external/openapi.json") as answer:
        return int(answer.status)


def test_a_second_stack_on_the_same_port_leaves_the_first_ones_state_file_alone(
    stack: dict[str, Any], stack_state_file: Path
) -> None:
    # Given a running stack and its state file
    before = stack_state_file.read_bytes()
    port = stack["baseUrl"].rsplit(":", 1)[1]
    # When a second stack starts with the same state file and port (a second `make run`)
    second = _second_stack(stack_state_file, port)
    # Then it refuses in one clear line and the first stack's file and service are untouched
    assert second.returncode == 1, second.stdout + second.stderr
    assert "already running" in second.stdout
    assert "--state-file" in second.stdout
    assert "Traceback" not in second.stdout + second.stderr
    assert stack_state_file.read_bytes() == before
    assert _answers(stack) == 200


def test_a_second_stack_on_another_port_cannot_take_over_the_state_file(
    stack: dict[str, Any], stack_state_file: Path
) -> None:
    before = stack_state_file.read_bytes()
    second = _second_stack(stack_state_file, "0")
    assert second.returncode == 1, second.stdout + second.stderr
    assert "already running" in second.stdout
    assert stack_state_file.read_bytes() == before


def test_the_console_shows_credentials_and_curl_lines_alone(
    stack: dict[str, Any], stack_state_file: Path
) -> None:
    # The console a user copies from: no log line, JSON line or function output in between.
    console = (stack_state_file.parent / "console.log").read_text()
    lines = [line for line in console.splitlines() if line.strip()]
    tenant = stack["tenants"][0]
    assert lines[0].startswith("starting the local stack")
    assert f"tenant {tenant['id']}: {tenant['name']}" in lines
    assert any(tenant["credentials"]["admin"] in line and "curl" in line for line in lines)
    allowed = re.compile(
        r"^(starting the local stack|tenant \d+: |  \S+ +psap_|  curl -s |state written to"
        r"|request lines and function logs|ready on )"
    )
    assert [line for line in lines if not allowed.match(line)] == []


def test_function_logs_go_to_the_log_file(stack: dict[str, Any], stack_log: Any) -> None:
    # Start-up steps and the functions' output are in the log file, not on the console.
    log = stack_log()
    assert "embedded AWS listening on" in log
    assert "gateway listening on" in log


def test_the_shell_variables_name_the_running_stack(
    stack: dict[str, Any], stack_state_file: Path
) -> None:
    printed = subprocess.run(
        [str(BIN / "psap-local-env")],
        cwd=ROOT,
        env={**_without_pythonpath(), "PSAP_LOCAL_STATE_FILE": str(stack_state_file)},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    variables = dict(line.split("=", 1) for line in printed.splitlines())
    assert variables["API"] == f"{stack['baseUrl']}/api/v1/external"
    assert variables["TOKEN"] == stack["tenants"][0]["credentials"]["admin"]
    assert variables["CAD"] == stack["tenants"][0]["credentials"]["cad"]
    assert variables["TENANT"] == str(stack["tenants"][0]["id"])
    assert json.loads(stack_state_file.read_text())["baseUrl"] == variables["BASE_URL"]


def test_the_shell_variables_without_a_stack_say_how_to_start_one(tmp_path: Path) -> None:
    missing = tmp_path / "stack.json"
    answer = subprocess.run(
        [str(BIN / "psap-local-env"), "--state-file", str(missing)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env=_without_pythonpath(),
    )
    assert answer.returncode == 1
    assert answer.stdout == ""  # eval of nothing changes nothing
    assert "make run" in answer.stderr
