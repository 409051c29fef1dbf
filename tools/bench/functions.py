"""The functions as the in-process sections run them: app.py imported by file path, and the
request context API Gateway adds after the partner authorizer, and the Lambda context."""

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

FUNCTIONS = Path(__file__).resolve().parents[2] / "functions"


def function_module(directory: str, module_name: str, *, register: bool = False) -> ModuleType:
    """functions/<directory>/app.py imported by file path, as a warm container holds it. Set
    the environment first: Powertools reads it at import. `register` puts it in sys.modules."""
    source = FUNCTIONS / directory / "app.py"
    spec = importlib.util.spec_from_file_location(module_name, source)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot import {source}")
    module = importlib.util.module_from_spec(spec)
    if register:
        sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def partner_request_context(tenant: int, permissions: str) -> dict[str, Any]:
    """requestContext of a proxy event after the partner authorizer allowed the bench's
    credential for `tenant`."""
    return {
        "requestId": "bench",
        "authorizer": {
            "tenantId": str(tenant),
            "credentialId": "bench",
            "permissions": permissions,
        },
    }


@dataclass(frozen=True)
class LambdaContext:
    """A handler's context argument: what Powertools and the functions read of it."""

    function_name: str = "bench"
    memory_limit_in_mb: int = 512
    remaining_millis: int = 60_000
    aws_request_id: str = "bench"

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:us-east-1:123456789012:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_millis
