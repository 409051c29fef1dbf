"""Generates the one OpenAPI 3 document of the whole interface.

Every API function declares its routes and models on its own Powertools resolver; this loads
each functions/*/app.py as Lambda would and merges their schemas with Powertools' OpenAPI
merge (its own discovery only recognises a literal resolver call). Then it adds what is ours: the
ErrorInfo error responses (Powertools would advertise 422, we answer 400), the permission
each operation needs (psap.http.operations) and the bearer security scheme.

    python -m tools.openapi --write   # regenerate the committed copy
    python -m tools.openapi --check   # exit 1 when the committed copy is stale
"""

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.event_handler.openapi.merge import OpenAPIMerge
from aws_lambda_powertools.event_handler.openapi.models import HTTPBearer, Server

from psap.http.operations import operation_for

ROOT = Path(__file__).resolve().parent.parent
DOCUMENT = ROOT / "functions" / "api_docs" / "openapi.json"

DESCRIPTION = """\
Data interface of the emergency-communications service: knowledge entries, training,
quality assurance, users, incidents and events. Every call is scoped to the tenant of the
bearer credential; an id of another tenant answers 404, exactly like an id that does not
exist.

Errors: every error body is ErrorInfo `{"info", "reason"}`. `info` is a sentence for people
(it names the offending parameter or field); `reason` is a stable machine code:
UNAUTHENTICATED (401), FORBIDDEN (403), INVALID_PARAMETER / INVALID_INPUT (400), NOT_FOUND
(404), CONFLICT (409), SERVICE_UNAVAILABLE (503, retry), INTERNAL_ERROR (500).

Timestamps (`<ts>`) are ISO 8601 UTC with milliseconds, e.g. `2026-11-23T02:32:15.123Z`;
dates are `YYYY-MM-DD`. Absent values are `null`, never omitted.

Permissions are carried by the credential, with these wire names: VIEW_KNOWLEDGE,
MANAGE_KNOWLEDGE, MANAGE_PHASES, MANAGE_USERS, BROWSE_EVENTS, MANAGE_EVENTS, VIEW_QA, ADMIN,
RESOURCE_CENTER_PUBLISH. A token lacking an operation's permission gets 403 with
`info` = `Access denied — <names> permission required`. An authorizer answer is cached for
up to 300 seconds per token, so a revoked token may keep working for up to 5 minutes.
"""

_ERROR_STATUSES = {
    "400": "Invalid input: `info` names the parameter or field",
    "401": "Missing or invalid bearer token: `info` = `Authentication required`",
    "403": "The token lacks the operation's permission",
    "404": "Not found, or belongs to another tenant",
    "503": "The data store is temporarily unavailable; retry",
}


def _lambda_like_environment() -> None:
    # Importing a function module reads its configuration; the values do not matter here.
    for name, value in {
        "AWS_DEFAULT_REGION": "us-east-1",
        "AUTH_TABLE": "openapi",
        "KNOWLEDGE_TABLE": "openapi",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "Psap",
        "POWERTOOLS_SERVICE_NAME": "psap-api",
    }.items():
        os.environ.setdefault(name, value)


def api_resolvers() -> list[APIGatewayRestResolver]:
    """The resolver (`app`) of every function under functions/, loaded as Lambda would."""
    resolvers = []
    for source in sorted((ROOT / "functions").glob("*/app.py")):
        name = f"psap_function_{source.parent.name}"
        spec = importlib.util.spec_from_file_location(name, source)
        if spec is None or spec.loader is None:
            raise SystemExit(f"cannot load {source}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        resolver = getattr(module, "app", None)
        if isinstance(resolver, APIGatewayRestResolver):
            resolvers.append(resolver)
    return resolvers


def build_document() -> dict[str, Any]:
    _lambda_like_environment()
    merge = OpenAPIMerge(
        title="Tenant Data, Knowledge and CAD Connection Service",
        version="1.0",
        description=DESCRIPTION,
        servers=[Server(url="/", description="The API's base URL (see the stack output ApiUrl)")],
        security_schemes={"bearer": HTTPBearer(description="A partner credential's token")},
        on_conflict="error",
    )
    for resolver in api_resolvers():
        merge.add_schema(
            resolver.get_openapi_schema().model_dump(mode="json", by_alias=True, exclude_none=True)
        )
    document: dict[str, Any] = json.loads(merge.get_openapi_json_schema())
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    for generic in ("HTTPValidationError", "ValidationError", "ResponseValidationError"):
        schemas.pop(generic, None)
    schemas["ErrorInfo"] = {
        "title": "ErrorInfo",
        "type": "object",
        "properties": {"info": {"type": "string"}, "reason": {"type": "string"}},
        "required": ["info", "reason"],
    }
    for path, methods in document.get("paths", {}).items():
        for method, spec in methods.items():
            operation = operation_for(method, path)
            if operation is None:
                raise SystemExit(f"{method.upper()} {path} is missing from psap.http.operations")
            spec["operationId"] = operation.operation_id
            spec["description"] = (
                spec.get("description", "") + "\n\n" + operation.requirement_text
            ).strip()
            responses = spec.setdefault("responses", {})
            # Powertools advertises 422 for validation errors (we answer 400); an operation's
            # own 422 (CAD intake: an idempotency key reused) stays.
            if "HTTPValidationError" in json.dumps(responses.get("422", {})):
                responses.pop("422")
            if operation.public:
                spec["security"] = []
                continue
            spec["security"] = [{"bearer": []}]
            spec["x-permissions"] = [permission.value for permission in operation.any_of]
            for status, text in _ERROR_STATUSES.items():
                responses.setdefault(
                    status,
                    {
                        "description": text,
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/ErrorInfo"}
                            }
                        },
                    },
                )
    return document


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="regenerate the committed copy")
    action.add_argument("--check", action="store_true", help="fail when the copy is stale")
    arguments = parser.parse_args()
    text = render(build_document())
    if arguments.write:
        DOCUMENT.write_text(text, encoding="utf-8")
        print(f"wrote {DOCUMENT.relative_to(ROOT)}")
        return 0
    current = DOCUMENT.read_text(encoding="utf-8") if DOCUMENT.exists() else ""
    if current != text:
        print(f"{DOCUMENT.relative_to(ROOT)} is stale: run `make openapi`", file=sys.stderr)
        return 1
    print(f"{DOCUMENT.relative_to(ROOT)} is up to date")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
