"""What the benchmark takes from template.yaml: the tables the functions read, and the
environment variables that name them.

Table names are the bench's own (`bench-auth`, `bench-knowledge`, ...: "bench-" and the
variable without `_TABLE`), so a table added to the template's Globals is created and named
for every section without touching the bench.
"""

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"


class _CloudFormationLoader(yaml.SafeLoader):
    """SafeLoader that reads !Ref, !GetAtt, !Sub ... as their long forms instead of failing."""


def _intrinsic(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
    value: Any
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    return {name: value}


_CloudFormationLoader.add_multi_constructor("!", _intrinsic)


def load_template(path: Path = TEMPLATE) -> dict[str, Any]:
    with path.open(encoding="utf-8") as stream:
        document: dict[str, Any] = yaml.load(stream, Loader=_CloudFormationLoader)  # noqa: S506
    return document


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
    and which reader found them. The local stack's reader (local.template) is preferred, so
    both build the same tables; the bench's own reader keeps the bench working without it."""
    try:
        return _specs_from_local_template(), "local.template"
    except Exception as error:  # any failure of an optional module: fall back, say why
        return _specs_from_yaml(load_template()), f"the bench's YAML reader ({error!r})"


def table_environment(specs: list[TableSpec]) -> dict[str, str]:
    return {spec.variable: spec.bench_name for spec in specs}


def _specs_from_local_template() -> list[TableSpec]:
    # Imported by name, not statically: the module belongs to the local stack and may be
    # absent or change shape; any mismatch lands in the fallback above.
    stack = importlib.import_module("local.template").load_template(TEMPLATE)
    by_name = {table.name: table for table in stack.tables.values()}
    specs = [
        TableSpec(by_name[value].logical_id, variable, dict(by_name[value].properties))
        for variable, value in stack.globals_environment.items()
        if value in by_name
    ]
    if not specs:
        raise LookupError("no table named in Globals.Function.Environment")
    return specs


def _specs_from_yaml(template: dict[str, Any]) -> list[TableSpec]:
    resources = template.get("Resources", {})
    variables = (
        template.get("Globals", {}).get("Function", {}).get("Environment", {}).get("Variables", {})
    )
    specs: list[TableSpec] = []
    for variable, value in variables.items():
        logical = value.get("Ref") if isinstance(value, dict) else None
        if logical and resources.get(logical, {}).get("Type") == "AWS::DynamoDB::Table":
            specs.append(TableSpec(logical, variable, resources[logical]["Properties"]))
    return specs
