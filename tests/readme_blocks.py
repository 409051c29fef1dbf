"""Runs the README's runnable code blocks, in order, in one bash session, as a user pastes them.

A block is runnable when its fence's info string is `bash run` (words after `run` are
options). Blocks share one shell, so a variable set in one is there in the next, as in a
terminal. A block breaks when any command in it fails (`set -e`, `pipefail`), including an
HTTP error answered to curl: curl runs with `--fail-with-body` unless the block says
`allow-http-errors` (for examples that show a 401 on purpose). The run stops at the first
broken block and names it by its line in the README.

Other fences (```sh, ```text, ```json, a bash block without `run`) are never run: they show
commands for another place (a deployed stack, `make run` itself) or a result.
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
_MARKER = "::readme-block"
_STRICT_CURL = 'curl() { command curl --fail-with-body "$@"; }'


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence, 1-based
    options: frozenset[str]
    code: str


@dataclass(frozen=True)
class Run:
    returncode: int
    output: str
    failed_block: Block | None

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def runnable_blocks(markdown: str) -> list[Block]:
    blocks = []
    for match in _FENCE.finditer(markdown):
        words = match.group("info").split()
        if len(words) < 2 or words[0] != "bash" or words[1] != RUN_MARK:
            continue
        options = frozenset(words[2:])
        unknown = options - KNOWN_OPTIONS
        if unknown:
            line = markdown.count("\n", 0, match.start()) + 1
            raise ValueError(f"README line {line}: unknown block option(s) {sorted(unknown)}")
        line = markdown.count("\n", 0, match.start()) + 1
        blocks.append(Block(line, options, match.group("code")))
    return blocks


def session_script(blocks: Sequence[Block]) -> str:
    """One bash script: the blocks in order, each announced, strict unless it opts out."""
    lines = [
        "set -eo pipefail",
        # Which command broke, for the failure message.
        "trap 'echo \"::failed (exit $?): $BASH_COMMAND\"' ERR",
    ]
    for index, block in enumerate(blocks):
        lines.append(f"echo '{_MARKER} {index} (README line {block.line})'")
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
