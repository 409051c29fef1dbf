"""MkDocs hooks: pages made from the code at build time, so the site cannot drift from it.

- `reference/openapi.json`: the committed OpenAPI document (functions/api_docs/openapi.json),
  which the API reference page renders with Swagger UI;
- `reference/cli.md`: every console script's `--help`, `psap-admin`'s subcommands included,
  taken from the same argparse parsers the commands run.

It also turns the fences of tests/support/readme_blocks.py (` ```bash run `,
` ```sh deployed `, ...) into plain fences with a title that says where the block runs:
Markdown's fence parser takes a language and attributes, not words.

Registered in mkdocs.yml (`hooks:`); `make docs` builds the site.
"""

import argparse
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from tools.admin import build_parser
from tools.openapi import DOCUMENT

# argparse wraps help at the terminal's width; the page is read in a browser.
HELP_COLUMNS = "100"
# Console scripts other than psap-admin, shown by running them (their parsers live in main()).
OTHER_SCRIPTS = ("psap-local", "psap-local-env", "psap-demo-data")


# A shell fence's words after the language, as tests/support/readme_blocks.py reads them.
_SHELL_FENCE = re.compile(
    r"^(?P<fence>```+)(?P<language>bash|sh|shell|console|zsh)[ \t]+(?P<words>\S.*)$", re.MULTILINE
)
_FENCE_TITLES = {
    "run": "runs against the local stack (tested)",
    "deployed": "for a deployed stack",
    "make": "make",
}


def on_page_markdown(markdown: str, *, page: Page, config: MkDocsConfig, files: Files) -> str:
    return _SHELL_FENCE.sub(_titled_fence, markdown)


def _titled_fence(match: re.Match[str]) -> str:
    words = match.group("words").split()
    title = _FENCE_TITLES.get(words[0])
    if title is None and words[0].startswith("not-run:"):
        title = "not run: " + " ".join(words)[len("not-run:") :].strip()
    title = (title or " ".join(words)).replace('"', "'")
    return f'{match.group("fence")}{match.group("language")} title="{title}"'


def on_files(files: Files, *, config: MkDocsConfig) -> Files:
    files.append(File.generated(config, "reference/openapi.json", abs_src_path=str(DOCUMENT)))
    files.append(File.generated(config, "reference/cli.md", content=cli_reference()))
    return files


def cli_reference() -> str:
    sections = [
        "# CLI reference\n",
        "The project's console scripts (`[project.scripts]` in `pyproject.toml`), installed in"
        " `.venv/bin` by `make run` or `make test`. This page is generated from their parsers"
        " when the site is built (`tools/docs_site.py`), so it is what `--help` prints.\n",
        "| Command | What |\n|---|---|\n"
        "| `psap-admin` | the admin CLI: tenants, credentials, knowledge, connectors, imports,"
        " catalog, audit |\n"
        "| `psap-local` | the local stack itself (what `make run` runs) |\n"
        "| `psap-local-env` | the running stack's facts as shell variables, for"
        ' `eval "$(psap-local-env)"` |\n'
        "| `psap-demo-data` | writes demo tenant data as JSON Lines files for"
        " `psap-admin import` |\n",
    ]
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    try:
        for command, parser in _commands(build_parser(), ["psap-admin"]):
            sections.append(_section(" ".join(command), parser.format_help()))
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous
    for script in OTHER_SCRIPTS:
        sections.append(_section(script, _script_help(script)))
    return "\n".join(sections)


def _commands(
    parser: argparse.ArgumentParser, command: list[str]
) -> Iterator[tuple[list[str], argparse.ArgumentParser]]:
    """The parser and its subcommands' parsers, depth first, in the order they were added."""
    yield command, parser
    for action in parser._actions:  # argparse keeps subparsers only here
        if isinstance(action, argparse._SubParsersAction):
            for name, subparser in action.choices.items():
                yield from _commands(subparser, [*command, name])


def _section(command: str, help_text: str) -> str:
    level = "#" * min(2 + command.count(" "), 4)
    return f"{level} `{command}`\n\n```text\n{help_text.rstrip()}\n```\n"


def _script_help(script: str) -> str:
    executable = Path(sys.executable).parent / script
    answer = subprocess.run(
        [str(executable), "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": HELP_COLUMNS},
        timeout=60,
    )
    return answer.stdout
