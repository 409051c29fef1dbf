"""The pieces every benchmark section shares: result rows, options, progress and tables.

A section is a named function that measures something and returns rows; `tools.bench` runs
the sections in order and prints one summary. A later issue adds its figures by writing a
section and appending it to SECTIONS in tools/bench/__main__.py.
"""

import contextlib
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    """One printed figure. `ok` is None for figures that are context, not a target."""

    figure: str
    value: str
    target: str = "-"
    ok: bool | None = None

    @property
    def verdict(self) -> str:
        if self.ok is None:
            return ""
        return "PASS" if self.ok else "MISS"


@dataclass(frozen=True)
class Options:
    runs: int  # subprocess runs per cold-start figure (the median is reported)
    warm_calls: int  # timed calls per side of the warm-latency comparison
    index_moto_queries: bool  # see local.moto_queries.indexed_queries
    soak_seconds: float = 60.0  # the memory section's mixed soak
    chaos_seconds: float = 120.0  # the chaos section's randomized run
    chaos_seed: int | None = None  # its seed (default: drawn from the clock)


type SectionRun = Callable[[Options], list[Row]]


@dataclass(frozen=True)
class Section:
    name: str  # what --only takes
    title: str
    run: SectionRun


class Progress:
    """Progress lines for long steps, each stamped with the seconds since the section began,
    so a slow machine shows where the time goes."""

    def __init__(self, section: str) -> None:
        self.section = section
        self.started = time.perf_counter()

    def __call__(self, message: str) -> None:
        elapsed = time.perf_counter() - self.started
        # The real stdout: a section may silence what the functions it runs print
        # (metrics and audit lines) with quiet_functions().
        print(f"  [{self.section} +{elapsed:5.1f}s] {message}", file=sys.__stdout__, flush=True)


@contextlib.contextmanager
def quiet_functions() -> Iterator[None]:
    """What handlers print (EMF metrics, audit lines) is still produced, then dropped: the
    work is measured, the console keeps only the benchmark's own lines."""
    with open(os.devnull, "w", encoding="utf-8") as sink, contextlib.redirect_stdout(sink):
        yield


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def milliseconds(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def ratio_row(figure: str, numerator: float, denominator: float, *, limit: float) -> Row:
    value = numerator / denominator if denominator > 0 else float("inf")
    # Three decimals: a value printed as the limit itself must not hide which side it is on.
    return Row(figure, f"{value:.3f}", f"<= {limit:g}", value <= limit)


def print_table(rows: Sequence[Row], indent: str = "  ") -> None:
    headers = ("figure", "measured", "target", "")
    cells = [headers, *((row.figure, row.value, row.target, row.verdict) for row in rows)]
    widths = [max(len(cell[column]) for cell in cells) for column in range(len(headers))]

    def line(cell: Sequence[str]) -> str:
        return (
            indent
            + "  ".join(
                text.ljust(width) if column == 0 else text.rjust(width)
                for column, (text, width) in enumerate(zip(cell, widths, strict=True))
            ).rstrip()
        )

    print(line(headers))
    print(indent + "  ".join("-" * width for width in widths))
    for row in rows:
        print(line((row.figure, row.value, row.target, row.verdict)))
