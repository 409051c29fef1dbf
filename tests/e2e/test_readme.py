"""The documentation runs as written: every ```bash run block of the README and of the docs
site's pages, page by page, in order, against the local stack.

The blocks run as a user pastes them at the repository root after `make run`: the installed
console scripts, no PYTHONPATH, the stack's facts from its state file (here the e2e stack's,
through PSAP_LOCAL_STATE_FILE, which every command reads). Each page runs in its own shell,
started as the quick start starts a terminal, so a reader can follow any one page. See
tests/support/readme_blocks.py for the rules, and docs/guides/developer.md ("Runnable blocks").
"""

import os
from pathlib import Path

import pytest

from tests.support.readme_blocks import ALLOW_HTTP_ERRORS, Block, run_blocks, runnable_blocks

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SETUP = 'source .venv/bin/activate\neval "$(psap-local-env)"\n'


def documentation_pages() -> list[Path]:
    """The README, CONTRIBUTING and every page of the docs site."""
    pages = [README, ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [page for page in pages if page.exists()]


def _page_name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def _page_blocks(page: Path) -> list[Block]:
    return runnable_blocks(page.read_text(encoding="utf-8"), _page_name(page))


RUNNABLE_PAGES = [page for page in documentation_pages() if _page_blocks(page)]


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


def test_every_shell_block_runs_or_says_why_not() -> None:
    # runnable_blocks refuses a shell fence that neither runs nor gives a reason.
    counts = {_page_name(page): len(_page_blocks(page)) for page in documentation_pages()}
    # The topics of the README and the guides are all covered (a block lost to a typo in its
    # fence would silently stop being tested).
    assert sum(counts.values()) >= 30, counts
    assert counts["README.md"] >= 2, counts


# Every block of a page, on a busy 2-core machine: minutes, not seconds.
@pytest.mark.timeout(1500)
@pytest.mark.parametrize("page", RUNNABLE_PAGES, ids=_page_name)
def test_every_runnable_block_of_a_page_runs_as_written(page: Path, stack_state_file: Path) -> None:
    # Given a terminal where the quick start ran
    start = Block(0, frozenset(), SETUP, _page_name(page))
    # When the page's blocks are pasted in order
    blocks = [start, *_page_blocks(page)]
    run = run_blocks(
        blocks, cwd=ROOT, environment=_user_environment(stack_state_file), timeout_seconds=1400
    )
    # Then every command answers as the page says
    where = run.failed_block.where if run.failed_block else _page_name(page)
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
    markdown = (
        "```sh deployed\nfalse\n```\n```bash make\nfalse\n```\n"
        "```sh not-run: an external client\nfalse\n```\n```text\nfalse\n```\n"
        "```json\nfalse\n```\n```mermaid\nflowchart LR\n```\n"
    )
    assert _blocks(markdown) == []


@pytest.mark.parametrize("fence", ["sh", "bash", "sh not-run:", "console local", "bash runs"])
def test_a_shell_block_that_neither_runs_nor_says_why_is_refused(fence: str) -> None:
    with pytest.raises(ValueError, match="line 3: a shell block is either"):
        _blocks(f'text\n\n```{fence}\ncurl -s "$API/knowledge"\n```\n')


def test_a_failing_block_is_named_by_its_page(stack_state_file: Path) -> None:
    blocks = runnable_blocks("\n```bash run\nfalse\n```\n", "docs/guides/partner.md")
    run = run_blocks(blocks, cwd=ROOT, environment=_user_environment(stack_state_file))
    assert run.failed_block is not None
    assert run.failed_block.where == "docs/guides/partner.md line 2"


def test_an_unknown_block_option_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown block option"):
        _blocks("```bash run allow-http-error\ntrue\n```\n")
