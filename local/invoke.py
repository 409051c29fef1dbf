"""`psap-local invoke`: one function run locally with an event, as `sam local invoke` runs it.

The function runs exactly as the local stack runs it (local.runtime's worker: its template
environment, the shared layer on its path, its Timeout and MemorySize, a Lambda context),
under its own IAM role's session against the running stack's embedded AWS, found through
the state file (.local/stack.json). The result is printed on stdout as JSON, the function's
log on stderr (or --log-file); the exit status is 0 when the invoke succeeded and 1 with the
function's error otherwise. A function whose role grants no AWS action runs without a stack.

Sample events (events/<code folder>.json) may hold placeholders, `${NAME}`, filled from the
running stack's demo data (docs/local-development.md lists them), so one file works against
every fresh `make run` whatever ids and tokens it made.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import socket
import sys
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

from local.runtime import FunctionPool, worker_environment
from local.template import (
    DEFAULT_STACK_NAME,
    DEFAULT_TEMPLATE,
    REPO_ROOT,
    Function,
    StackTemplate,
    TemplateError,
    load_template,
)

EVENTS_DIR: Final = REPO_ROOT / "events"
# What the local stack sets for its functions (local.stack.LocalStack.start) when no stack
# says what it runs with.
LOCAL_PARAMETERS: Final = {"WebhookLocalDev": "true"}
# Where a function that needs no AWS is pointed: the discard port, so that a call it was
# not expected to make fails at once on loopback instead of reaching a real account.
NO_AWS_ENDPOINT: Final = "http://127.0.0.1:9"
PLACEHOLDER: Final = re.compile(r"\$\{([A-Z][A-Z0-9_]*)\}")


class InvokeError(Exception):
    """A problem with the request (function, event, stack): one line, exit status 2."""


@dataclass(frozen=True)
class RunningStackFacts:
    """What the invoke needs from the state file of a running stack."""

    state: Mapping[str, Any]

    @property
    def endpoint_url(self) -> str:
        return str(self.state["awsEndpointUrl"])

    @property
    def stack_name(self) -> str:
        return str(self.state.get("stackName") or DEFAULT_STACK_NAME)

    @property
    def parameter_overrides(self) -> dict[str, str]:
        overrides: Mapping[str, str] = self.state.get("parameterOverrides") or LOCAL_PARAMETERS
        return {str(name): str(value) for name, value in overrides.items()}


def sample_event_name(logical_id: str) -> str:
    """The logical id without `Function`, in snake case: KnowledgeGetFunction ->
    knowledge_get, the name of its folder under functions/ (the two authorizers share a
    folder, and each has its own event)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", logical_id.removesuffix("Function")).lower()


def sample_event_path(function: Function, events_dir: Path = EVENTS_DIR) -> Path:
    """A function's sample event, events/<sample_event_name>.json (a house rule: every
    function has one, see tools.lint_template)."""
    return events_dir / f"{sample_event_name(function.logical_id)}.json"


def read_stack(state_file: Path) -> RunningStackFacts | None:
    """The running stack's facts; None when no stack runs with this state file."""
    try:
        text = state_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        state = json.loads(text)
        endpoint = urllib.parse.urlsplit(str(state["awsEndpointUrl"]))
    except (ValueError, KeyError, TypeError) as error:
        raise InvokeError(f"{state_file} is not a local stack's state file ({error})") from None
    # A stack killed without its shutdown leaves its file behind: ask its embedded AWS.
    try:
        with socket.create_connection((endpoint.hostname or "", endpoint.port or 80), timeout=2):
            pass
    except OSError:
        raise InvokeError(
            f"the local stack of {state_file} is not running (its embedded AWS at"
            f" {state['awsEndpointUrl']} does not answer); start it with `make run`"
        ) from None
    return RunningStackFacts(state)


def placeholder_values(state: Mapping[str, Any]) -> dict[str, str]:
    """The values `${NAME}` takes in a sample event: psap-local-env's variables and the demo
    facts sample events need beyond them."""
    from local.stack import shell_variables  # noqa: PLC0415 - the stack imports this module

    values = shell_variables(state)
    tenants: Sequence[Mapping[str, Any]] = state.get("tenants") or []
    if tenants:
        tenant = tenants[0]
        samples: Mapping[str, Any] = tenant.get("sampleEvents") or {}
        media: Mapping[str, Any] = tenant.get("media") or {}
        facts = {
            "MEDIA_ID": media.get("radioTrafficMediaId"),
            **{str(name): value for name, value in samples.items()},
        }
        values.update({name: str(value) for name, value in facts.items() if value is not None})
    return values


def fill_placeholders(
    event: Any, values: Mapping[str, str], *, where: str, unique: Callable[[], str]
) -> Any:
    """The event with every `${NAME}` in its strings (and in JSON bodies inside strings)
    replaced; `${UNIQUE}` is a fresh value per invoke, for ids that must not repeat."""
    fresh = unique()

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "UNIQUE":
            return fresh
        if name not in values:
            raise InvokeError(
                f"{where} uses ${{{name}}}, which "
                + (
                    "no running stack provides: start one with `make run`"
                    if not values
                    else "is not a known placeholder (docs/local-development.md lists them)"
                )
            )
        return values[name]

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return PLACEHOLDER.sub(replace, value)
        if isinstance(value, list):
            return [walk(item) for item in value]
        if isinstance(value, dict):
            return {walk(key): walk(item) for key, item in value.items()}
        return value

    return walk(event)


def read_event(source: str, stdin: IO[str]) -> tuple[Any, str]:
    """The event JSON from a file or `-` (stdin), and how to name it in a message."""
    where = "the event on stdin" if source == "-" else source
    try:
        text = stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvokeError(f"event file {source} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InvokeError(f"event file {source} cannot be read: {error}") from None
    try:
        return json.loads(text), where
    except json.JSONDecodeError as error:
        raise InvokeError(f"{where} is not JSON: {error}") from None


def read_env_vars(path: Path, function: Function) -> dict[str, str]:
    """SAM's --env-vars file: `Parameters` for every function, then the function's own
    object; as in SAM, only variables the template declares for the function are set."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvokeError(f"env-vars file {path} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InvokeError(f"env-vars file {path} is not JSON: {error}") from None
    if not isinstance(document, dict) or not all(
        isinstance(section, dict) for section in document.values()
    ):
        raise InvokeError(
            f'env-vars file {path} must be {{"Parameters" or a function id: {{"NAME": "value"}}}}'
        )
    overrides = {**document.get("Parameters", {}), **document.get(function.logical_id, {})}
    return {
        name: _env_value(value) for name, value in overrides.items() if name in function.environment
    }


def _env_value(value: Any) -> str:
    # SAM writes booleans as "true"/"false" and numbers as their text.
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def role_session(stack: RunningStackFacts, function: Function) -> dict[str, str]:
    """The session of the function's own role the running stack's workers use."""
    sessions: Mapping[str, Mapping[str, str]] = stack.state.get("functionSessions") or {}
    session = sessions.get(function.logical_id)
    if session is None:
        raise InvokeError(
            f"the running stack publishes no role session for {function.logical_id}; restart"
            " it (`make run`) so that its state file has the functions' sessions"
        )
    return dict(session)


def aws_actions_of(function: Function, template_path: Path) -> list[str]:
    """The AWS actions the function's role allows beyond Lambda's own logging and tracing:
    none means it runs without the embedded AWS."""
    from local.iam import function_roles  # noqa: PLC0415 - SAM's translator is slow to import

    role = function_roles(template_path, parameter_overrides=LOCAL_PARAMETERS).get(
        function.logical_id
    )
    return sorted(role.actions()) if role is not None else []


def load_functions(template_path: Path, stack: RunningStackFacts | None) -> StackTemplate:
    try:
        return load_template(
            template_path,
            stack_name=stack.stack_name if stack else DEFAULT_STACK_NAME,
            sqs_endpoint=stack.endpoint_url if stack else None,
            parameter_overrides=stack.parameter_overrides if stack else LOCAL_PARAMETERS,
        )
    except TemplateError as error:
        raise InvokeError(f"{template_path.name}: {error}") from None


def find_function(template: StackTemplate, name: str) -> Function:
    function = template.functions.get(name)
    if function is not None:
        return function
    # The code folder's name is accepted too: it is what events/ and functions/ are named by.
    by_folder = [f for f in template.functions.values() if f.code_dir.name == name]
    if len(by_folder) == 1:
        return by_folder[0]
    raise InvokeError(
        f"no function {name!r} in {template.path.name}; `psap-local invoke --list` lists them"
    )


def list_functions(template: StackTemplate, out: IO[str]) -> None:
    rows = []
    for function in sorted(template.functions.values(), key=lambda f: f.logical_id):
        path = sample_event_path(function)
        shown = str(path.relative_to(REPO_ROOT)) if path.exists() else "(no sample event)"
        rows.append((function.logical_id, shown, _trigger(function)))
    width = max(len(row[0]) for row in rows)
    event_width = max(len(row[1]) for row in rows)
    for logical_id, shown, trigger in rows:
        print(f"{logical_id:<{width}}  {shown:<{event_width}}  {trigger}", file=out)


def _trigger(function: Function) -> str:
    if function.api_events:
        api = function.api_events[0]
        return f"{api.method.upper()} {api.path}"
    if function.sqs_events:
        return f"SQS {function.sqs_events[0].queue_id}"
    if function.ignored_events:
        return ", ".join(sorted(set(function.ignored_events.values())))
    return "invoked by the stack (authorizer or log subscription)"


def _parser(default_state_file: Path) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="psap-local invoke",
        description="Run one function locally with an event, as `sam local invoke` does,"
        " against the running local stack's embedded AWS. The result goes to stdout, the"
        " function's log to stderr.",
    )
    parser.add_argument(
        "function",
        nargs="?",
        help="the function's logical id in template.yaml (or its folder under functions/)",
    )
    parser.add_argument(
        "-e",
        "--event",
        help="the event JSON file, or - for stdin (default: the function's sample event,"
        " events/<folder>.json)",
    )
    parser.add_argument("--env-vars", type=Path, help="SAM's env-vars JSON file (overrides)")
    parser.add_argument("--log-file", type=Path, help="write the function's log here")
    parser.add_argument("--state-file", type=Path, default=default_state_file)
    parser.add_argument("--template", type=Path, default=DEFAULT_TEMPLATE)
    parser.add_argument(
        "--list", action="store_true", help="list the functions and their sample events"
    )
    parser.add_argument(
        "--print-event",
        action="store_true",
        help="print the event with its placeholders filled, and invoke nothing (for"
        " `sam local invoke -e`)",
    )
    return parser


def invoke_main(
    argv: Sequence[str],
    default_state_file: Path,
    *,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
) -> int:
    """`psap-local invoke ...`; 0 on success, 1 when the function failed, 2 when the
    request could not be run (one line on stderr saying why)."""
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    arguments = _parser(default_state_file).parse_args(argv)
    try:
        return _invoke(arguments, stdin, stdout, err=stderr)
    except InvokeError as error:
        print(f"error: {error}", file=stderr)
        return 2
    except BrokenPipeError:
        # A reader that stopped early (`psap-local invoke --list | head -3`) is not an
        # error; Python would otherwise print a traceback, then another one at exit.
        _quiet_closed_stdout()
        return 0


def _quiet_closed_stdout() -> None:
    """Points stdout at /dev/null, so the interpreter's final flush finds nothing to write."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # a test's StringIO has no descriptor
        pass
    finally:
        os.close(devnull)


def _invoke(arguments: argparse.Namespace, stdin: IO[str], stdout: IO[str], *, err: IO[str]) -> int:
    if arguments.list:
        list_functions(load_functions(arguments.template, None), stdout)
        return 0
    if not arguments.function:
        raise InvokeError("name the function to invoke (`psap-local invoke --list` lists them)")
    stack = read_stack(arguments.state_file)
    template = load_functions(arguments.template, stack)
    function = find_function(template, arguments.function)
    source = arguments.event or str(sample_event_path(function))
    event, where = read_event(source, stdin)
    values = placeholder_values(stack.state) if stack else {}
    event = fill_placeholders(event, values, where=where, unique=lambda: secrets.token_hex(6))
    if arguments.print_event:
        print(json.dumps(event, indent=2), file=stdout)
        return 0
    if stack is None:
        actions = aws_actions_of(function, arguments.template)
        if actions:
            raise InvokeError(
                f"{function.logical_id} needs the embedded AWS (its role allows"
                f" {', '.join(actions[:3])}{', ...' if len(actions) > 3 else ''}) and no local"
                f" stack is running with {arguments.state_file}: start one with `make run`"
            )
        endpoint, credentials = NO_AWS_ENDPOINT, None
    else:
        endpoint, credentials = stack.endpoint_url, role_session(stack, function)
    environment = worker_environment(function, endpoint, credentials=credentials)
    if arguments.env_vars:
        environment.update(read_env_vars(arguments.env_vars, function))
    return _run(
        function, environment, event, log_file=arguments.log_file, stdout=stdout, stderr=err
    )


def _run(
    function: Function,
    environment: Mapping[str, str],
    event: Any,
    *,
    log_file: Path | None,
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    log_stream = log_file.open("a", encoding="utf-8") if log_file else stderr

    def log(line: str) -> None:
        # The worker prefixes each line with the function's id, for a stack's shared log.
        print(line.removeprefix(f"[{function.logical_id}] "), file=log_stream, flush=True)

    pool = FunctionPool(function, environment, log=log)
    try:
        result = pool.invoke(event)
    finally:
        pool.close()
        if log_file:
            log_stream.close()
    print(
        f"REPORT {function.logical_id} Duration: {result.duration_ms:.2f} ms"
        f" Memory Size: {function.memory_size} MB Timeout: {function.timeout} s",
        file=stderr,
    )
    if result.ok:
        print(json.dumps(result.payload), file=stdout)
        return 0
    print(
        json.dumps({"errorType": result.error_type, "errorMessage": result.error_message}),
        file=stdout,
    )
    print(
        f"error: {function.logical_id} failed: {result.error_type}: {result.error_message}",
        file=stderr,
    )
    return 1
