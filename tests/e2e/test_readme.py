"""The README runs as written: every ```bash run block, in order, against the local stack.

The blocks run as a user pastes them at the repository root after `make run`: the installed
console scripts, no PYTHONPATH, the stack's facts from its state file (here the e2e stack's,
through PSAP_LOCAL_STATE_FILE, which every command reads). See tests/readme_blocks.py for the
rules, and the README's "Writing the README".
"""

import os
from pathlib import Path

import pytest

from tests.readme_blocks import ALLOW_HTTP_ERRORS, Block, run_blocks, runnable_blocks

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SETUP = 'source .venv/bin/activate\neval "$(psap-local-env)"\n'


def _user_environment(state_file: Path) -> dict[str, str]:
    """A user's shell: no PYTHONPATH, no activated virtual environment."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in {"PYTHONPATH", "VIRTUAL_ENV"}
    }
    venv_bin = str(ROOT / ".venv" / "bin")
    environment["PATH"] = os.pathsep.join(
        part for part in environment.get("PATH", "").split(os.pathsep) if part != venv_bin
    )
    environment["PSAP_LOCAL_STATE_FILE"] = str(state_file)
    return environment


# Every block of a README section, on a busy 2-core machine: minutes, not seconds.
@pytest.mark.timeout(1500)
def test_every_runnable_readme_block_runs_as_written(stack_state_file: Path) -> None:
    blocks = runnable_blocks(README.read_text(encoding="utf-8"))
    # The README's own topics are all covered (a block lost to a typo in its fence would
    # silently stop being tested).
    assert len(blocks) >= 15
    run = run_blocks(
        blocks, cwd=ROOT, environment=_user_environment(stack_state_file), timeout_seconds=1400
    )
    where = f"README line {run.failed_block.line}" if run.failed_block else "the README"
    assert run.ok, f"{where} does not run as written:\n{run.output[-8000:]}"


# ---------------------------------------------------------------- the runner itself


def _blocks(markdown: str) -> list[Block]:
    return runnable_blocks(markdown)


def test_a_failing_command_breaks_its_block_and_names_it(stack_state_file: Path) -> None:
    markdown = (
        '```bash run\nVALUE=1\n```\n\ntext\n\n```bash run\ntest "$VALUE" = 2\necho after\n```\n'
    )
    run = run_blocks(_blocks(markdown), cwd=ROOT, environment=_user_environment(stack_state_file))
    assert not run.ok
    assert run.failed_block is not None and run.failed_block.line == 7
    assert "after" not in run.output


def test_variables_carry_from_block_to_block(stack_state_file: Path) -> None:
    markdown = '```bash run\nVALUE=1\n```\n```bash run\ntest "$VALUE" = 1\n```\n'
    run = run_blocks(_blocks(markdown), cwd=ROOT, environment=_user_environment(stack_state_file))
    assert run.ok, run.output


def test_an_http_error_breaks_a_block_unless_it_allows_them(stack_state_file: Path) -> None:
    # No credential: the gateway answers 401.
    call = 'curl -s "$API/knowledge"\n'
    strict = f"```bash run\n{SETUP}{call}```\n"
    lenient = f"```bash run {ALLOW_HTTP_ERRORS}\n{SETUP}{call}```\n"
    environment = _user_environment(stack_state_file)
    refused = run_blocks(_blocks(strict), cwd=ROOT, environment=environment)
    assert not refused.ok
    assert "UNAUTHENTICATED" in refused.output
    allowed = run_blocks(_blocks(lenient), cwd=ROOT, environment=environment)
    assert allowed.ok, allowed.output


def test_a_command_that_needs_pythonpath_breaks_the_block(stack_state_file: Path) -> None:
    # What the README used to say: modules run without the installed scripts fail for a user.
    markdown = "```bash run\npython3 -c 'import psap'\n```\n"
    run = run_blocks(_blocks(markdown), cwd=ROOT, environment=_user_environment(stack_state_file))
    assert not run.ok


def test_other_fences_are_not_run() -> None:
    markdown = "```sh\nfalse\n```\n```bash\nfalse\n```\n```text\nfalse\n```\n"
    assert _blocks(markdown) == []


def test_an_unknown_block_option_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown block option"):
        _blocks("```bash run allow-http-error\ntrue\n```\n")
