"""What the benchmark takes from template.yaml: the tables the functions read, and the
environment variables that name them.

Table names are the bench's own (`bench-auth`, `bench-knowledge`, ...: "bench-" and the
variable without `_TABLE`), so a table added to the template's Globals is created and named
for every section without touching the bench.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local.template import load_template

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"


@dataclass(frozen=True)
class TableSpec:
    logical_id: str
    variable: str  # the environment variable the functions read the table's name from
    properties: Mapping[str, Any]  # CloudFormation properties of the table

    @property
    def bench_name(self) -> str:
        return "bench-" + self.variable.removesuffix("_TABLE").lower().replace("_", "-")


def table_specs() -> tuple[list[TableSpec], str]:
    """The tables the functions read (named in Globals, e.g. `AUTH_TABLE: !Ref AuthTable`),
    and which reader found them: the local stack's (local.template), so that both build the
    same tables."""
    stack = load_template(TEMPLATE)
    by_name = {table.name: table for table in stack.tables.values()}
    specs = [
        TableSpec(by_name[value].logical_id, variable, dict(by_name[value].properties))
        for variable, value in stack.globals_environment.items()
        if value in by_name
    ]
    if not specs:
        raise LookupError("no table named in Globals.Function.Environment")
    return specs, "local.template"


def table_environment(specs: list[TableSpec]) -> dict[str, str]:
    return {spec.variable: spec.bench_name for spec in specs}
