"""`make bench`: prints the performance figures the issues ask for, each next to its target.

    make bench                                  # every section
    make bench ARGS="--only items-read"         # one section (repeatable)
    make bench ARGS="--list"                    # the sections

Run from the repository root (the project is installed editable into .venv). A
section is a function returning rows (tools.bench.core.Section); a later issue adds its
figures by appending its section to SECTIONS. These are measurements printed for people,
not tests: a MISS is reported, never raised, and the exit status is 0 unless a section
fails to run.
"""

import argparse
import os
import platform
import sys
import time
from collections.abc import Sequence

from tools.bench.audit import SECTION as AUDIT
from tools.bench.cad import SECTION as CAD
from tools.bench.chaos import SECTION as CHAOS
from tools.bench.cold import SECTION as COLD_INIT
from tools.bench.core import Options, Row, Section, print_table
from tools.bench.fairness import SECTION as FAIRNESS
from tools.bench.knowledge import ITEMS_READ, WARM_LATENCY
from tools.bench.knowledge_write import SECTION as KNOWLEDGE_WRITE
from tools.bench.local_stack import SECTION as LOCAL_STACK
from tools.bench.mcp import SECTION as MCP
from tools.bench.media import SECTION as MEDIA
from tools.bench.memory import SECTION as MEMORY
from tools.bench.search import SECTION as SEARCH
from tools.bench.search import SECTION_HTTP as SEARCH_HTTP
from tools.bench.surge import SECTION as SURGE
from tools.bench.tenant_data import SECTION as EVALUATIONS
from tools.bench.upload import SECTION as INCIDENT_UPLOAD

SECTIONS: list[Section] = [
    COLD_INIT,
    ITEMS_READ,
    WARM_LATENCY,
    CAD,
    KNOWLEDGE_WRITE,
    SEARCH,
    SEARCH_HTTP,
    EVALUATIONS,
    AUDIT,
    MEDIA,
    INCIDENT_UPLOAD,
    LOCAL_STACK,
    MCP,
    FAIRNESS,
    SURGE,
    MEMORY,
    CHAOS,
]


def parse_arguments(arguments: Sequence[str] | None) -> argparse.Namespace:
    names = [section.name for section in SECTIONS]
    parser = argparse.ArgumentParser(
        prog="python -m tools.bench", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=names,
        metavar="SECTION",
        help=f"run only this section (repeatable); one of: {', '.join(names)}",
    )
    parser.add_argument("--list", action="store_true", help="list the sections and exit")
    parser.add_argument(
        "--runs", type=int, default=9, help="cold-start runs per figure, median reported (>= 5)"
    )
    parser.add_argument(
        "--warm-calls", type=int, default=200, help="timed calls per side of the warm latency"
    )
    parser.add_argument(
        "--plain-moto",
        action="store_true",
        help="read the 100 000-entry tenant with plain moto, no Query index (~5 s per Query: "
        "the deep page alone then takes about 10 minutes)",
    )
    parser.add_argument(
        "--soak-seconds",
        type=float,
        default=60.0,
        help="how long the memory section's mixed soak runs (default 60)",
    )
    parser.add_argument(
        "--chaos-seconds",
        type=float,
        default=120.0,
        help="how long the chaos section drives traffic through random faults (default 120)",
    )
    parser.add_argument(
        "--chaos-seed", type=int, default=None, help="the chaos section's seed (to reproduce)"
    )
    options = parser.parse_args(arguments)
    if options.runs < 5:
        parser.error("--runs must be at least 5")
    if options.warm_calls < 10 or options.warm_calls % 10:
        parser.error("--warm-calls must be a positive multiple of 10")
    return options


def main(arguments: Sequence[str] | None = None) -> int:
    parsed = parse_arguments(arguments)
    if parsed.list:
        for section in SECTIONS:
            print(f"{section.name:14} {section.title}")
        return 0
    options = Options(
        runs=parsed.runs,
        warm_calls=parsed.warm_calls,
        index_moto_queries=not parsed.plain_moto,
        soak_seconds=parsed.soak_seconds,
        chaos_seconds=parsed.chaos_seconds,
        chaos_seed=parsed.chaos_seed,
    )
    chosen = [section for section in SECTIONS if not parsed.only or section.name in parsed.only]
    started = time.perf_counter()
    print(
        f"psap benchmark: Python {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs; sections: {', '.join(section.name for section in chosen)}",
        flush=True,
    )
    results: list[tuple[Section, list[Row], float]] = []
    for section in chosen:
        print(f"\n== {section.title} [{section.name}]", flush=True)
        section_started = time.perf_counter()
        rows = section.run(options)
        seconds = time.perf_counter() - section_started
        print_table(rows)
        print(f"  ({section.name} took {seconds:.0f} s)", flush=True)
        results.append((section, rows, seconds))

    print("\n== Summary")
    for section, rows, seconds in results:
        print(f"\n  {section.title} [{section.name}], {seconds:.0f} s")
        print_table([row for row in rows if row.ok is not None], indent="    ")
    verdicts = [row.ok for _, rows, _ in results for row in rows if row.ok is not None]
    misses = verdicts.count(False)
    total = time.perf_counter() - started
    print(
        f"\n{len(verdicts) - misses} PASS, {misses} MISS; whole run took {total:.0f} s "
        f"({total / 60:.1f} min)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
