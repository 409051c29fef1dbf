"""Template checks: cfn-lint on template.yaml, `sam validate --lint`, and cfn-lint on the
SAM-translated template (plain cfn-lint no longer applies the transform, so a wrong queue
reference or batch size inside a SAM event would slip through). Runs offline."""

import json
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import boto3
from samtranslator.model.exceptions import InvalidDocumentException
from samtranslator.parser.parser import Parser
from samtranslator.translator.translator import Translator

from local.template import load_yaml

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "template.yaml"
BIN = Path(sys.executable).parent


def translated_template() -> dict[str, Any]:
    """The CloudFormation SAM would deploy, translated locally (no AWS call)."""
    logging.getLogger("samtranslator").setLevel(logging.ERROR)  # feature-toggle chatter
    document = load_yaml(TEMPLATE)
    # What `sam package` does first: local code folders become S3 locations.
    for logical_id, resource in document["Resources"].items():
        properties = resource.get("Properties", {})
        for key in ("CodeUri", "ContentUri"):
            if isinstance(properties.get(key), str):
                properties[key] = f"s3://lint-artifacts/{logical_id}.zip"
    translator = Translator(
        managed_policy_map={},
        sam_parser=Parser(),
        boto_session=boto3.Session(region_name="us-east-1"),
    )
    parameters = {
        "AWS::Region": "us-east-1",
        "AWS::Partition": "aws",
        "AWS::AccountId": "123456789012",
        "AWS::StackName": "psap-lint",
    }
    try:
        result: dict[str, Any] = translator.translate(document, parameter_values=parameters)
    except InvalidDocumentException as error:
        causes = "; ".join(str(cause) for cause in error.causes)
        raise SystemExit(f"SAM translation failed: {causes}") from error
    return result


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
    with tempfile.TemporaryDirectory() as folder:
        translated = Path(folder) / "translated.json"
        translated.write_text(json.dumps(translated_template(), indent=1), encoding="utf-8")
        results.append(
            run("cfn-lint on the SAM-translated template", [str(BIN / "cfn-lint"), str(translated)])
        )
    if not all(results):
        print("template checks failed", file=sys.stderr)
        return 1
    print("template checks passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
