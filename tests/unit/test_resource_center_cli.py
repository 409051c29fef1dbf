"""The admin CLI's catalog import progress: a bar on a terminal, rejected lines above it."""

import io

from psap.resource_center.catalog import LineError
from tools.admin_resource_center import ProgressBar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_bar_advances_and_a_rejected_line_prints_above_it() -> None:
    screen = Terminal()
    bar = ProgressBar(4, screen)
    bar(1, None)
    bar(2, LineError(2, "not JSON"))
    bar(4, None)
    bar.finish()
    output = screen.getvalue()
    assert "\r[" + "#" * 7 + "." * 23 + "] 1/4 lines, 0 rejected" in output
    assert "line 2: not JSON\n" in output
    assert output.rstrip("\n").endswith("[" + "#" * 30 + "] 4/4 lines, 1 rejected")


def test_without_a_terminal_only_rejected_lines_are_printed() -> None:
    log = io.StringIO()
    bar = ProgressBar(3, log)
    bar(1, None)
    bar(2, LineError(2, "itemType: Input should be 'COACHING_CONTENT' or 'HELP_ARTICLE'"))
    bar.finish()
    assert log.getvalue() == (
        "line 2: itemType: Input should be 'COACHING_CONTENT' or 'HELP_ARTICLE'\n"
    )
