"""Runs a documentation page's runnable code blocks in order, in one bash session, as pasted.

A block is runnable when its fence's info string is `bash run` (words after `run` are
options). Blocks share one shell, so a variable set in one is there in the next, as in a
terminal. A block breaks when any command in it fails (`set -e`, `pipefail`), including an
HTTP error answered to curl: curl runs with `--fail-with-body` unless the block says
`allow-http-errors` (for examples that show a 401 on purpose). The run stops at the first
broken block and names it by its page and line.

Every other shell fence (bash, sh, shell, console) must say why it is not run: `sh deployed`
(for a deployed stack), `sh make` (`make` itself) or `sh not-run: <reason>` (an external
client, a file the reader has). A shell fence that says neither is refused, so a command
meant for the local stack cannot go untested by a slip of the fence. Other fences (```text,
```json, ```python, ```mermaid) show results or other languages and are never run.
"""

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

_FENCE = re.compile(r"^```(?P<info>[^`\n]*)\n(?P<code>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
RUN_MARK = "run"
ALLOW_HTTP_ERRORS = "allow-http-errors"
KNOWN_OPTIONS = frozenset({ALLOW_HTTP_ERRORS})
SHELL_LANGUAGES = frozenset({"bash", "sh", "shell", "console", "zsh"})
# Why a shell block is not run: the first word after the language.
NOT_RUN_MARKS = frozenset({"deployed", "make"})
NOT_RUN_REASON = "not-run:"
_MARKER = "::readme-block"
_STRICT_CURL = 'curl() { command curl --fail-with-body "$@"; }'


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence, 1-based
    options: frozenset[str]
    code: str
    page: str = "README.md"

    @property
    def where(self) -> str:
        return f"{self.page} line {self.line}"


@dataclass(frozen=True)
class Run:
    returncode: int
    output: str
    failed_block: Block | None

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def runnable_blocks(markdown: str, page: str = "README.md") -> list[Block]:
    """The page's ```bash run blocks; a shell block that neither runs nor says why is refused."""
    blocks = []
    for match in _FENCE.finditer(markdown):
        words = match.group("info").split()
        if not words or words[0] not in SHELL_LANGUAGES:
            continue
        line = markdown.count("\n", 0, match.start()) + 1
        if len(words) >= 2 and words[0] == "bash" and words[1] == RUN_MARK:
            options = frozenset(words[2:])
            unknown = options - KNOWN_OPTIONS
            if unknown:
                raise ValueError(f"{page} line {line}: unknown block option(s) {sorted(unknown)}")
            blocks.append(Block(line, options, match.group("code"), page))
            continue
        if _says_why_not_run(words[1:]):
            continue
        raise ValueError(
            f"{page} line {line}: a shell block is either `bash run` or says why it is not"
            f" run (`{words[0]} deployed`, `{words[0]} make`, `{words[0]} not-run: <reason>`)"
        )
    return blocks


def _says_why_not_run(words: Sequence[str]) -> bool:
    if not words:
        return False
    if words[0] in NOT_RUN_MARKS:
        return True
    # `not-run: reason` or `not-run:reason`: the reason is what a reader needs, so it must be there.
    reason = " ".join(words)[len(NOT_RUN_REASON) :].strip()
    return words[0].startswith(NOT_RUN_REASON) and bool(reason)


def session_script(blocks: Sequence[Block]) -> str:
    """One bash script: the blocks in order, each announced, strict unless it opts out."""
    lines = [
        "set -eo pipefail",
        # Which command broke, for the failure message.
        "trap 'echo \"::failed (exit $?): $BASH_COMMAND\"' ERR",
    ]
    for index, block in enumerate(blocks):
        lines.append(f"echo '{_MARKER} {index} ({block.where})'")
        if ALLOW_HTTP_ERRORS in block.options:
            lines.append("unset -f curl")
        else:
            lines.append(_STRICT_CURL)
        lines.append(block.code.rstrip("\n"))
    lines.append(f"echo '{_MARKER} done'")
    return "\n".join(lines) + "\n"


def run_blocks(
    blocks: Sequence[Block],
    *,
    cwd: Path,
    environment: Mapping[str, str] | None = None,
    timeout_seconds: float = 900,
) -> Run:
    answer = subprocess.run(
        ["bash", "--noprofile", "--norc"],
        input=session_script(blocks),
        cwd=cwd,
        env=dict(environment if environment is not None else os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # interleaved, as in a terminal
        text=True,
        timeout=timeout_seconds,
        check=False,
    )
    output = answer.stdout
    failed = None
    if answer.returncode != 0:
        started = re.findall(rf"^{_MARKER} (\d+) ", answer.stdout, flags=re.MULTILINE)
        failed = blocks[int(started[-1])] if started else None
    return Run(answer.returncode, output, failed)
