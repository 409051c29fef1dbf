"""One warm Lambda execution environment: imports a handler once, then serves invokes.

Started by local.runtime as `python -P lambda_worker.py --event-fd N --result-fd M` with the
function's environment; PYTHONPATH is the function's code folder plus the shared layer, as
/var/task and /opt/python are on Lambda. Events arrive one JSON document per line on the
event pipe; results leave the same way on the result pipe, so nothing the handler prints can
corrupt them (stdout and stderr are the function's log, which the stack prints).

Standard library only, and no imports from the repository: the handler must find everything
it needs on its own path, as it would in Lambda. The one exception is the local fault
injector (local/fault_worker.py, loaded by path beside this file), and only when the stack
gave the function fault rules (`psap-local --faults`).
"""

from __future__ import annotations

import argparse
import decimal
import importlib
import importlib.util
import json
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from typing import IO, Any

ACCOUNT_ID = "123456789012"


class LambdaContext:
    """The attributes and method of the Lambda Python runtime's context object."""

    def __init__(self, request_id: str, deadline_ms: int) -> None:
        self.function_name = os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "")
        self.function_version = os.environ.get("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
        self.memory_limit_in_mb = int(os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128"))
        region = os.environ.get("AWS_REGION", "us-east-1")
        self.invoked_function_arn = (
            f"arn:aws:lambda:{region}:{ACCOUNT_ID}:function:{self.function_name}"
        )
        self.aws_request_id = request_id
        self.log_group_name = os.environ.get("AWS_LAMBDA_LOG_GROUP_NAME", "")
        self.log_stream_name = os.environ.get("AWS_LAMBDA_LOG_STREAM_NAME", "")
        self.identity = None
        self.client_context = None
        self._deadline_ms = deadline_ms

    def get_remaining_time_in_millis(self) -> int:
        return max(0, self._deadline_ms - int(time.time() * 1000))


def _decimal_as_number(value: object) -> object:
    # The Lambda runtime serialises Decimal (what boto3 returns for DynamoDB numbers) this way.
    if isinstance(value, decimal.Decimal):
        return float(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _error(error_type: str, message: str, stack: list[str] | None = None) -> dict[str, Any]:
    return {
        "ok": False,
        "errorType": error_type,
        "errorMessage": message,
        "stackTrace": stack or [],
    }


def _exception_error(error: BaseException) -> dict[str, Any]:
    stack = traceback.format_list(traceback.extract_tb(error.__traceback__))
    # Lambda writes unhandled errors to the function's log; so does the local stack.
    print(f"[ERROR] {type(error).__name__}: {error}", file=sys.stderr)
    traceback.print_exception(error, file=sys.stderr)
    return _error(type(error).__name__, str(error), stack)


def _load_handler(handler: str) -> Callable[[Any, Any], Any]:
    module_name, _, function_name = handler.rpartition(".")
    module = importlib.import_module(module_name)
    function: Callable[[Any, Any], Any] = getattr(module, function_name)
    return function


def _write(results: IO[bytes], message: dict[str, Any]) -> None:
    try:
        line = json.dumps(message, default=_decimal_as_number)
    except (TypeError, ValueError) as error:
        line = json.dumps(_error("Runtime.MarshalError", f"Unable to marshal response: {error}"))
    results.write(line.encode() + b"\n")
    results.flush()


def _fault_injector() -> Any:
    """The fault rules of this function (local/faults.py), or None without any."""
    rules = os.environ.get("PSAP_LOCAL_FAULT_RULES")
    if not rules:
        return None
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fault_worker.py")
    spec = importlib.util.spec_from_file_location("_psap_local_fault_worker", path)
    if spec is None or spec.loader is None:
        raise ImportError(path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.from_environment(rules, os.environ["PSAP_LOCAL_FAULT_STATE"])


def serve(events: IO[bytes], results: IO[bytes], handler_name: str) -> None:
    started = time.monotonic()
    faults = _fault_injector()
    handler: Callable[[Any, Any], Any] | None = None
    init_error: dict[str, Any] | None = None
    try:
        handler = _load_handler(handler_name)
    except Exception as error:  # any import failure is the function's init error
        init_error = _exception_error(error)
        init_error["errorType"] = (
            "Runtime.ImportModuleError"
            if isinstance(error, ImportError)
            else f"Runtime.{type(error).__name__}"
        )
        init_error["errorMessage"] = f"Unable to import module {handler_name!r}: {error}"
    _write(results, {"ready": True, "initMs": round((time.monotonic() - started) * 1000, 1)})
    for line in events:
        request = json.loads(line)
        if handler is None:
            _write(results, init_error or _error("Runtime.HandlerNotFound", handler_name))
            continue
        context = LambdaContext(request["requestId"], int(request["deadlineMs"]))
        if faults is not None:
            faults.at_invoke()
        try:
            result = handler(request["event"], context)
        except Exception as error:  # the handler's errors are the invoke's result
            _write(results, _exception_error(error))
        else:
            _write(results, {"ok": True, "result": result})
        finally:
            sys.stdout.flush()
            sys.stderr.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--event-fd", type=int, required=True)
    parser.add_argument("--result-fd", type=int, required=True)
    arguments = parser.parse_args()
    # Ctrl-C in the terminal reaches the whole process group; the stack decides when we stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with (
        os.fdopen(arguments.event_fd, "rb") as events,
        os.fdopen(arguments.result_fd, "wb") as results,
    ):
        serve(events, results, os.environ["_HANDLER"])


if __name__ == "__main__":
    main()
