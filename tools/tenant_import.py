"""`psap-admin import`: loads a tenant's users, enrollments (with task lists),
evaluations, incidents and events from JSON Lines files.

Each line is one record in the API's own shape (camelCase), validated by the same pydantic
models the API answers with. Records keep the platform's ids: importing a record again
updates it, never duplicates it. Each record is written in its own transaction with its
listing pointers and counters, so counters stay exact whatever fails; a bad record is
reported with its file and line number and the others go on.

    psap-admin import --tenant 1 users.jsonl enrollments.jsonl evaluations.jsonl
    psap-admin import --tenant 1 --kind evaluations export-2026-01.jsonl

The kind of a file is its name's first word (users*.jsonl, enrollments*.jsonl, ...) unless
--kind says. Files run in dependency order: users before the enrollments and evaluations
that name them.
"""

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel, ValidationError

from psap.auth import store as tenants
from psap.clock import utc_now
from psap.config import Settings, configure, settings, tenant_data_table
from psap.errors import DomainError, InvalidInput, StoreUnavailable
from psap.events.models import Event
from psap.events.store import finish_event_import, import_event
from psap.incidents.models import Incident
from psap.incidents.store import finish_incident_import, import_incident
from psap.qa.models import QaEvaluation
from psap.qa.store import put_evaluation
from psap.storage.ordering import UpsertOutcome
from psap.text import TextRefused, check_document, parse_json
from psap.training.models import PhaseEnrollment
from psap.training.store import put_enrollment
from psap.users.models import User
from psap.users.store import put_user

type Writer = Callable[[int, Any, datetime], UpsertOutcome]


@dataclass(frozen=True)
class Kind:
    name: str
    model: type[BaseModel]
    write: Writer
    # Kinds whose ids come from a platform-wide sequence: after the file, the sequence moves
    # past its highest id (once per file: the sequence item is shared by every tenant).
    finish: Callable[[int], None] | None = None


def _users(tenant: int, record: Any, now: datetime) -> UpsertOutcome:
    return put_user(tenant, record)


def _enrollments(tenant: int, record: Any, now: datetime) -> UpsertOutcome:
    return put_enrollment(tenant, record)


def _evaluations(tenant: int, record: Any, now: datetime) -> UpsertOutcome:
    return put_evaluation(tenant, record)


def _incidents(tenant: int, record: Any, now: datetime) -> UpsertOutcome:
    return import_incident(tenant, record, now)


def _events(tenant: int, record: Any, now: datetime) -> UpsertOutcome:
    return import_event(tenant, record, now)


# In dependency order: users first, since enrollments and evaluations belong to users.
KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind("users", User, _users),
        Kind("enrollments", PhaseEnrollment, _enrollments),
        Kind("evaluations", QaEvaluation, _evaluations),
        Kind("incidents", Incident, _incidents, finish_incident_import),
        Kind("events", Event, _events, finish_event_import),
    )
}
_ORDER = list(KINDS)


@dataclass
class FileReport:
    path: Path
    kind: str
    created: int = 0
    updated: int = 0
    failures: list[tuple[int, str]] = field(default_factory=list)  # (line number, problem)

    @property
    def errors(self) -> list[str]:
        """`file:line: problem`, by line."""
        return [f"{self.path}:{number}: {problem}" for number, problem in sorted(self.failures)]


def kind_of(path: Path, forced: str | None) -> Kind:
    """--kind, else the file name's first word: users.jsonl, evaluations-2026-01.jsonl."""
    if forced is not None:
        return KINDS[forced]
    stem = path.name.split(".")[0].lower()
    for name, kind in KINDS.items():
        if stem.startswith(name.rstrip("s")):
            return kind
    raise InvalidInput(
        f"{path}: cannot tell what it holds from its name; name it after one of "
        f"{', '.join(KINDS)} or pass --kind"
    )


def unknown_fields(raw: Any, known: Any, path: str = "") -> list[str]:
    """Paths of the fields a line carries that its model does not have (compared with the
    model's own dump, which has every field it knows, at every depth)."""
    found: list[str] = []
    if isinstance(raw, dict) and isinstance(known, dict):
        for name, value in raw.items():
            where = f"{path}.{name}" if path else str(name)
            if name not in known:
                found.append(where)
            else:
                found.extend(unknown_fields(value, known[name], where))
    elif isinstance(raw, list) and isinstance(known, list):
        for index, (value, kept) in enumerate(zip(raw, known, strict=False)):
            found.extend(unknown_fields(value, kept, f"{path}.{index}"))
    return found


def describe(error: ValidationError) -> str:
    """`results.0.score: Input should be a valid number` for each problem, camelCase paths."""
    problems = []
    for detail in error.errors():
        where = ".".join(str(part) for part in detail.get("loc", ())) or "record"
        problems.append(f"{where}: {detail.get('msg', 'is not valid')}")
    return "; ".join(problems)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    with path.open(encoding="utf-8") as stream:
        for number, line in enumerate(stream, start=1):
            if line.strip():
                yield number, line


class ProgressBar:
    """One line redrawn in place on a terminal; a line per tenth of the work otherwise, so
    logs of long imports stay short."""

    def __init__(self, label: str, total: int, stream: TextIO) -> None:
        self.label = label
        self.total = max(total, 1)
        self.stream = stream
        self.started = time.perf_counter()
        self.done = 0
        self.failed = 0
        self.interactive = stream.isatty()
        self._next_line = self.total // 10 or 1

    def advance(self, failed: bool) -> None:
        self.done += 1
        self.failed += int(failed)
        if self.interactive and (self.done % 25 == 0 or self.done == self.total):
            self._draw("\r")
        elif not self.interactive and self.done >= self._next_line:
            self._next_line += self.total // 10 or 1
            self._draw("")
            self.stream.write("\n")

    def _draw(self, prefix: str) -> None:
        width = 30
        filled = width * self.done // self.total
        rate = self.done / max(time.perf_counter() - self.started, 1e-6)
        self.stream.write(
            f"{prefix}{self.label} [{'#' * filled}{'.' * (width - filled)}] "
            f"{self.done}/{self.total} records, {self.failed} failed, {rate:.0f}/s"
        )
        self.stream.flush()

    def finish(self) -> None:
        if self.interactive:
            self._draw("\r")
            self.stream.write("\n")


def import_file(
    path: Path,
    kind: Kind,
    tenant_id: int,
    *,
    workers: int = 1,
    progress: TextIO | None = None,
) -> FileReport:
    """Imports one file; never raises for a bad record (it goes to the report's errors)."""
    report = FileReport(path, kind.name)
    tenant_data_table()  # a target without the table is refused before the first record
    now = utc_now()
    total = sum(1 for _ in _lines(path))
    bar = ProgressBar(f"{path.name} ({kind.name})", total, progress) if progress else None

    highest_id = 0

    def one(number: int, line: str) -> tuple[int, UpsertOutcome | str, int | None]:
        try:
            raw = parse_json(line)
            check_document(raw)
            record = kind.model.model_validate(raw)
            unknown = unknown_fields(raw, record.model_dump(mode="json", by_alias=True))
            if unknown:
                # A misspelled field would be dropped and its value lost: refused instead.
                return number, "; ".join(f"{name}: unknown field" for name in unknown[:5]), None
            record_id = getattr(record, "id", None)
            return number, kind.write(tenant_id, record, now), record_id
        except json.JSONDecodeError as error:
            return number, f"not JSON ({error.msg} at column {error.colno})", None
        except TextRefused as refused:
            return number, f"{refused.path}: {refused.problem}", None
        except ValidationError as error:
            return number, describe(error), None
        except ValueError as error:  # nested too deep, NaN or Infinity
            return number, f"not accepted JSON ({error})", None
        except (DomainError, StoreUnavailable) as error:
            return number, getattr(error, "info", str(error)), None

    def settle(future: Future[tuple[int, UpsertOutcome | str, int | None]]) -> None:
        nonlocal highest_id
        number, outcome, record_id = future.result()
        if isinstance(record_id, int):
            highest_id = max(highest_id, record_id)
        if isinstance(outcome, UpsertOutcome):
            if outcome is UpsertOutcome.CREATED:
                report.created += 1
            else:
                report.updated += 1
        else:
            report.failures.append((number, outcome))
        if bar:
            bar.advance(failed=not isinstance(outcome, UpsertOutcome))

    # A bounded window of records in flight: big files never sit in memory whole.
    window = max(1, workers) * 8
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        pending: list[Future[tuple[int, UpsertOutcome | str, int | None]]] = []
        for number, line in _lines(path):
            pending.append(pool.submit(one, number, line))
            if len(pending) >= window:
                settle(pending.pop(0))
        for future in pending:
            settle(future)
    if kind.finish is not None and highest_id:
        kind.finish(highest_id)
    if bar:
        bar.finish()
    return report


def import_files(
    paths: Sequence[Path],
    tenant_id: int,
    kind: str | None = None,
    *,
    workers: int = 1,
    progress: TextIO | None = None,
) -> list[FileReport]:
    """Imports the files in dependency order (users first); the tenant must exist."""
    tenants.get_tenant(tenant_id)
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        raise InvalidInput(f"no such file: {', '.join(missing)}")
    planned = sorted(
        ((path, kind_of(path, kind)) for path in paths),
        key=lambda pair: _ORDER.index(pair[1].name),
    )
    return [
        import_file(path, file_kind, tenant_id, workers=workers, progress=progress)
        for path, file_kind in planned
    ]


# ---------------------------------------------------------------- admin CLI wiring


def settings_from_outputs(base: Settings, outputs: dict[str, str]) -> Settings:
    return replace(base, tenant_data_table=outputs.get("TenantDataTableName") or None)


def settings_from_state(base: Settings, state: dict[str, Any]) -> Settings:
    return replace(base, tenant_data_table=state["resources"].get("TenantDataTable") or None)


def run_import(arguments: argparse.Namespace) -> None:
    if arguments.tenant_data_table:
        configure(replace(settings(), tenant_data_table=arguments.tenant_data_table))
    # moto (the local stack) is not safe for concurrent transactions; DynamoDB is.
    workers = arguments.workers or (1 if settings().local_aws else 4)
    reports = import_files(
        [Path(name) for name in arguments.files],
        arguments.tenant,
        arguments.kind,
        workers=workers,
        progress=sys.stderr,
    )
    failed = 0
    for report in reports:
        for line in report.errors:
            print(line, file=sys.stderr)
        failed += len(report.errors)
        print(
            f"{report.path}: {report.kind}: {report.created} created, {report.updated} "
            f"updated, {len(report.errors)} failed"
        )
    if failed:
        raise InvalidInput(f"{failed} record(s) were not imported (listed above by line)")


def add_commands(areas: Any) -> None:
    command = areas.add_parser(
        "import",
        help="import users, enrollments, evaluations, incidents and events (JSON Lines)",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    command.add_argument("--tenant", type=int, required=True)
    command.add_argument("files", nargs="+", help="JSON Lines files, one record per line")
    command.add_argument("--kind", choices=list(KINDS), help="what every file holds")
    command.add_argument(
        "--workers",
        type=int,
        help="records written in parallel (default: 4 on AWS, 1 on the local stack)",
    )
    command.add_argument("--tenant-data-table", help="table name (default: from the target)")
    command.set_defaults(run=run_import)
