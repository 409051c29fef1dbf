"""Cold init: how long importing a function's module takes in a fresh interpreter.

Each run is a new subprocess laid out as Lambda lays out a function: the code directory first
on sys.path, the shared layer on PYTHONPATH, then `import app`. Only that import is timed
(inside the child); interpreter start-up is the same for every function and is not ours.

Two bytecode states are measured:
- no cache: PYTHONDONTWRITEBYTECODE=1 and a fresh, empty PYTHONPYCACHEPREFIX per run. With a
  prefix set, Python looks for .pyc files only under it, so every module (site-packages and
  stdlib included) is compiled from source: the worst case.
- precompiled: every module the functions load, plus the whole layer and function folders,
  compiled once with compileall into one prefix that all runs then reuse read-only.

The floor is the least any Powertools REST function pays: boto3 and APIGatewayRestResolver,
one resolver and one route. The targets are ratios to it, measured in the same run.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.bench.core import Options, Progress, Row, Section, median, milliseconds, ratio_row
from tools.bench.template import table_environment, table_specs

ROOT = Path(__file__).resolve().parents[2]
LAYER = ROOT / "layers" / "shared"
LIST_FUNCTION = ROOT / "functions" / "knowledge_list"
AUTHORIZER = ROOT / "functions" / "authorizer"

LIST_LIMIT = 1.10  # list / floor, both bytecode states (the light GET path)
# authorizer / floor (the light GET path): without bytecode, and precompiled.
AUTHORIZER_LIMITS = {"no bytecode cache": 0.30, "precompiled": 0.25}

FLOOR_SOURCE = '''"""Benchmark floor: the least a Powertools REST handler imports and builds."""
import boto3  # noqa: F401  (a typical function imports it; the floor pays for it too)
from aws_lambda_powertools.event_handler import APIGatewayRestResolver

app = APIGatewayRestResolver()


@app.get("/api/v1/external/knowledge")
def list_entries() -> dict[str, object]:
    return {"items": []}


def handler(event, context):
    return app.resolve(event, context)
'''

# Runs inside the child. Nothing but sys and time is imported before the timed import, so
# json and importlib.util (which the functions load anyway) are not paid for in advance.
CHILD = """
import sys, time
sys.path.insert(0, sys.argv[1])
started = time.perf_counter()
import app
elapsed = time.perf_counter() - started
import importlib.util, json, os
sources = set()
for module in list(sys.modules.values()):
    origin = getattr(getattr(module, "__spec__", None), "origin", None)
    if isinstance(origin, str) and origin.endswith(".py"):
        sources.add(origin)
cached = sum(os.path.exists(importlib.util.cache_from_source(s)) for s in sources)
print(json.dumps({"seconds": elapsed, "file": app.__file__, "modules": len(sys.modules),
                  "sources": sorted(sources), "cached": cached}))
"""


@dataclass(frozen=True)
class Target:
    key: str
    label: str
    code_dir: Path
    traced: bool = False  # True: X-Ray on, as deployed (POWERTOOLS_TRACE_DISABLED unset)


@dataclass(frozen=True)
class Sample:
    seconds: float
    modules: int
    sources: tuple[str, ...]
    cached: int


def lambda_environment(
    code_dir: Path, pycache: Path, traced: bool, *, tables: dict[str, str]
) -> dict[str, str]:
    """What Lambda would give the function, plus the bytecode settings of the run. Built from
    scratch so nothing of the caller's shell (PYTHONPATH, AWS_PROFILE, ...) leaks in."""
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(LAYER),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPYCACHEPREFIX": str(pycache),
        # Powertools' Tracer only switches itself on inside Lambda, which it detects by this.
        "LAMBDA_TASK_ROOT": str(code_dir),
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",  # a dummy for the SDKs, never sent anywhere
        **tables,  # AUTH_TABLE=bench-auth, KNOWLEDGE_TABLE=bench-knowledge, ...
        "POWERTOOLS_SERVICE_NAME": "psap-api",
        "POWERTOOLS_METRICS_NAMESPACE": "Psap",
        "CREDENTIAL_KIND": "partner",
    }
    if not traced:
        environment["POWERTOOLS_TRACE_DISABLED"] = "true"
    return environment


def import_once(target: Target, pycache: Path, tables: dict[str, str]) -> Sample:
    completed = subprocess.run(
        [sys.executable, "-c", CHILD, str(target.code_dir)],
        cwd=target.code_dir,
        env=lambda_environment(target.code_dir, pycache, target.traced, tables=tables),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"importing {target.label} failed:\n{completed.stderr}")
    answer: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    expected = target.code_dir / "app.py"
    if Path(answer["file"]).resolve() != expected.resolve():
        raise RuntimeError(f"{target.label}: imported {answer['file']}, not {expected}")
    return Sample(
        float(answer["seconds"]),
        int(answer["modules"]),
        tuple(answer["sources"]),
        int(answer["cached"]),
    )


def measure(
    targets: list[Target],
    runs: int,
    pycache_for_run: Callable[[], Path],
    *,
    tables: dict[str, str],
    progress: Progress,
    mode: str,
) -> dict[str, list[Sample]]:
    """Runs every target once per round, rotating the order each round so that no target is
    always first (or last) after a pause: drift on a shared machine spreads over all."""
    samples: dict[str, list[Sample]] = {target.key: [] for target in targets}
    for round_number in range(runs):
        shift = round_number % len(targets)
        for target in targets[shift:] + targets[:shift]:
            samples[target.key].append(import_once(target, pycache_for_run(), tables))
        latest = ", ".join(
            f"{target.key} {milliseconds(samples[target.key][-1].seconds)}" for target in targets
        )
        progress(f"{mode}: run {round_number + 1}/{runs}: {latest}")
    return samples


def compile_cache(
    cache: Path, sources: set[str], folders: list[Path], *, progress: Progress
) -> None:
    """Compiles into `cache` the folders we ship and every module file the runs loaded. Only
    loaded modules from site-packages and the stdlib: compiling all of the dev venv (470 MB of
    test and build tools) would take longer than the benchmark and change no figure."""
    started = time.perf_counter()
    environment = {"PATH": os.environ.get("PATH", ""), "PYTHONPYCACHEPREFIX": str(cache)}
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as listing:
        listing.write("\n".join(sorted(sources)) + "\n")
    try:
        for arguments in (["-i", listing.name], [str(folder) for folder in folders]):
            subprocess.run(
                [sys.executable, "-m", "compileall", "-q", *arguments],
                env=environment,
                check=True,
                timeout=300,
            )
    finally:
        Path(listing.name).unlink()
    progress(
        f"compiled {len(sources)} loaded modules and the layer and function folders into one "
        f"cache in {time.perf_counter() - started:.1f} s"
    )


def _paired_ratio(samples: dict[str, list[Sample]], key: str) -> float:
    rounds = zip(samples[key], samples["floor"], strict=True)
    return median([target.seconds / floor.seconds for target, floor in rounds])


def figure_rows(mode: str, samples: dict[str, list[Sample]], targets: list[Target]) -> list[Row]:
    medians = {key: median([sample.seconds for sample in runs]) for key, runs in samples.items()}
    rows: list[Row] = []
    for target in targets:
        runs = samples[target.key]
        cached = f"{runs[0].cached}/{len(runs[0].sources)} .py modules had bytecode"
        rows.append(
            Row(
                f"{mode}: {target.label} (median of {len(runs)}; {runs[0].modules} modules, "
                f"{cached})",
                milliseconds(medians[target.key]),
            )
        )
    # Each round imports every target back to back: the median of the rounds' own ratios is
    # robust to the machine's drift between rounds, which the ratio of two medians is not
    # (on a shared 2-core machine the floor alone ranged 270 to 430 ms in one run).
    rows.append(
        ratio_row(
            f"{mode}: list / floor (median of per-round ratios)",
            _paired_ratio(samples, "list"),
            1.0,
            limit=LIST_LIMIT,
        )
    )
    rows.append(
        ratio_row(
            f"{mode}: authorizer / floor (median of per-round ratios)",
            _paired_ratio(samples, "authorizer"),
            1.0,
            limit=AUTHORIZER_LIMITS[mode],
        )
    )
    # Context only: the targets are set with tracing off, as the local stack runs.
    xray = medians["list-xray"] / medians["floor"]
    rows.append(Row(f"{mode}: list deployed with X-Ray / floor", f"{xray:.3f}"))
    return rows


def run(options: Options) -> list[Row]:
    progress = Progress("cold-init")
    progress(
        "tracing is disabled (POWERTOOLS_TRACE_DISABLED=true, as locally) except for the "
        "'deployed with X-Ray' figure, where it is on as in Lambda"
    )
    specs, reader = table_specs()
    tables = table_environment(specs)
    progress(f"table variables from template.yaml (read by {reader}): {tables}")
    with tempfile.TemporaryDirectory(prefix="psap-bench-cold-") as scratch:
        base = Path(scratch)
        floor_dir = base / "floor"
        floor_dir.mkdir()
        (floor_dir / "app.py").write_text(FLOOR_SOURCE)
        targets = [
            Target("list", "knowledge list", LIST_FUNCTION),
            Target("authorizer", "authorizer", AUTHORIZER),
            Target("floor", "floor (boto3 + resolver + 1 route)", floor_dir),
            Target("list-xray", "knowledge list, deployed with X-Ray", LIST_FUNCTION, True),
        ]
        counter = iter(range(1_000_000))

        def fresh_pycache() -> Path:
            path = base / f"empty-{next(counter)}"
            path.mkdir()
            return path

        cold = measure(
            targets,
            options.runs,
            fresh_pycache,
            tables=tables,
            progress=progress,
            mode="no bytecode cache",
        )

        cache = base / "compiled"
        sources = {source for runs in cold.values() for sample in runs for source in sample.sources}
        compile_cache(
            cache, sources, [LAYER, LIST_FUNCTION, AUTHORIZER, floor_dir], progress=progress
        )
        warm = measure(
            targets,
            options.runs,
            lambda: cache,
            tables=tables,
            progress=progress,
            mode="precompiled",
        )
    return figure_rows("no bytecode cache", cold, targets) + figure_rows(
        "precompiled", warm, targets
    )


SECTION = Section("cold-init", "Cold init (import of the function module)", run)
