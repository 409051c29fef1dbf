"""`psap-local env-vars`: SAM's --env-vars file for the running local stack.

`psap-local env-vars > .local/env.json` writes, per function logical id, what the function
needs to run in SAM's Docker container against the local stack: its template environment
with the running stack's real table, queue and bucket names, AWS_ENDPOINT_URL of the
embedded AWS, and a session of the function's own role (docs/local-development.md says
which of these `sam local invoke` applies, and how).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from local.aws import local_aws_environment
from local.invoke import InvokeError, find_function, load_functions, read_stack, role_session
from local.template import DEFAULT_TEMPLATE, Function

# What the local stack's workers add that is about the process, not the function: a Docker
# container has its own path, locale and code root, and SAM sets the AWS_LAMBDA_* ones.
_AWS_VARIABLES = ("AWS_ENDPOINT_URL", "AWS_DEFAULT_REGION", "AWS_REGION")


def function_variables(
    function: Function, endpoint_url: str, role: Mapping[str, str]
) -> dict[str, str]:
    """One function's entry of the env-vars file."""
    aws = local_aws_environment(endpoint_url)
    return {
        **function.environment,
        **{name: aws[name] for name in _AWS_VARIABLES},
        **role,
    }


def env_vars_main(argv: Sequence[str], default_state_file: Path, out: IO[str] | None = None) -> int:
    out = out or sys.stdout
    parser = argparse.ArgumentParser(
        prog="psap-local env-vars",
        description="SAM's --env-vars JSON for the running local stack (real resource names,"
        " AWS_ENDPOINT_URL of the embedded AWS, each function's role session):"
        " psap-local env-vars > .local/env.json",
    )
    parser.add_argument("functions", nargs="*", help="only these functions (default: all)")
    parser.add_argument(
        "--credentials",
        metavar="FUNCTION",
        help="print the function's role session as shell assignments instead, for"
        ' eval "$(psap-local env-vars --credentials FUNCTION)": SAM gives a container the'
        " credentials of the shell, never those of an env-vars file",
    )
    parser.add_argument("--state-file", type=Path, default=default_state_file)
    parser.add_argument("--template", type=Path, default=DEFAULT_TEMPLATE)
    arguments = parser.parse_args(argv)
    try:
        stack = read_stack(arguments.state_file)
        if stack is None:
            raise InvokeError(
                f"no local stack is running ({arguments.state_file} does not exist);"
                " start one with `make run`"
            )
        template = load_functions(arguments.template, stack)
        if arguments.credentials:
            session = role_session(stack, find_function(template, arguments.credentials))
            for name, value in session.items():
                print(f"export {name}={shlex.quote(value)}", file=out)
            return 0
        functions = (
            [find_function(template, name) for name in arguments.functions]
            if arguments.functions
            else sorted(template.functions.values(), key=lambda function: function.logical_id)
        )
        document = {
            function.logical_id: function_variables(
                function, stack.endpoint_url, role_session(stack, function)
            )
            for function in functions
        }
    except InvokeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(document, indent=2, sort_keys=True), file=out)
    return 0
