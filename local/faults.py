"""The local fault injector: a seeded, declarative fault plan (`psap-local --faults FILE`).

Modelled on AWS FIS and failure-lambda: each rule names what fails, where, and how often.

    {
      "seed": 7,
      "timeScale": 10,
      "rules": [
        {"fault": "crash", "function": "CadWorkerFunction",
         "point": "cad.after_incident_write", "times": 1},
        {"fault": "timeout", "function": "WebhookDispatcherFunction", "probability": 0.1},
        {"fault": "latency", "function": "*", "milliseconds": 200, "probability": 0.2},
        {"fault": "dynamodb-error", "function": "CadWorkerFunction", "table": "CadTable",
         "operation": "UpdateItem", "error": "ProvisionedThroughputExceededException",
         "probability": 0.1},
        {"fault": "s3-slowdown", "function": "*", "bucket": "MediaBucket", "probability": 0.2},
        {"fault": "sqs-duplicate", "queue": "CadIntakeQueue", "probability": 0.5}
      ]
    }

- `crash` ends the worker process (exit status 137) at the named fault point, or at the start
  of an invocation without a point; `timeout` stalls it there until the runtime ends the
  invocation at the function's Timeout; `latency` sleeps there.
- `dynamodb-error` and `s3-slowdown` answer an AWS call with the service's error
  (local/fault_aws_calls.py); `sqs-duplicate` makes the event source mapping deliver a batch
  twice (local/pollers.py).
- `probability` (default 1) is drawn from the seed, the rule and how many times the rule was
  met across the stack; `times` caps how often a rule fires across the whole stack (a crash
  `times: 1` fails one try and lets the redelivery through).
- `timeScale` divides every queue consumer's Timeout and every queue's VisibilityTimeout, so
  a test sees timeouts and redeliveries in seconds; the ratios between them stay the
  template's. API functions keep their Timeout (it is what their callers wait).

A rule naming a fault, function, queue, table, bucket, operation, error or fault point that
does not exist stops the stack with a message naming it. Fault points are the
`fault_point("...")` calls of the code (psap.faults). The injector runs in the local stack's
worker processes only (local/lambda_worker.py installs it); the deployed template can never
enable it (tools/lint_template refuses the variables that carry it).
"""

from __future__ import annotations

import ast
import dataclasses
import json
import math
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from local.fault_aws_calls import DYNAMODB_ERRORS, DYNAMODB_OPERATIONS, S3_OPERATIONS
from local.fault_worker import fires
from local.template import REPO_ROOT, StackTemplate

# The variables the worker process reads (local/lambda_worker.py): this function's rules as
# JSON, and the directory where the counters shared by all workers live.
RULES_VARIABLE: Final = "PSAP_LOCAL_FAULT_RULES"
STATE_VARIABLE: Final = "PSAP_LOCAL_FAULT_STATE"
FAULT_VARIABLES: Final = (RULES_VARIABLE, STATE_VARIABLE)
# Where the fault_point("...") calls live.
CODE_FOLDERS: Final = (REPO_ROOT / "layers" / "shared" / "psap", REPO_ROOT / "functions")
ANY_FUNCTION: Final = "*"

_COMMON_FIELDS: Final = frozenset({"fault", "probability", "times"})
_FIELDS: Final[Mapping[str, frozenset[str]]] = {
    "crash": frozenset({"function", "point"}),
    "timeout": frozenset({"function", "point"}),
    "latency": frozenset({"function", "point", "milliseconds"}),
    "dynamodb-error": frozenset({"function", "table", "operation", "error"}),
    "s3-slowdown": frozenset({"function", "bucket", "operation"}),
    "sqs-duplicate": frozenset({"queue"}),
}
_REQUIRED: Final[Mapping[str, frozenset[str]]] = {
    "crash": frozenset({"function"}),
    "timeout": frozenset({"function"}),
    "latency": frozenset({"function", "milliseconds"}),
    "dynamodb-error": frozenset({"function", "error"}),
    "s3-slowdown": frozenset({"function"}),
    "sqs-duplicate": frozenset({"queue"}),
}


class FaultPlanError(ValueError):
    """A fault file that cannot be run as written; the message names what is wrong."""


@dataclass(frozen=True)
class FaultRule:
    index: int
    fault: str
    probability: float = 1.0
    times: int | None = None
    function: str | None = None
    point: str | None = None
    milliseconds: int = 0
    # Physical names, resolved from the template's logical ids.
    table: str | None = None
    bucket: str | None = None
    operation: str | None = None
    error: str | None = None
    queue: str | None = None

    def applies_to(self, function_id: str) -> bool:
        return self.function in (ANY_FUNCTION, function_id)

    def for_worker(self) -> dict[str, Any]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


@dataclass(frozen=True)
class FaultPlan:
    seed: int
    time_scale: float
    rules: tuple[FaultRule, ...]
    state_dir: Path

    def worker_environment(self, function_id: str) -> dict[str, str]:
        """What a function's worker needs to run its rules (nothing when it has none)."""
        rules = [
            rule.for_worker()
            for rule in self.rules
            if rule.function and rule.applies_to(function_id)
        ]
        if not rules:
            return {}
        document = {"seed": self.seed, "function": function_id, "rules": rules}
        return {RULES_VARIABLE: json.dumps(document), STATE_VARIABLE: str(self.state_dir)}

    def duplicates(self, queue_id: str) -> bool:
        """Whether the next batch received from this queue is to be delivered twice."""
        return any(
            rule.queue == queue_id and fires(rule.for_worker(), self.seed, self.state_dir)
            for rule in self.rules
            if rule.fault == "sqs-duplicate"
        )

    def scaled(self, template: StackTemplate) -> StackTemplate:
        """The template with Timeouts and VisibilityTimeouts divided by the time scale."""
        if self.time_scale == 1:
            return template
        return scale_timeouts(template, self.time_scale)


def scale_timeouts(template: StackTemplate, scale: float) -> StackTemplate:
    def shorter(seconds: int) -> int:
        return max(1, math.ceil(seconds / scale))

    # Only the queue consumers: an API function's Timeout is what its callers wait, not a
    # redelivery delay, and a scaled one would time out its first (cold) requests.
    functions = {
        key: dataclasses.replace(function, timeout=shorter(function.timeout))
        if function.sqs_events
        else function
        for key, function in template.functions.items()
    }
    queues = {
        key: dataclasses.replace(
            queue,
            visibility_timeout=shorter(queue.visibility_timeout),
            # What the embedded AWS creates the queue with (local.aws).
            properties={
                **queue.properties,
                "VisibilityTimeout": shorter(queue.visibility_timeout),
            },
        )
        for key, queue in template.queues.items()
    }
    return dataclasses.replace(template, functions=functions, queues=queues)


def known_fault_points(folders: Sequence[Path] = CODE_FOLDERS) -> frozenset[str]:
    """The names of every fault_point("...") call in the code."""
    points: set[str] = set()
    for folder in folders:
        for path in folder.rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if "fault_point(" not in text:
                continue
            for node in ast.walk(ast.parse(text)):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name | ast.Attribute)
                    and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr)
                    == "fault_point"
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)
                ):
                    points.add(node.args[0].value)
    return frozenset(points)


def load_fault_plan(
    path: Path, template: StackTemplate, state_dir: Path | None = None
) -> FaultPlan:
    """Reads and checks a fault file against the template and the code (FaultPlanError)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise FaultPlanError(f"fault file {path}: {error}") from error
    return fault_plan(document, template, state_dir)


def fault_plan(document: Any, template: StackTemplate, state_dir: Path | None = None) -> FaultPlan:
    if not isinstance(document, dict):
        raise FaultPlanError("a fault file is a JSON object with seed, timeScale and rules")
    unknown = set(document) - {"seed", "timeScale", "rules"}
    if unknown:
        raise FaultPlanError(f"unknown field of the fault file: {sorted(unknown)[0]}")
    seed = document.get("seed", 0)
    scale = document.get("timeScale", 1)
    if not isinstance(seed, int) or not isinstance(scale, int | float) or scale < 1:
        raise FaultPlanError("seed must be an integer and timeScale a number of at least 1")
    rules = document.get("rules", [])
    if not isinstance(rules, list):
        raise FaultPlanError("rules must be a list")
    points = known_fault_points()
    checked = tuple(_rule(index, rule, template, points=points) for index, rule in enumerate(rules))
    directory = state_dir or Path(tempfile.mkdtemp(prefix="psap-faults-"))
    directory.mkdir(parents=True, exist_ok=True)
    return FaultPlan(seed, float(scale), checked, directory)


def _rule(index: int, rule: Any, template: StackTemplate, *, points: frozenset[str]) -> FaultRule:
    where = f"rule {index + 1}"
    if not isinstance(rule, dict):
        raise FaultPlanError(f"{where}: a rule is an object")
    fault = rule.get("fault")
    if not isinstance(fault, str) or fault not in _FIELDS:
        raise FaultPlanError(f"{where}: unknown fault {fault!r} (one of {', '.join(_FIELDS)})")
    unknown = set(rule) - _FIELDS[fault] - _COMMON_FIELDS
    if unknown:
        raise FaultPlanError(f"{where}: unknown field {sorted(unknown)[0]!r} for {fault}")
    missing = _REQUIRED[fault] - set(rule)
    if missing:
        raise FaultPlanError(f"{where}: {fault} needs {sorted(missing)[0]!r}")
    probability = rule.get("probability", 1.0)
    if not isinstance(probability, int | float) or not 0 <= probability <= 1:
        raise FaultPlanError(f"{where}: probability must be between 0 and 1")
    times = rule.get("times")
    if times is not None and (not isinstance(times, int) or times < 0):
        raise FaultPlanError(f"{where}: times must be a whole number")
    function = rule.get("function")
    if function is not None and function != ANY_FUNCTION and function not in template.functions:
        raise FaultPlanError(f"{where}: unknown function {function!r}")
    point = rule.get("point")
    if point is not None and point not in points:
        raise FaultPlanError(f"{where}: unknown fault point {point!r}")
    milliseconds = rule.get("milliseconds", 0)
    if not isinstance(milliseconds, int) or milliseconds < 0:
        raise FaultPlanError(f"{where}: milliseconds must be a whole number")
    table = _resolved(where, "table", rule.get("table"), known=template.tables)
    bucket = _resolved(where, "bucket", rule.get("bucket"), known=template.buckets)
    queue = rule.get("queue")
    if queue is not None and queue not in template.queues:
        raise FaultPlanError(f"{where}: unknown queue {queue!r}")
    operation = rule.get("operation")
    operations = DYNAMODB_OPERATIONS if fault == "dynamodb-error" else S3_OPERATIONS
    if operation is not None and operation not in operations:
        raise FaultPlanError(f"{where}: unknown operation {operation!r}")
    error = rule.get("error")
    if error is not None and error not in DYNAMODB_ERRORS:
        raise FaultPlanError(
            f"{where}: unknown error {error!r} (one of {', '.join(DYNAMODB_ERRORS)})"
        )
    return FaultRule(
        index=index,
        fault=fault,
        probability=float(probability),
        times=times,
        function=function,
        point=point,
        milliseconds=milliseconds,
        table=table,
        bucket=bucket,
        operation=operation,
        error=error,
        queue=queue,
    )


def _resolved(where: str, kind: str, logical_id: Any, *, known: Mapping[str, Any]) -> str | None:
    """A table's or bucket's physical name from its logical id."""
    if logical_id is None:
        return None
    resource = known.get(str(logical_id))
    if resource is None:
        raise FaultPlanError(f"{where}: unknown {kind} {logical_id!r}")
    return str(resource.name)
