"""`psap-admin resource-center ...`: the catalog and tenants' licenses and imports.

    resource-center import catalog.jsonl          # JSON Lines; '-' reads standard input
    resource-center publish coach-choking-refresher   # an item by externalId or catalog id
    resource-center unpublish 42
    resource-center license grant --tenant 1 --license "Protocol Coaching Library"
    resource-center license revoke --tenant 1 --license "Protocol Coaching Library"
    resource-center record-import --tenant 1 --item help-ali-rebid [--version 1]
    resource-center reindex                       # ask for an index rebuild now

Changes that alter what search can see send one rebuild request to the indexer's queue;
the search function picks the new index up within about a minute.
"""

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from psap.clock import utc_now
from psap.config import settings
from psap.errors import InvalidInput
from psap.resource_center import catalog
from psap.resource_center.catalog import LineError, RebuildRequest

_BAR_WIDTH = 30


def rebuild_request() -> RebuildRequest | None:
    queue_url = settings().search_index_queue_url
    if queue_url is None:
        print(
            "note: no search index queue is configured; the index was not asked to rebuild",
            file=sys.stderr,
        )
        return None
    return catalog.queue_rebuild_request(queue_url)


class ProgressBar:
    """`[#####.....] 120/214 lines, 1 rejected` on a terminal; line errors print above it.
    Without a terminal only the errors and the final summary are printed."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = max(total, 1)
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self.rejected = 0
        self.live = self.stream.isatty()

    def __call__(self, line: int, problem: LineError | None) -> None:
        self.done = line
        if problem is not None:
            self.rejected += 1
            self._clear()
            print(f"line {problem.line}: {problem.message}", file=self.stream)
        if self.live:
            filled = _BAR_WIDTH * self.done // self.total
            bar = "#" * filled + "." * (_BAR_WIDTH - filled)
            self.stream.write(f"\r[{bar}] {self.done}/{self.total} lines, {self.rejected} rejected")
            self.stream.flush()

    def _clear(self) -> None:
        if self.live:
            self.stream.write("\r" + " " * (_BAR_WIDTH + 40) + "\r")

    def finish(self) -> None:
        if self.live:
            self.stream.write("\n")


def _read_lines(source: str) -> list[str]:
    if source == "-":
        return sys.stdin.read().splitlines()
    path = Path(source)
    if not path.is_file():
        raise InvalidInput(f"{source} is not a file")
    return path.read_text(encoding="utf-8").splitlines()


def import_file(arguments: argparse.Namespace) -> None:
    lines = _read_lines(arguments.file)
    progress = ProgressBar(len(lines))
    report = catalog.import_catalog(lines, utc_now(), rebuild_request(), on_line=progress)
    progress.finish()
    print(f"catalog import: {report.summary()}")
    if report.errors:
        raise InvalidInput(
            f"{len(report.errors)} line(s) rejected (listed above); the other lines were imported"
        )


def _publisher(published: bool) -> Callable[[argparse.Namespace], None]:
    def run(arguments: argparse.Namespace) -> None:
        outcome = catalog.set_published(
            arguments.item, published, utc_now(), request_rebuild=rebuild_request()
        )
        item = outcome.item
        print(f"catalog item {item.id} ({item.record.external_id}): {outcome.change.value}")

    return run


def license_grant(arguments: argparse.Namespace) -> None:
    name = catalog.grant_license(arguments.tenant, arguments.license, utc_now())
    print(f"tenant {arguments.tenant} holds the license '{name}'")


def license_revoke(arguments: argparse.Namespace) -> None:
    name = catalog.revoke_license(arguments.tenant, arguments.license)
    print(f"tenant {arguments.tenant} no longer holds the license '{name}'")


def record_import(arguments: argparse.Namespace) -> None:
    item, version = catalog.record_import(
        arguments.tenant, arguments.item, utc_now(), version=arguments.version
    )
    print(
        f"tenant {arguments.tenant} imported catalog item {item.id} "
        f"({item.record.external_id}) at version {version} of {item.version}"
    )


def reindex(arguments: argparse.Namespace) -> None:
    request = rebuild_request()
    if request is not None:
        request("requested from the admin CLI")
        print("index rebuild requested")


def add_subcommands(areas: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    commands = areas.add_parser(
        "resource-center", help="resource-center catalog, licenses and imports"
    ).add_subparsers(dest="action", required=True)
    load = commands.add_parser("import", help="import catalog items from JSON Lines")
    load.add_argument("file", help="a .jsonl file, or - for standard input")
    load.set_defaults(run=import_file)
    for action, published in (("publish", True), ("unpublish", False)):
        command = commands.add_parser(action, help=f"{action} a catalog item")
        command.add_argument("item", help="catalog id or externalId")
        command.set_defaults(run=_publisher(published))
    licenses = commands.add_parser("license", help="tenant licenses").add_subparsers(
        dest="license_action", required=True
    )
    for action, run in (("grant", license_grant), ("revoke", license_revoke)):
        command = licenses.add_parser(action, help=f"{action} a tenant license")
        command.add_argument("--tenant", type=int, required=True)
        command.add_argument("--license", required=True, help="license name")
        command.set_defaults(run=run)
    imported = commands.add_parser("record-import", help="record that a tenant imported an item")
    imported.add_argument("--tenant", type=int, required=True)
    imported.add_argument("--item", required=True, help="catalog id or externalId")
    imported.add_argument(
        "--version", type=int, help="the catalog version imported (default: the current one)"
    )
    imported.set_defaults(run=record_import)
    commands.add_parser("reindex", help="ask the indexer to rebuild now").set_defaults(run=reindex)
