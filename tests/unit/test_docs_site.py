"""Facts the documentation states for people and the code states for the machine agree."""

import re
from pathlib import Path

from psap.webhooks.retry_policy import JITTER, MAX_ATTEMPTS, RETRY_WAITS_SECONDS
from tools.admin import build_parser
from tools.docs_site import _commands, cli_reference, on_page_markdown

ROOT = Path(__file__).resolve().parents[2]
_UNIT_SECONDS = {"s": 1, "min": 60, "h": 3600}


def _waits_in_seconds(listed: str) -> list[int]:
    waits = []
    for wait in listed.split(","):
        amount, _, unit = wait.strip().partition(" ")
        waits.append(int(amount) * _UNIT_SECONDS[unit] if unit else int(amount))
    return waits


def test_the_retry_schedule_page_states_the_schedule_the_dispatcher_runs() -> None:
    # Given the one page that states the schedule (design.md and the decisions link to it)
    page = (ROOT / "docs" / "webhooks.md").read_text(encoding="utf-8")
    retries = page[page.index("## Retries") :]
    # When its sentence is read
    stated = re.search(
        r"(\w+) attempts over about 24 hours \(([^)]*?), each wait \+-(\d+) ?%", retries
    )
    assert stated is not None, "docs/webhooks.md no longer states the schedule in its sentence"
    attempts, listed, jitter = stated.groups()
    # Then it is the schedule of psap.webhooks.retry_policy
    assert {"Twelve": 12}.get(attempts) == MAX_ATTEMPTS
    assert _waits_in_seconds(listed) == [0, *RETRY_WAITS_SECONDS]
    assert int(jitter) / 100 == JITTER


def test_the_site_shows_each_shell_fence_as_a_titled_block() -> None:
    # Given the fences tests/support/readme_blocks.py reads, which Markdown's fence parser refuses
    markdown = (
        "```bash run\ntrue\n```\n```bash run allow-http-errors\ntrue\n```\n"
        "```sh deployed\nsam deploy\n```\n```sh not-run: an external client\nclaude\n```\n"
        "```json\n{}\n```\n"
    )
    # When the site's hook renders the page
    shown = on_page_markdown(markdown, page=None, config=None, files=None)  # type: ignore[arg-type]
    # Then each is a plain fence whose title says where it runs; other fences are untouched
    assert [line for line in shown.splitlines() if line.startswith("```") and line != "```"] == [
        '```bash title="runs against the local stack (tested)"',
        '```bash title="runs against the local stack (tested)"',
        '```sh title="for a deployed stack"',
        '```sh title="not run: an external client"',
        "```json",
    ]


def test_the_cli_reference_has_every_admin_command() -> None:
    # Given the admin CLI's parser
    commands = {" ".join(command) for command, _ in _commands(build_parser(), ["psap-admin"])}
    # When the reference page is generated
    page = cli_reference()
    # Then every command, subcommands included, has its section with its usage
    assert {"psap-admin connector rotate-secret", "psap-admin tenant limits set"} <= commands
    for command in commands:
        assert f"`{command}`\n\n```text\nusage: {command}" in page, command
    for script in ("psap-local", "psap-local-env", "psap-demo-data"):
        assert f"`{script}`\n\n```text\nusage: {script}" in page, script
