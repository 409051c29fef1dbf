"""`python -m local.stack`: the whole service on 127.0.0.1, from template.yaml.

Starts moto as the embedded AWS, creates the template's tables, queues and buckets, binds the
API gateway (port 3000 like `sam local start-api`), starts the SQS pollers, seeds the demo
tenants, writes the state file other tools read (.local/stack.json) and serves until Ctrl-C
or SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import json
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, Final

from local import iam, iam_enforcement
from local.aws import (
    OPERATOR_CREDENTIALS,
    EmbeddedAws,
    PortInUseError,
    create_resources,
    local_aws_environment,
)
from local.cad_receiver import CadReceiver, Endpoint
from local.demo_cad import RECEIVER_URL_VARIABLE
from local.gateway import ApiGateway, GatewayServer
from local.iam import function_roles
from local.log_subscriptions import LogSubscriptions
from local.pollers import SqsPoller, create_pollers, stop_pollers
from local.runtime import InvokeResult, LambdaRuntime, print_line
from local.schedules import ScheduleDriver, schedule_events
from local.template import (
    DEFAULT_STACK_NAME,
    DEFAULT_TEMPLATE,
    REGION,
    TemplateError,
    load_template,
)

DEFAULT_STATE_FILE: Final = Path(".local") / "stack.json"
# Lets the demo connectors deliver over http to the loopback sample receiver.
LOCAL_PARAMETERS: Final = {"WebhookLocalDev": "true"}


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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m local.stack", description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument("--host", type=_loopback, default="127.0.0.1", help="loopback address")
    parser.add_argument("--port", type=int, default=3000, help="API port (default 3000)")
    parser.add_argument(
        "--aws-port", type=int, default=0, help="embedded AWS port (default 0: a free port)"
    )
    parser.add_argument("--state-file", type=Path, default=DEFAULT_STATE_FILE)
    parser.add_argument("--template", type=Path, default=DEFAULT_TEMPLATE)
    parser.add_argument("--stack-name", default=DEFAULT_STACK_NAME)
    parser.add_argument("--no-demo", action="store_true", help="do not seed the demo tenants")
    parser.add_argument(
        "--cad-receiver-port",
        type=int,
        default=0,
        help="port of the sample CAD webhook receiver (default 0: a free port)",
    )
    return parser


def say(line: str) -> None:
    print_line(line)


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
        say("demo data could not be seeded (see above); serving without demo tenants")
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


class LocalStack:
    """Everything `python -m local.stack` runs, started and stopped in order."""

    def __init__(self, arguments: argparse.Namespace) -> None:
        self.arguments = arguments
        self.aws = EmbeddedAws(arguments.host, arguments.aws_port)
        # Bound first: a taken API port is the likeliest failure and should be instant.
        self.server = GatewayServer(arguments.host, arguments.port)
        self.runtime: LambdaRuntime | None = None
        self.pollers: list[SqsPoller] = []
        # The sample CAD endpoint the demo connectors deliver to (its own loopback port).
        self.cad_receiver = CadReceiver(arguments.host, arguments.cad_receiver_port, log=say)
        self.schedules: ScheduleDriver | None = None
        self.log_subscriptions: LogSubscriptions | None = None

    def start(self) -> dict[str, Any]:
        arguments = self.arguments
        where = f"port {arguments.aws_port}" if arguments.aws_port else "a free port"
        say(f"starting embedded AWS (moto) on {arguments.host}, {where}")
        endpoint_url = self.aws.start()
        say(f"embedded AWS listening on {endpoint_url}")
        template = load_template(
            arguments.template,
            stack_name=arguments.stack_name,
            sqs_endpoint=endpoint_url,
            parameter_overrides=LOCAL_PARAMETERS,
        )
        routes = sum(len(function.api_events) for function in template.functions.values())
        say(
            f"loaded {arguments.template.name}: {len(template.functions)} functions,"
            f" {routes} API routes, {sum(1 for _ in template.sqs_events())} SQS event sources"
        )
        schedules = schedule_events(arguments.template, template)
        driven = {(event.function_id, event.name) for event in schedules}
        for function in template.functions.values():
            for name, kind in function.ignored_events.items():
                if (function.logical_id, name) not in driven:
                    say(f"  note: {function.logical_id}.{name} ({kind}) is not emulated locally")
        say(create_resources(template, endpoint_url).summary(arguments.template.name))
        roles = function_roles(
            arguments.template,
            stack_name=arguments.stack_name,
            sqs_endpoint=endpoint_url,
            parameter_overrides=LOCAL_PARAMETERS,
        )
        sessions = iam.set_up(endpoint_url, roles)
        # From here on the embedded AWS refuses what a caller's policies do not allow.
        iam_enforcement.set_enforced(True)
        say(f"created {len(roles)} function roles from the SAM-translated template; IAM enforced")
        # The template's log subscriptions (the audit writer) get their functions' lines.
        self.log_subscriptions = LogSubscriptions(template, self._invoke, say)
        self.runtime = LambdaRuntime(
            template,
            endpoint_url,
            log_for=self.log_subscriptions.sink_for,
            credentials={
                function_id: session.environment() for function_id, session in sessions.items()
            },
        )
        self.log_subscriptions.start()
        say(f"started {self.log_subscriptions.count} log subscriptions")
        gateway = ApiGateway(template, self.runtime.invoke)
        self.server.start(gateway)
        say(f"gateway listening on {self.server.url}")
        self.pollers = create_pollers(template, endpoint_url, self.runtime.invoke)
        for poller in self.pollers:
            poller.start()
        say(f"started {len(self.pollers)} queue pollers")
        self.schedules = ScheduleDriver(schedules, self.runtime.invoke)
        self.schedules.start()
        say(f"started {len(schedules)} schedules")
        self.cad_receiver.start()
        say(f"sample CAD receiver listening on {self.cad_receiver.base_url}")
        tenants: list[dict[str, Any]] = []
        if not arguments.no_demo:
            say("seeding demo data")
            tenants = _seed_demo(
                {
                    **template.globals_environment,
                    **local_aws_environment(endpoint_url),
                    RECEIVER_URL_VARIABLE: self.cad_receiver.base_url,
                }
            )
            _register_demo_connectors(self.cad_receiver, tenants)
        return {
            "baseUrl": self.server.url,
            "awsEndpointUrl": endpoint_url,
            # The local operator's key (full access), for the admin CLI and the AWS CLI.
            "awsAccessKeyId": OPERATOR_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            "awsSecretAccessKey": OPERATOR_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            "region": REGION,
            "stackName": template.stack_name,
            "resources": template.physical_resources(),
            "tenants": tenants,
            "cadReceiverUrl": self.cad_receiver.base_url,
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


def main(argv: Sequence[str] | None = None) -> int:
    arguments = _parser().parse_args(argv)
    state_file: Path = arguments.state_file
    # A state file from an earlier run would tell waiting tools the stack is up when it is not.
    state_file.unlink(missing_ok=True)
    try:
        stack = LocalStack(arguments)
    except PortInUseError as error:
        _say_port_in_use(error, "--port")
        return 1
    with _signal_handlers() as handle_signals_with:
        handle_signals_with(_interrupt)
        try:
            return _run(stack, state_file)
        except _Interrupted:
            say("stopping")
            return 0
        finally:
            # A second Ctrl-C while shutting down must not leave a traceback or half a shutdown.
            handle_signals_with(signal.SIG_IGN)
            stack.stop()
            state_file.unlink(missing_ok=True)
            say("stopped")


def _run(stack: LocalStack, state_file: Path) -> int:
    """Start everything, publish the state file and serve until interrupted."""
    try:
        state = stack.start()
    except PortInUseError as error:
        _say_port_in_use(error, "--aws-port")
        return 1
    except TemplateError as error:
        say(f"error: {stack.arguments.template.name}: {error}")
        return 1
    _write_state(state_file, state)
    _print_tenants(state["tenants"], state["baseUrl"])
    say(f"state written to {state_file}")
    say("ready")
    threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
