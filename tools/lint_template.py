"""Template checks: cfn-lint on template.yaml, `sam validate --lint`, and cfn-lint on the
SAM-translated template (plain cfn-lint no longer applies the transform, so a wrong queue
reference or batch size inside a SAM event would slip through). Runs offline."""

import itertools
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from local.iam import translate
from local.invoke import sample_event_name
from local.template import FUNCTION_TYPES, Resolver, TemplateError, load_yaml
from tools import data_protection

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "template.yaml"
EVENTS_DIR = ROOT / "events"
BIN = Path(sys.executable).parent


def translated_template() -> dict[str, Any]:
    """The CloudFormation SAM would deploy, translated locally (no AWS call)."""
    try:
        return translate(load_yaml(TEMPLATE), stack_name="psap-lint")
    except TemplateError as error:
        raise SystemExit(str(error)) from error


def _get_att_target(value: Any, attribute: str) -> str | None:
    """The logical id X of `!GetAtt X.<attribute>`, else None."""
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        target = value["Fn::GetAtt"]
        if isinstance(target, list) and len(target) == 2 and target[1] == attribute:
            return str(target[0])
    return None


def dead_letter_queues_without_alarm(document: dict[str, Any]) -> list[str]:
    """House rule: every dead-letter queue has a CloudWatch alarm on a visible message that
    notifies someone. A message parked there is work nobody does until someone is told."""
    resources: dict[str, Any] = document.get("Resources") or {}
    dead_letter: set[str] = set()
    alarmed: set[str] = set()
    for resource in resources.values():
        properties = resource.get("Properties") or {}
        redrive = properties.get("RedrivePolicy") or {}
        target = _get_att_target(redrive.get("deadLetterTargetArn"), "Arn")
        target = target or _get_att_target(
            (properties.get("DeadLetterQueue") or {}).get("TargetArn"), "Arn"
        )
        if target:
            dead_letter.add(target)
        watches_queue = (
            resource.get("Type") == "AWS::CloudWatch::Alarm"
            and bool(properties.get("AlarmActions"))
            and properties.get("Namespace") == "AWS/SQS"
            and properties.get("MetricName") == "ApproximateNumberOfMessagesVisible"
        )
        for dimension in properties.get("Dimensions") or [] if watches_queue else []:
            queue = _get_att_target(dimension.get("Value"), "QueueName")
            if dimension.get("Name") == "QueueName" and queue:
                alarmed.add(queue)
    return [
        f"{queue}: a dead-letter queue without an alarm on ApproximateNumberOfMessagesVisible"
        for queue in sorted(dead_letter - alarmed)
    ]


def functions_without_sample_event(
    document: dict[str, Any], events_dir: Path = EVENTS_DIR
) -> list[str]:
    """House rule: every function has a sample event, events/<name>.json (the logical id
    without `Function`, snake case), that `psap-local invoke` runs and an e2e test invokes
    against the local stack: a function nobody can run by hand is a function nobody tries."""
    problems = []
    for logical_id, resource in (document.get("Resources") or {}).items():
        if resource.get("Type") not in FUNCTION_TYPES:
            continue
        name = f"{sample_event_name(logical_id)}.json"
        try:
            json.loads((events_dir / name).read_text(encoding="utf-8"))
        except FileNotFoundError:
            problems.append(
                f"{logical_id}: no sample event events/{name}"
                f" (`psap-local invoke {logical_id}` runs it; docs/local-development.md)"
            )
        except ValueError as error:
            problems.append(f"{logical_id}: events/{name} is not JSON ({error})")
    return problems


METHOD_NOT_ALLOWED_FUNCTION = "MethodNotAllowedFunction"


def resources_without_any_method(document: dict[str, Any]) -> list[str]:
    """House rule: every API resource has an open ANY method served by the
    MethodNotAllowedFunction, so a method it does not declare gets 405 with `Allow`, not API
    Gateway's 404 MISSING_AUTHENTICATION_TOKEN. A new path without one fails here."""
    resources: dict[str, Any] = document.get("Resources") or {}
    paths: set[str] = set()
    answered: set[str] = set()
    for logical_id, resource in resources.items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        events = (resource.get("Properties") or {}).get("Events") or {}
        for event in events.values():
            if event.get("Type") != "Api":
                continue
            properties = event.get("Properties") or {}
            path = str(properties.get("Path"))
            paths.add(path)
            open_any = (
                str(properties.get("Method", "")).upper() == "ANY"
                and (properties.get("Auth") or {}).get("Authorizer") == "NONE"
            )
            if open_any and logical_id == METHOD_NOT_ALLOWED_FUNCTION:
                answered.add(path)
    return [
        f"{path}: no ANY method (Auth: NONE) served by {METHOD_NOT_ALLOWED_FUNCTION}"
        for path in sorted(paths - answered)
    ]


# The capacity plan's lists (docs/capacity.md): which functions must hold reserved
# concurrency. Guaranteed: the CAD path, the three authorizers and the audit writer keep their
# executions when everything else is busy. Capped: what a tenant can drive in bulk, so that
# one tenant's burst cannot take the account's executions from the guaranteed ones.
GUARANTEED_CONCURRENCY: tuple[str, ...] = (
    "CadIntakeFunction",
    "CadWorkerFunction",
    "PartnerAuthorizerFunction",
    "CadAuthorizerFunction",
    "ConsoleAuthorizerFunction",
    "AuditWriterFunction",
)
CAPPED_CONCURRENCY: tuple[str, ...] = (
    "ResourceCenterSearchFunction",
    "McpFunction",
    "AuditExportCreateFunction",
    "AdminTenantExportCreateFunction",
    "AuditExportWorkerFunction",
    "IncidentUploadFunction",
    "IncidentUploadCreateFunction",
    "IncidentUploadStartFunction",
    "IncidentUploadWorkerFunction",
    "MediaRadioTrafficUploadFunction",
    "ResourceCenterIndexerFunction",
    "WebhookDispatcherFunction",
)
# AWS's default concurrency quota per account and region, and the part of it AWS keeps
# unreserved (it refuses a reservation that would leave less). An account whose quota was
# raised changes ACCOUNT_CONCURRENCY and the parameters' MaxValues together.
ACCOUNT_CONCURRENCY = 1000
MINIMUM_UNRESERVED = 100


def _parameter_refs(value: Any, parameters: Mapping[str, Any]) -> Iterator[str]:
    """The template parameters a property value refers to, at any depth."""
    if isinstance(value, dict):
        if "Ref" in value and value["Ref"] in parameters:
            yield str(value["Ref"])
        for item in value.values():
            yield from _parameter_refs(item, parameters)
    elif isinstance(value, list):
        for item in value:
            yield from _parameter_refs(item, parameters)


def _deployable_values(definition: Mapping[str, Any]) -> list[str] | None:
    """The values `sam deploy` can be given for a Number parameter that matter to a linear
    check (its bounds and default), or None when it accepts any number."""
    if definition.get("AllowedValues"):
        return [str(value) for value in definition["AllowedValues"]]
    if "MinValue" in definition and "MaxValue" in definition:
        bounds = (definition["MinValue"], definition.get("Default"), definition["MaxValue"])
        return sorted({str(value) for value in bounds if value is not None})
    return None


def _missing_reservation(logical_id: str) -> list[str]:
    if logical_id in GUARANTEED_CONCURRENCY:
        return [
            f"{logical_id}: guaranteed capacity in the plan, but it has no "
            "ReservedConcurrentExecutions"
        ]
    if logical_id in CAPPED_CONCURRENCY:
        return [
            f"{logical_id}: a tenant can drive it in bulk, but it has no "
            "ReservedConcurrentExecutions (its cap)"
        ]
    return []


def _sqs_pollers(logical_id: str, properties: Mapping[str, Any]) -> tuple[list[Any], list[str]]:
    """Each SQS event source's MaximumConcurrency, and a problem for each that has none."""
    pollers: list[Any] = []
    problems: list[str] = []
    for event_name, event in (properties.get("Events") or {}).items():
        if event.get("Type") != "SQS":
            continue
        scaling = (event.get("Properties") or {}).get("ScalingConfig") or {}
        if scaling.get("MaximumConcurrency") is None:
            problems.append(
                f"{logical_id}.{event_name}: an SQS event source without "
                "ScalingConfig.MaximumConcurrency"
            )
        else:
            pollers.append(scaling["MaximumConcurrency"])
    return pollers, problems


def _largest_reservation(
    document: dict[str, Any], logical_id: str, reserved: Any, *, pollers: list[Any]
) -> tuple[int, list[str]]:
    """The function's reservation at the largest value its parameters allow, checked in every
    deployable combination to be positive and to hold its queues' pollers."""
    parameters: dict[str, Any] = document.get("Parameters") or {}
    choices: dict[str, list[str]] = {}
    problems: list[str] = []
    for name in dict.fromkeys(_parameter_refs([reserved, pollers], parameters)):
        values = _deployable_values(parameters[name] or {})
        if values is None:
            problems.append(
                f"{logical_id}: parameter {name} has no MinValue/MaxValue or AllowedValues, "
                "so sam deploy would accept any number"
            )
        choices[name] = values or []
    largest = 0
    for combination in itertools.product(*choices.values()):
        scenario = dict(zip(choices, combination, strict=True))
        resolver = Resolver(
            document, stack_name="psap-lint", sqs_endpoint="", parameter_overrides=scenario
        )
        reservation = int(resolver.resolve(reserved))
        at_once = sum(int(resolver.resolve(lane)) for lane in pollers)
        largest = max(largest, reservation)
        if reservation < 1:
            problems.append(f"{logical_id}: ReservedConcurrentExecutions {reservation} stops it")
        elif at_once > reservation:
            # Lambda throttles the surplus, and a throttled message counts a receive toward
            # its dead-letter queue.
            problems.append(
                f"{logical_id}: its SQS event sources may run up to {at_once} at once, above "
                f"its ReservedConcurrentExecutions {reservation} ({scenario or 'as written'})"
            )
        if problems:
            break
    return largest, problems


def concurrency_plan_violations(document: dict[str, Any]) -> list[str]:
    """House rule: every SQS event source has ScalingConfig.MaximumConcurrency; every
    function in the two lists above has ReservedConcurrentExecutions, within its own
    reservation for its queues' pollers; and the reservations, at the largest values their
    parameters allow, leave AWS's 100 unreserved executions of the account's default 1,000.
    CloudFormation's Rules cannot add numbers, so the sum holds at deploy time because each
    parameter's MaxValue keeps it; this check is where the MaxValues are added up."""
    resources: dict[str, Any] = document.get("Resources") or {}
    function_globals = (document.get("Globals") or {}).get("Function") or {}
    problems: list[str] = []
    # Parameters shared between functions are counted at their largest for each: an upper
    # bound, which is what a limit needs.
    reserved_total = 0
    for logical_id, resource in resources.items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        properties = resource.get("Properties") or {}
        reserved = properties.get(
            "ReservedConcurrentExecutions", function_globals.get("ReservedConcurrentExecutions")
        )
        pollers, missing = _sqs_pollers(logical_id, properties)
        problems += missing
        if reserved is None:
            problems += _missing_reservation(logical_id)
            continue
        largest, invalid = _largest_reservation(document, logical_id, reserved, pollers=pollers)
        reserved_total += largest
        problems += invalid
    if ACCOUNT_CONCURRENCY - reserved_total < MINIMUM_UNRESERVED:
        problems.append(
            f"reserved concurrency: up to {reserved_total} of the account's "
            f"{ACCOUNT_CONCURRENCY} at the largest values the parameters allow; AWS keeps at "
            f"least {MINIMUM_UNRESERVED} unreserved (docs/capacity.md)"
        )
    return problems


# The variables that carry the local fault injector's rules into a worker (local/faults.py);
# the deployed stack never sets them, so no deployed function can be made to fail on purpose.
FAULT_INJECTOR_VARIABLES = ("PSAP_LOCAL_FAULT_RULES", "PSAP_LOCAL_FAULT_STATE")
# The consumers every CAD update passes through: a crashed or timed-out invocation of one may
# delay an update by at most this (docs/faults.md).
UPDATE_PATH_FUNCTIONS = ("CadWorkerFunction", "WebhookDispatcherFunction")
MAX_UPDATE_DELAY_SECONDS = 60


def fault_injection_enabled(document: dict[str, Any]) -> list[str]:
    """House rule: no function, nor Globals, sets a fault injector variable."""
    resources: dict[str, Any] = document.get("Resources") or {}
    places = {"Globals": (document.get("Globals") or {}).get("Function") or {}}
    places.update(
        (logical_id, resource.get("Properties") or {})
        for logical_id, resource in resources.items()
        if resource.get("Type") in ("AWS::Serverless::Function", "AWS::Lambda::Function")
    )
    return [
        f"{where}: sets {name}: the fault injector is for the local stack only"
        for where, properties in places.items()
        for name in FAULT_INJECTOR_VARIABLES
        if name in ((properties.get("Environment") or {}).get("Variables") or {})
    ]


def visibility_timeout_violations(document: dict[str, Any]) -> list[str]:
    """House rule: an SQS event source's queue keeps its messages invisible at least the
    function's Timeout (Lambda refuses the mapping otherwise), and on the update path at most
    a minute, so a crashed or timed-out batch is received again within it."""
    resources: dict[str, Any] = document.get("Resources") or {}
    function_globals = (document.get("Globals") or {}).get("Function") or {}
    problems: list[str] = []
    for logical_id, resource in resources.items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        properties = resource.get("Properties") or {}
        timeout = int(properties.get("Timeout", function_globals.get("Timeout", 3)))
        for event in (properties.get("Events") or {}).values():
            if event.get("Type") != "SQS":
                continue
            queue_id = _get_att_target((event.get("Properties") or {}).get("Queue"), "Arn")
            queue = resources.get(queue_id or "", {}).get("Properties") or {}
            visibility = int(queue.get("VisibilityTimeout", 30))
            if visibility < timeout:
                problems.append(
                    f"{queue_id}: VisibilityTimeout {visibility} is less than the Timeout"
                    f" {timeout} of {logical_id}"
                )
            if logical_id in UPDATE_PATH_FUNCTIONS and visibility > MAX_UPDATE_DELAY_SECONDS:
                problems.append(
                    f"{queue_id}: VisibilityTimeout {visibility} on the update path; at most"
                    f" {MAX_UPDATE_DELAY_SECONDS} (docs/faults.md)"
                )
    return problems


def run(step: str, command: list[str]) -> bool:
    print(f"-- {step}", flush=True)
    environment = {**os.environ, "SAM_CLI_TELEMETRY": "0", "AWS_DEFAULT_REGION": "us-east-1"}
    result = subprocess.run(command, cwd=ROOT, env=environment, check=False)
    return result.returncode == 0


def main() -> int:
    results = [
        run("cfn-lint template.yaml", [str(BIN / "cfn-lint"), str(TEMPLATE)]),
        run(
            "sam validate --lint",
            [str(BIN / "sam"), "validate", "--lint", "--template-file", str(TEMPLATE)],
        ),
    ]
    translated_document = translated_template()
    with tempfile.TemporaryDirectory() as folder:
        translated = Path(folder) / "translated.json"
        translated.write_text(json.dumps(translated_document, indent=1), encoding="utf-8")
        results.append(
            run("cfn-lint on the SAM-translated template", [str(BIN / "cfn-lint"), str(translated)])
        )
    print("-- house rules", flush=True)
    document = load_yaml(TEMPLATE)
    problems = (
        dead_letter_queues_without_alarm(document)
        + resources_without_any_method(document)
        + functions_without_sample_event(document)
        + concurrency_plan_violations(document)
        + fault_injection_enabled(document)
        + visibility_timeout_violations(document)
    )
    problems += data_protection.problems(translated_document)
    for problem in problems:
        print(f"template.yaml: {problem}", file=sys.stderr)
    results.append(not problems)
    if not all(results):
        print("template checks failed", file=sys.stderr)
        return 1
    print("template checks passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
