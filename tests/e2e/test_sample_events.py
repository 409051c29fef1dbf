"""Every sample event in events/ runs its function successfully against the running stack,
through `psap-local invoke` (docs/local-development.md), as a developer runs them after
`make run`.

Some sample events change the demo data (a knowledge entry deleted, a card unpublished, a
spare credential revoked): tests/e2e/conftest.py runs this module after the others, before
the README's blocks.
"""

import json
from pathlib import Path
from typing import Any

import pytest

from local.invoke import sample_event_name
from local.stack import main
from local.template import load_template

pytestmark = pytest.mark.e2e

EVENTS = Path(__file__).resolve().parents[2] / "events"
FUNCTIONS = sorted(load_template().functions, key=sample_event_name)


# The one function whose purpose is a 4xx: a method a resource does not declare.
EXPECTED_STATUS = {"MethodNotAllowedFunction": 405}


def _failure(function_id: str, answer: Any) -> str | None:
    """Why an invoke's answer is an error answer, or None when it is a success."""
    if not isinstance(answer, dict):
        return None
    if "statusCode" in answer and int(answer["statusCode"]) == EXPECTED_STATUS.get(function_id):
        return None
    if "statusCode" in answer and int(answer["statusCode"]) >= 400:
        return f"HTTP {answer['statusCode']}: {answer.get('body')}"
    if answer.get("batchItemFailures"):
        return f"SQS records failed: {answer['batchItemFailures']}"
    policy = answer.get("policyDocument")
    if policy is not None and any(
        statement.get("Effect") != "Allow" for statement in policy.get("Statement", [])
    ):
        return f"the authorizer refused: {policy}"
    return None


def test_every_sample_event_file_belongs_to_a_function() -> None:
    names = {sample_event_name(function_id) for function_id in FUNCTIONS}
    assert sorted(path.stem for path in EVENTS.glob("*.json") if path.stem not in names) == []


@pytest.mark.parametrize("function_id", FUNCTIONS)
def test_the_sample_event_runs_its_function(
    function_id: str, stack_state_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the function's own sample event and the running stack's state file
    # When it is invoked as a developer invokes it
    code = main(["invoke", function_id, "--state-file", str(stack_state_file)])
    captured = capsys.readouterr()
    # Then the invoke succeeded and its answer is no error answer
    assert code == 0, captured.err[-3000:]
    answer = json.loads(captured.out)
    assert _failure(function_id, answer) is None, _failure(function_id, answer)
