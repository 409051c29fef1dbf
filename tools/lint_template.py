"""Template checks: cfn-lint on template.yaml, `sam validate --lint`, and cfn-lint on the
SAM-translated template (plain cfn-lint no longer applies the transform, so a wrong queue
reference or batch size inside a SAM event would slip through). Runs offline."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from local.iam import translate
from local.template import TemplateError, load_yaml
from tools import data_protection

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "template.yaml"
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
    problems = dead_letter_queues_without_alarm(document) + resources_without_any_method(document)
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
