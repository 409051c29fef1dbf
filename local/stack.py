"""`psap-local` (`make run`): the whole service on 127.0.0.1, from template.yaml.

Starts moto as the embedded AWS, creates the template's tables, queues and buckets, binds the
API gateway (port 3000 like `sam local start-api`), starts the SQS pollers, seeds the demo
tenants, writes the state file other tools read (.local/stack.json) and serves until Ctrl-C
or SIGTERM.

The console shows what a user must read: the credentials, ready-to-paste curl lines and
where things are. Everything else (start-up steps, request lines, the functions' own logs at
--log-level, WARNING by default, the sample CAD receiver's verdicts) goes to the log file.

A running stack holds a lock beside its state file; a second stack with the same state file
refuses to start and leaves the first one's file alone.

`psap-local-env` prints the state file's facts as shell variables (API, TOKEN, CAD, ...) for
`eval "$(psap-local-env)"`.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import ipaddress
import json
import os
import shlex
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import IO, Any, Final

from local import iam, iam_enforcement, partition_capacity
from local.aws import (
    OPERATOR_CREDENTIALS,
    EmbeddedAws,
    PortInUseError,
    apigateway_client,
    create_resources,
    local_aws_environment,
)
from local.cad_receiver import CadReceiver, Endpoint
from local.concurrency import (
    AWS_ACCOUNT_CONCURRENCY,
    DEFAULT_ACCOUNT_CONCURRENCY,
    DEFAULT_CONCURRENCY_SCALE,
    AccountConcurrency,
    ConcurrencyConfigurationError,
    scale_concurrency,
)
from local.demo_cad import RECEIVER_URL_VARIABLE
from local.faults import FaultPlan, FaultPlanError, load_fault_plan
from local.gateway import ApiGateway, GatewayServer
from local.gateway.throttling import UsagePlanDirectory
from local.iam import function_roles
from local.log_subscriptions import LogSubscriptions
from local.pollers import SqsPoller, create_pollers, stop_pollers
from local.runtime import DEFAULT_IDLE_SECONDS, InvokeResult, LambdaRuntime, print_line
from local.schedules import ScheduleDriver, schedule_events
from local.stack_log import CONNECTIONS, StackLog
from local.template import (
    DEFAULT_STACK_NAME,
    DEFAULT_TEMPLATE,
    REGION,
    StackTemplate,
    TemplateError,
    load_template,
)
from tools.tenant_limits import ensure_usage_key, target_from_state

# The README test points every tool at its own stack's file with this variable.
STATE_FILE_VARIABLE: Final = "PSAP_LOCAL_STATE_FILE"
DEFAULT_STATE_FILE: Final = Path(".local") / "stack.json"
LOG_LEVELS: Final = ("DEBUG", "INFO", "WARNING", "ERROR")
# The demo makes the records the sample events act on as these functions make them (their
# queues are in their own environments, not the Globals): an audit export, a test delivery.
SAMPLE_RECORD_FUNCTIONS: Final = ("AuditExportCreateFunction", "AdminConnectorTestFunction")


def default_state_file() -> Path:
    return Path(os.environ.get(STATE_FILE_VARIABLE) or DEFAULT_STATE_FILE)


def _loopback(host: str) -> str:
    if host == "localhost":
        return host
    try:
        address = ipaddress.ip_address(host)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{host!r} is not an IP address") from error
    if address.version != 4:
        raise argparse.ArgumentTypeError(f"{host}: the local stack listens on IPv4 (127.0.0.1)")
    if not address.is_loopback:
        # The stack has dummy credentials and demo tokens; it must not be reachable from outside.
        raise argparse.ArgumentTypeError(f"{host} is not a loopback address (use 127.0.0.1)")
    return host


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from error
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from error
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} must be more than 0")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="psap-local",
        description="The whole service on 127.0.0.1, from template.yaml (`make run`).",
        epilog="make run passes options through ARGS, e.g. make run ARGS='--port 3001'."
        " Beside a running stack: `psap-local invoke FUNCTION -e EVENT` runs one function"
        " as `sam local invoke` does, `psap-local env-vars` writes SAM's --env-vars file"
        " (docs/local-development.md).",
    )
    parser.add_argument("--host", type=_loopback, default="127.0.0.1", help="loopback address")
    parser.add_argument("--port", type=int, default=3000, help="API port (default 3000)")
    parser.add_argument(
        "--aws-port", type=int, default=0, help="embedded AWS port (default 0: a free port)"
    )
    parser.add_argument(
        "--state-file",
        type=Path,
        default=default_state_file(),
        help=f"where the stack writes its facts (default ${STATE_FILE_VARIABLE} or"
        f" {DEFAULT_STATE_FILE}); one running stack per state file",
    )
    parser.add_argument(
        "--log-file",
        type=Path,
        help="start-up steps, request lines and function logs (default: beside the state"
        " file, stack.log)",
    )
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default="WARNING",
        help="the functions' log level (the template's LogLevel; default WARNING)",
    )
    parser.add_argument("--template", type=Path, default=DEFAULT_TEMPLATE)
    parser.add_argument("--stack-name", default=DEFAULT_STACK_NAME)
    parser.add_argument("--no-demo", action="store_true", help="do not seed the demo tenants")
    parser.add_argument(
        "--concurrency-scale",
        type=_positive_int,
        default=DEFAULT_CONCURRENCY_SCALE,
        help="run the template's concurrency plan at 1/SCALE on this machine: every"
        " ReservedConcurrentExecutions and MaximumConcurrency divided by it (rounded up), and"
        f" an account of {AWS_ACCOUNT_CONCURRENCY}/SCALE (default {DEFAULT_CONCURRENCY_SCALE};"
        " 1 runs it as AWS would)",
    )
    parser.add_argument(
        "--account-concurrency",
        type=_positive_int,
        default=None,
        help="the account's Lambda concurrency limit: invocations running at once across all"
        " functions; reserved concurrency comes out of it, a tenth stays unreserved"
        f" (default {AWS_ACCOUNT_CONCURRENCY}/SCALE: {DEFAULT_ACCOUNT_CONCURRENCY})",
    )
    parser.add_argument(
        "--idle-worker-seconds",
        type=_positive_float,
        default=DEFAULT_IDLE_SECONDS,
        help="a function's worker idle this long is stopped, as Lambda reclaims idle"
        f" environments; the next invoke is a cold start (default {DEFAULT_IDLE_SECONDS:.0f})",
    )
    parser.add_argument(
        "--partition-capacity",
        type=_positive_float,
        default=None,
        metavar="SCALE",
        help="refuse a DynamoDB partition key past 1,000/SCALE WCU or 3,000/SCALE RCU in one"
        " second with ProvisionedThroughputExceededException, as DynamoDB refuses a hot key"
        " past 1,000 WCU / 3,000 RCU (default: metered, never refused; `psap-local capacity`"
        " prints the meter's report; docs/capacity.md)",
    )
    parser.add_argument(
        "--faults",
        type=Path,
        default=None,
        metavar="FILE",
        help="run with the seeded fault plan of FILE: crashes, timeouts and latency at named"
        " fault points, DynamoDB and S3 errors, duplicate SQS deliveries (docs/faults.md)",
    )
    parser.add_argument(
        "--max-workers",
        type=_positive_int,
        default=None,
        help="the most Lambda worker processes alive at once across all functions; an idle"
        " one is stopped to make room, an invoke with none to spare is throttled"
        " (default: no cap but concurrency)",
    )
    parser.add_argument(
        "--cad-receiver-port",
        type=int,
        default=0,
        help="port of the sample CAD webhook receiver (default 0: a free port)",
    )
    return parser


def _with_faults(
    path: Path | None, template: StackTemplate
) -> tuple[FaultPlan | None, StackTemplate]:
    """The fault plan of `--faults` (FaultPlanError when it names what does not exist) and
    the template with its time scale."""
    if path is None:
        return None, template
    faults = load_fault_plan(path, template)
    note(
        f"fault plan {path}: {len(faults.rules)} rules, seed {faults.seed}, timeouts and"
        f" visibility timeouts divided by {faults.time_scale:g}"
    )
    return faults, faults.scaled(template)


def _invoke_command(argv: Sequence[str]) -> int:
    from local.invoke import invoke_main  # noqa: PLC0415 - only the subcommand needs it

    return invoke_main(argv, default_state_file())


def _env_vars_command(argv: Sequence[str]) -> int:
    from local.env_vars import env_vars_main  # noqa: PLC0415 - only the subcommand needs it

    return env_vars_main(argv, default_state_file())


# `psap-local <subcommand>`: the developer tools that work beside a running stack.
_SUBCOMMANDS: Final[Mapping[str, Callable[[Sequence[str]], int]]] = {
    "invoke": _invoke_command,
    "env-vars": _env_vars_command,
    "capacity": lambda words: capacity_main(words),  # noqa: PLW0108 - defined further down
}


class _Console:
    """Where say() writes: the terminal the stack was started from, nothing else."""

    stream: IO[str] = sys.stdout


def say(line: str) -> None:
    """A line for the user, on the console."""
    with contextlib.suppress(ValueError, OSError):
        print(line, file=_Console.stream, flush=True)


def note(line: str) -> None:
    """A line for the log file (start-up steps), where request lines and function logs go."""
    print_line(line)


# The signature is iam_enforcement.Decision, the listener type every decision is told to.
def _report_refusal(  # noqa: PLR0917
    caller: str, action: str, resource: str, allowed: bool
) -> None:
    """IAM refusals go to the log with the role and action: a missing permission in
    template.yaml shows itself here, as it would in CloudTrail on AWS."""
    if not allowed:
        note(f"IAM refused {action} on {resource} to {caller}")


def _environment_of(template: StackTemplate, function_ids: Sequence[str]) -> dict[str, str]:
    environment: dict[str, str] = {}
    for function_id in function_ids:
        function = template.functions.get(function_id)
        environment.update(function.environment if function is not None else {})
    return environment


def _write_state(path: Path, state: Mapping[str, Any]) -> None:
    # Written whole and renamed into place, so a reader never sees half a file.
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
    partial.replace(path)


def _seed_demo(environment: Mapping[str, str]) -> list[dict[str, Any]]:
    """Run local.demo.seed() with the environment a function would have."""
    os.environ.update(environment)
    try:
        from local.demo import seed  # noqa: PLC0415 - demo code loads only when asked for

        facts = seed()
    except Exception:  # the stack still serves the API; the developer sees why there is no demo
        traceback.print_exc()
        say("demo data could not be seeded (the log file says why); serving without demo tenants")
        return []
    tenants: list[dict[str, Any]] = list(facts.get("tenants", []))
    return tenants


def _register_demo_connectors(receiver: CadReceiver, tenants: Sequence[Mapping[str, Any]]) -> None:
    """The sample receiver checks each demo connector's deliveries with its secrets."""
    for tenant in tenants:
        connector = tenant.get("cadConnector")
        if connector:
            receiver.register(
                connector["path"],
                Endpoint(connector["signingSecret"], connector["bearerCredential"]),
            )


def _print_tenants(tenants: Sequence[Mapping[str, Any]], base_url: str) -> None:
    for tenant in tenants:
        say(f"tenant {tenant.get('id')}: {tenant.get('name')}")
        credentials: Mapping[str, str] = tenant.get("credentials") or {}
        for label, token in credentials.items():
            say(f"  {label:<12} {token}")
        admin = credentials.get("admin")
        if admin:
            say(
                f'  curl -s -H "Authorization: Bearer {admin}" {base_url}/api/v1/external/knowledge'
            )
    say(f"  curl -s {base_url}/api/v1/external/openapi.json")


_Handler = Callable[[int, FrameType | None], Any] | int | None


class _Interrupted(Exception):
    """SIGINT or SIGTERM: stop starting up, or stop serving."""


def _interrupt(_signal: int, _frame: FrameType | None) -> None:
    raise _Interrupted


def _operator_facts(endpoint_url: str) -> dict[str, str]:
    return {
        "awsEndpointUrl": endpoint_url,
        "awsAccessKeyId": OPERATOR_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        "awsSecretAccessKey": OPERATOR_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        "region": REGION,
    }


def _meter_partition_capacity(scale: float | None) -> None:
    """The capacity report covers what the stack serves, not its start-up and demo seeding
    (bulk writes a real deployment would not make in one second either); from here on a hot
    key is refused if a scale was asked for."""
    partition_capacity.METER.reset()
    partition_capacity.METER.enforce(scale, log=note)
    if scale is not None:
        wcu, rcu = partition_capacity.METER.limits or (0.0, 0.0)
        note(f"DynamoDB partition capacity enforced: {wcu:g} WCU / {rcu:g} RCU per key")


class LocalStack:
    """Everything `psap-local` runs, started and stopped in order."""

    def __init__(self, arguments: argparse.Namespace, log: StackLog) -> None:
        self.arguments = arguments
        self.log = log
        self.aws = EmbeddedAws(arguments.host, arguments.aws_port)
        # Bound first: a taken API port is the likeliest failure and should be instant.
        self.server = GatewayServer(arguments.host, arguments.port)
        self.runtime: LambdaRuntime | None = None
        self.pollers: list[SqsPoller] = []
        # The sample CAD endpoint the demo connectors deliver to (its own loopback port).
        self.cad_receiver = CadReceiver(arguments.host, arguments.cad_receiver_port, log=note)
        self.schedules: ScheduleDriver | None = None
        self.log_subscriptions: LogSubscriptions | None = None

    def start(self) -> dict[str, Any]:
        arguments = self.arguments
        where = f"port {arguments.aws_port}" if arguments.aws_port else "a free port"
        note(f"starting embedded AWS (moto) on {arguments.host}, {where}")
        endpoint_url = self.aws.start()
        note(f"embedded AWS listening on {endpoint_url}")
        # Lets the demo connectors deliver over http to the loopback sample receiver.
        local_parameters = {"WebhookLocalDev": "true", "LogLevel": arguments.log_level}
        template = load_template(
            arguments.template,
            stack_name=arguments.stack_name,
            sqs_endpoint=endpoint_url,
            parameter_overrides=local_parameters,
        )
        template = scale_concurrency(template, arguments.concurrency_scale)
        faults, template = _with_faults(arguments.faults, template)
        if arguments.account_concurrency is None:
            arguments.account_concurrency = max(
                1, AWS_ACCOUNT_CONCURRENCY // arguments.concurrency_scale
            )
        # Reservations the account cannot grant stop the stack before anything is created.
        AccountConcurrency.for_template(template, arguments.account_concurrency)
        routes = sum(len(function.api_events) for function in template.functions.values())
        note(
            f"loaded {arguments.template.name}: {len(template.functions)} functions,"
            f" {routes} API routes, {sum(1 for _ in template.sqs_events())} SQS event sources"
        )
        schedules = schedule_events(arguments.template, template)
        driven = {(event.function_id, event.name) for event in schedules}
        for function in template.functions.values():
            for name, kind in function.ignored_events.items():
                if (function.logical_id, name) not in driven:
                    note(f"  note: {function.logical_id}.{name} ({kind}) is not emulated locally")
        created = create_resources(template, endpoint_url)
        note(created.summary(arguments.template.name))
        roles = function_roles(
            arguments.template,
            stack_name=arguments.stack_name,
            sqs_endpoint=endpoint_url,
            parameter_overrides=local_parameters,
        )
        sessions = iam.set_up(endpoint_url, roles)
        # From here on the embedded AWS refuses what a caller's policies do not allow.
        iam_enforcement.set_enforced(True)
        iam_enforcement.listen(_report_refusal)
        note(f"created {len(roles)} function roles from the SAM-translated template; IAM enforced")
        # The template's log subscriptions (the audit writer) get their functions' lines.
        self.log_subscriptions = LogSubscriptions(template, self._invoke, note)
        self.runtime = LambdaRuntime(
            template,
            endpoint_url,
            account_concurrency=arguments.account_concurrency,
            idle_seconds=arguments.idle_worker_seconds,
            # Metric lines to their own file; everything else a function prints to the log.
            log=self.log.function_output,
            log_for=self.log_subscriptions.sink_for,
            credentials={
                function_id: session.environment() for function_id, session in sessions.items()
            },
            extra_environment=(
                {
                    function_id: faults.worker_environment(function_id)
                    for function_id in template.functions
                }
                if faults is not None
                else None
            ),
            max_workers=arguments.max_workers,
        )
        self.log_subscriptions.start()
        note(f"started {self.log_subscriptions.count} log subscriptions")
        gateway = ApiGateway(
            template,
            self.runtime.invoke,
            usage_plans=UsagePlanDirectory(lambda: apigateway_client(endpoint_url)),
        )
        self.server.start(gateway)
        note(f"gateway listening on {self.server.url}")
        self.pollers = create_pollers(
            template,
            endpoint_url,
            self.runtime.invoke,
            batches=self.log.batch,
            headroom=self.runtime.has_headroom,
            duplicate=faults.duplicates if faults is not None else None,
        )
        for poller in self.pollers:
            poller.start()
        note(
            f"started {len(self.pollers)} queue pollers"
            f" ({sum(poller.concurrency for poller in self.pollers)} concurrent batches at most);"
            f" account concurrency {arguments.account_concurrency},"
            f" {self.runtime.concurrency.unreserved_limit} unreserved"
        )
        self.schedules = ScheduleDriver(schedules, self.runtime.invoke)
        self.schedules.start()
        note(f"started {len(schedules)} schedules")
        self.cad_receiver.start()
        note(f"sample CAD receiver listening on {self.cad_receiver.base_url}")
        tenants: list[dict[str, Any]] = []
        if not arguments.no_demo:
            note("seeding demo data")
            tenants = _seed_demo(
                {
                    **template.globals_environment,
                    **_environment_of(template, SAMPLE_RECORD_FUNCTIONS),
                    **local_aws_environment(endpoint_url),
                    RECEIVER_URL_VARIABLE: self.cad_receiver.base_url,
                }
            )
            _register_demo_connectors(self.cad_receiver, tenants)
        facts = {
            "usagePlans": created.usage_plans,
            "apis": {
                api.logical_id: {"id": api.api_id, "stage": api.stage_name}
                for api in template.apis.values()
            },
        }
        plan_target = target_from_state({**facts, **_operator_facts(endpoint_url)})
        if plan_target is not None:
            # Each demo tenant's key in the default plan, as `psap-admin tenant create` does.
            for tenant in tenants:
                ensure_usage_key(plan_target, int(tenant["id"]))
        _meter_partition_capacity(arguments.partition_capacity)
        return {
            **facts,
            "baseUrl": self.server.url,
            "awsEndpointUrl": endpoint_url,
            # The local operator's key (full access), for the admin CLI and the AWS CLI.
            "awsAccessKeyId": OPERATOR_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            "awsSecretAccessKey": OPERATOR_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            "region": REGION,
            "stackName": template.stack_name,
            # The template parameters the stack runs with, for `psap-local invoke`.
            "parameterOverrides": local_parameters,
            "resources": template.physical_resources(),
            # Each function's role session (what its workers run with), for `psap-local
            # invoke` and `psap-local env-vars`: assuming a role is the Lambda service's act,
            # which only the stack may do (the roles trust lambda.amazonaws.com alone).
            "functionSessions": {
                function_id: session.environment() for function_id, session in sessions.items()
            },
            "tenants": tenants,
            "cadReceiverUrl": self.cad_receiver.base_url,
            "partitionCapacityScale": arguments.partition_capacity,
        }

    def _invoke(self, function_id: str, event: Any) -> InvokeResult:
        if self.runtime is None:
            return InvokeResult(status="error", error_type="Runtime.Stopped")
        return self.runtime.invoke(function_id, event)

    def stop(self) -> None:
        if self.schedules is not None:
            self.schedules.stop()
        if self.log_subscriptions is not None:
            self.log_subscriptions.stop()
        stop_pollers(self.pollers)
        self.cad_receiver.stop()
        self.server.stop()
        if self.runtime is not None:
            self.runtime.shutdown()
        self.aws.stop()
        note(CONNECTIONS.summary())
        self.log.close()


@contextlib.contextmanager
def _signal_handlers() -> Iterator[Callable[[_Handler], None]]:
    """Lets main() choose what SIGINT/SIGTERM do; the caller's handlers come back at the end."""
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.getsignal(sig) for sig in signals}

    def handle_with(handler: _Handler) -> None:
        for sig in signals:
            signal.signal(sig, handler)

    try:
        yield handle_with
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _say_port_in_use(error: PortInUseError, flag: str) -> None:
    say(
        f"error: port {error.port} on {error.host} is already in use;"
        f" stop whatever holds it or choose another port with {flag} <port>"
    )


class _StackRunning(Exception):
    """Another stack holds the state file's lock."""

    def __init__(self, holder: str) -> None:
        super().__init__(holder)
        self.holder = holder


@contextlib.contextmanager
def _state_file_lock(state_file: Path) -> Iterator[None]:
    """One running stack per state file: held for the stack's life, released by the kernel
    when the process ends however it ends, so a crashed stack never blocks the next one."""
    state_file.parent.mkdir(parents=True, exist_ok=True)
    # The lock file is never deleted: deleting it would let two stacks lock two files.
    with state_file.with_name(state_file.name + ".lock").open("a+", encoding="utf-8") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            raise _StackRunning(lock.read().strip() or "unknown") from None
        lock.seek(0)
        lock.truncate()
        lock.write(f"{os.getpid()}\n")
        lock.flush()
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@contextlib.contextmanager
def _output_to(log_file: Path) -> Iterator[None]:
    """Everything printed while the stack runs (any thread, any module) goes to the log file;
    say() keeps the console for what the user must read."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    stdout, stderr = sys.stdout, sys.stderr
    with log_file.open("w", encoding="utf-8", errors="replace", buffering=1) as log:
        sys.stdout = sys.stderr = log
        try:
            yield
        finally:
            sys.stdout, sys.stderr = stdout, stderr


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in _SUBCOMMANDS:
        return _SUBCOMMANDS[argv[0]](argv[1:])
    arguments = _parser().parse_args(argv)
    _Console.stream = sys.stdout
    state_file: Path = arguments.state_file
    log_file: Path = arguments.log_file or state_file.with_suffix(".log")
    try:
        with _state_file_lock(state_file):
            # Ours now: a file left by a stack that died would tell tools it is up.
            state_file.unlink(missing_ok=True)
            say(f"starting the local stack; its log: {log_file}")
            with _output_to(log_file):
                return _serve(arguments, state_file, log_file)
    except _StackRunning as running:
        say(
            f"error: a local stack is already running with {state_file} (pid {running.holder});"
            " stop it with Ctrl-C in its terminal, or start another one with"
            " --port <port> --state-file <file>"
        )
        return 1


def _serve(arguments: argparse.Namespace, state_file: Path, log_file: Path) -> int:
    log = StackLog(log_file, level=arguments.log_level, console=print_line)
    log.open()
    try:
        stack = LocalStack(arguments, log)
    except PortInUseError as error:
        log.close()
        _say_port_in_use(error, "--port")
        return 1
    with _signal_handlers() as handle_signals_with:
        handle_signals_with(_interrupt)
        try:
            return _run(stack, state_file, log_file)
        except _Interrupted:
            say("stopping")
            return 0
        finally:
            # A second Ctrl-C while shutting down must not leave a traceback or half a shutdown.
            handle_signals_with(signal.SIG_IGN)
            stack.stop()
            state_file.unlink(missing_ok=True)
            say("stopped")


def _run(stack: LocalStack, state_file: Path, log_file: Path) -> int:
    """Start everything, publish the state file and serve until interrupted."""
    try:
        state = stack.start()
    except PortInUseError as error:
        _say_port_in_use(error, "--aws-port")
        return 1
    except (TemplateError, ConcurrencyConfigurationError) as error:
        say(f"error: {stack.arguments.template.name}: {error}")
        return 1
    except FaultPlanError as error:
        say(f"error: {error}")
        return 1
    _write_state(state_file, state)
    _print_tenants(state["tenants"], state["baseUrl"])
    say(f'state written to {state_file}; as shell variables: eval "$(.venv/bin/psap-local-env)"')
    say(
        f"request lines and function logs ({stack.arguments.log_level} and above,"
        f" --log-level to change): tail -f {log_file}"
    )
    say(f"ready on {state['baseUrl']} (Ctrl-C stops)")
    threading.Event().wait()
    return 0


def shell_variables(state: Mapping[str, Any]) -> dict[str, str]:
    """The facts a README block needs, by the names the README uses."""
    variables = {
        "BASE_URL": state["baseUrl"],
        "API": f"{state['baseUrl']}/api/v1/external",
        # The Model Context Protocol endpoint an AI assistant connects to (docs/mcp.md).
        "MCP_URL": f"{state['baseUrl']}/mcp",
        "CAD_RECEIVER_URL": state.get("cadReceiverUrl", ""),
    }
    tenants: Sequence[Mapping[str, Any]] = state.get("tenants") or []
    if tenants:
        tenant = tenants[0]
        credentials: Mapping[str, str] = tenant.get("credentials") or {}
        data: Mapping[str, Any] = tenant.get("tenantData") or {}
        connector: Mapping[str, Any] = tenant.get("cadConnector") or {}
        facts = {
            "TENANT": tenant.get("id"),
            "TOKEN": credentials.get("admin"),
            "READONLY_TOKEN": credentials.get("readOnly"),
            "NO_KNOWLEDGE_TOKEN": credentials.get("noKnowledge"),
            "CAD": credentials.get("cad"),
            "CONNECTOR": connector.get("connectorId"),
            "TRAINEE_ID": data.get("traineeId"),
            "EVALUATED_USER_ID": data.get("evaluatedUserId"),
            "INCIDENT_ID": _first(data.get("incidentIds")),
            "EVENT_ID": _first(data.get("eventIds")),
        }
        variables.update({name: str(value) for name, value in facts.items() if value})
    if len(tenants) > 1:
        # The second demo tenant, to see isolation: its token never reads tenant 1's data.
        other = tenants[1]
        variables["TENANT2"] = str(other.get("id"))
        variables["TENANT2_TOKEN"] = str((other.get("credentials") or {}).get("admin"))
    return variables


def _first(values: Any) -> Any:
    return values[0] if isinstance(values, list) and values else None


def env_main(argv: Sequence[str] | None = None) -> int:
    """`psap-local-env`: the running stack's facts as shell assignments, for eval."""
    parser = argparse.ArgumentParser(
        prog="psap-local-env",
        description="The running local stack's URLs, demo credentials and ids as shell"
        ' variables: eval "$(.venv/bin/psap-local-env)"',
    )
    parser.add_argument("--state-file", type=Path, default=default_state_file())
    arguments = parser.parse_args(argv)
    try:
        state = json.loads(arguments.state_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        print(
            f"error: no local stack is running ({arguments.state_file} does not exist);"
            " start one with `make run`",
            file=sys.stderr,
        )
        return 1
    for name, value in shell_variables(state).items():
        print(f"{name}={shlex.quote(value)}")
    return 0


def capacity_main(argv: Sequence[str] | None = None) -> int:
    """`psap-local capacity`: the running stack's DynamoDB partition capacity report."""
    parser = argparse.ArgumentParser(
        prog="psap-local capacity",
        description="The running local stack's DynamoDB partition capacity report as JSON: per"
        " table and key pattern, the peak WCU and RCU one key reached in one second and the"
        " requests throttled (docs/capacity.md)",
    )
    parser.add_argument("--state-file", type=Path, default=default_state_file())
    parser.add_argument(
        "--seconds",
        type=int,
        default=0,
        help="add the last N seconds of the meter's per-second record (per key and operation)",
    )
    parser.add_argument(
        "--reset", action="store_true", help="print the report and start a new measurement"
    )
    arguments = parser.parse_args(argv)
    try:
        state = json.loads(arguments.state_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        print(
            f"error: no local stack is running ({arguments.state_file} does not exist);"
            " start one with `make run`",
            file=sys.stderr,
        )
        return 1
    try:
        report = partition_capacity.fetch_report(
            str(state["awsEndpointUrl"]), seconds=arguments.seconds, reset=arguments.reset
        )
    except OSError as error:
        print(f"error: the local stack does not answer ({error})", file=sys.stderr)
        return 1
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
