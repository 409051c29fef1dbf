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
import re
import sys
from pathlib import Path
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.event_handler.openapi.merge import OpenAPIMerge
from aws_lambda_powertools.event_handler.openapi.models import HTTPBearer, Server

from psap.budgets import budget_for
from psap.http.body import BodyRule
from psap.http.operations import operation_for
from psap.media.models import RadioTrafficUpload
from psap.models import INT32_MAX, INT64_MAX
from psap.text import FREE_TEXT_PATTERN, SINGLE_LINE_PATTERN, TEXT_POLICY_DESCRIPTION

ROOT = Path(__file__).resolve().parent.parent
DOCUMENT = ROOT / "functions" / "api_docs" / "openapi.json"

DESCRIPTION_TEMPLATE = """\
Data interface of the emergency-communications service: knowledge entries, training,
quality assurance, users, incidents and events. Every call is scoped to the tenant of the
bearer credential; an id of another tenant answers 404, exactly like an id that does not
exist.

Errors: every error body is ErrorInfo `{"info", "reason"}`. `info` is a sentence for people
(it names the offending parameter or field); `reason` is a stable machine code:
UNAUTHENTICATED (401), FORBIDDEN (403), INVALID_PARAMETER / INVALID_INPUT (400),
INVALID_ENCODING, INVALID_JSON, TOO_DEEP, INVALID_TEXT (400, the request body), NOT_FOUND
(404), CONFLICT (409), PAYLOAD_TOO_LARGE (413), UNSUPPORTED_MEDIA_TYPE (415),
SERVICE_UNAVAILABLE (503, retry), INTERNAL_ERROR (500).

Request bodies: each operation names the Content-Types it accepts (else 415) and its size
limit (else 413); bodies must be UTF-8. {text_policy} Integers are bounded by their
format (int32: at most 2147483647, int64: at most 9223372036854775807); dates and
date-times are ISO 8601 strings, never numbers.

Timestamps (`<ts>`) are ISO 8601 UTC with milliseconds, e.g. `2026-11-23T02:32:15.123Z`;
dates are `YYYY-MM-DD`. Absent values are `null`, never omitted.

Permissions are carried by the credential, with these wire names: VIEW_KNOWLEDGE,
MANAGE_KNOWLEDGE, MANAGE_PHASES, MANAGE_USERS, BROWSE_EVENTS, MANAGE_EVENTS, VIEW_QA, ADMIN,
RESOURCE_CENTER_PUBLISH. A token lacking an operation's permission gets 403 with
`info` = `Access denied — <names> permission required`. An authorizer answer is cached for
up to 60 seconds per token and operation, so a revoked token may keep working for up to a
minute on the data interface.

Rate limits: every operation draws on one of the tenant's budgets (its `x-budget`): reads,
writes (knowledge), search (resource-center search and MCP), bulk (exports and uploads),
admin (the tenant admin API) and cad (CAD intake, its own). Each budget is a token bucket
per tenant and operation: `q` requests per second with a burst of `burst`. Every answer
says its policy in `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers, e.g.
`"reads";q=100;w=1;burst=200`). Past it the answer is 429 ErrorInfo with reason
`RATE_LIMITED_<BUDGET>` (`RATE_LIMITED` alone for the API-wide limit), an integer
`Retry-After` in seconds and `RateLimit: "<budget>";r=0;t=<seconds>`. The body is also a
JSON-RPC error response, so MCP clients read the same. Defaults and a tenant's own limits:
docs/limits.md.
"""

DESCRIPTION = DESCRIPTION_TEMPLATE.replace("{text_policy}", TEXT_POLICY_DESCRIPTION)

_ERROR_STATUSES = {
    "400": "Invalid input: `info` names the parameter or field",
    "401": "Missing or invalid bearer token: `info` = `Authentication required`",
    "403": "The token lacks the operation's permission",
    "404": "Not found, or belongs to another tenant",
    "503": "The data store is temporarily unavailable; retry",
}
_BODY_STATUSES = {
    "413": "The body is over the operation's size limit",
    "415": "The Content-Type is not one the operation accepts, or not UTF-8",
}
# An empty file is refused (400), so the contract says at least one character.
_FILE = {"type": "string", "minLength": 1, "description": "The file's text (UTF-8)"}
# Operations that read their body themselves (a file, or a CAD event in several shapes):
# the schema of each accepted media type. JSON routes get theirs from their models.
_RAW_BODY_SCHEMAS: dict[str, dict[str, dict[str, Any]]] = {
    "submitCadIncident": {
        media_type: {"$ref": "#/components/schemas/CadIncidentEvent"}
        for media_type in ("application/json", "application/cloudevents+json")
    },
    "uploadIncidents": {
        "text/csv": _FILE,
        "application/x-ndjson": _FILE,
        "application/jsonl": _FILE,
    },
    "uploadRadioTraffic": {"application/x-subrip": _FILE},
    "uploadRadioTrafficJson": {
        "application/json": {"$ref": "#/components/schemas/RadioTrafficUpload"}
    },
}


CAD_INCIDENT_EVENT = {
    "title": "CadIncidentEvent",
    "type": "object",
    "description": "A CloudEvents 1.0 structured event whose `data` is a NENA EIDO incident "
    "or a flat incident (see the operation's description). Unknown attributes are refused.",
    "required": ["specversion", "id", "source", "type", "time", "data"],
    "properties": {
        "specversion": {"type": "string", "enum": ["1.0"]},
        "id": {"type": "string", "minLength": 1},
        "source": {"type": "string", "minLength": 1},
        "type": {"type": "string"},
        "time": {"type": "string", "format": "date-time"},
        "subject": {"type": "string"},
        "sequence": {"type": "integer", "minimum": 0},
        "tenantId": {"type": "integer", "format": "int64"},
        "data": {"type": "object"},
    },
}


def _request_body(operation_id: str, rule: BodyRule) -> dict[str, Any]:
    schemas = _RAW_BODY_SCHEMAS.get(operation_id)
    if schemas is None or set(schemas) != set(rule.media_types):
        raise SystemExit(f"{operation_id}: document each accepted media type's body schema")
    return {
        "required": True,
        "description": f"At most {rule.max_bytes} bytes; one of: {rule.accepted}",
        "content": {media_type: {"schema": schemas[media_type]} for media_type in sorted(schemas)},
    }


def check_collisions(
    found: dict[str, tuple[str, Any]], schema: dict[str, Any], origin: str
) -> None:
    """Two models of one component name would overwrite each other in the merged document
    (a generated client would then build the wrong shape): the build fails instead."""
    for name, definition in schema.get("components", {}).get("schemas", {}).items():
        seen = found.setdefault(name, (origin, definition))
        if seen[1] != definition:
            raise SystemExit(
                f"OpenAPI component name collision: '{name}' is defined differently by "
                f"{seen[0]} and {origin}; rename one of the models"
            )


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


def api_resolvers() -> list[tuple[str, APIGatewayRestResolver]]:
    """(function, resolver `app`) of every function under functions/, loaded as Lambda would.

    A function on the light GET path (docs/design.md) serves its route without validation,
    hence without the models: its contract.py declares the same route on a validating
    resolver, and that declaration is the one documented."""
    resolvers = []
    for source in sorted((ROOT / "functions").glob("*/app.py")):
        contract = source.with_name("contract.py")
        declaration = contract if contract.exists() else source
        name = f"psap_function_{source.parent.name}_{declaration.stem}"
        spec = importlib.util.spec_from_file_location(name, declaration)
        if spec is None or spec.loader is None:
            raise SystemExit(f"cannot load {declaration}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        resolver = getattr(module, "app", None)
        if isinstance(resolver, APIGatewayRestResolver):
            resolvers.append((source.parent.name, resolver))
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
    components: dict[str, tuple[str, Any]] = {}
    for origin, resolver in api_resolvers():
        schema = resolver.get_openapi_schema().model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
        check_collisions(components, schema, origin)
        merge.add_schema(schema)
    document: dict[str, Any] = json.loads(merge.get_openapi_json_schema())
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    for generic in ("HTTPValidationError", "ValidationError", "ResponseValidationError"):
        schemas.pop(generic, None)
    schemas["RadioTrafficUpload"] = RadioTrafficUpload.model_json_schema(
        by_alias=True, ref_template="#/components/schemas/{model}"
    )
    schemas["CadIncidentEvent"] = CAD_INCIDENT_EVENT
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
            if operation.body is not None:
                if "requestBody" not in spec:
                    spec["requestBody"] = _request_body(operation.operation_id, operation.body)
                for status, text in _BODY_STATUSES.items():
                    responses.setdefault(status, _error_response(text))
            spec["security"] = [{"bearer": []}]
            spec["x-permissions"] = [permission.value for permission in operation.any_of]
            for status, text in _ERROR_STATUSES.items():
                responses.setdefault(status, _error_response(text))
            _declare_rate_limit(spec, method, path)
    _exact_integer_bounds(document)
    _apply_text_policy(document)
    return document


# Powertools writes numeric bounds as floats; float(2**63 - 1) is 2**63, one past int64.
_INTEGER_FORMATS = {float(INT32_MAX): ("int32", INT32_MAX), float(INT64_MAX): ("int64", INT64_MAX)}


def _exact_integer_bounds(schema: Any) -> None:
    """Integer bounds as exact integers, with the format they stand for."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            if node.get("type") == "integer":
                for bound in ("minimum", "maximum"):
                    value = node.get(bound)
                    if isinstance(value, float):
                        format_name, exact = _INTEGER_FORMATS.get(value, (None, int(value)))
                        node[bound] = exact
                        if format_name is not None:
                            node.setdefault("format", format_name)
            stack.extend(node.values())


def _with_text_policy(node: Any) -> None:
    """The text policy as a pattern on every string a client sends that has none (enums and
    formats are narrower already); free text carries its own pattern (psap.models.FreeText)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, list):
            stack.extend(current)
        elif isinstance(current, dict):
            if current.get("type") == "string" and not ({"enum", "format", "const"} & set(current)):
                if "pattern" not in current:
                    current["pattern"] = SINGLE_LINE_PATTERN
                elif current["pattern"] not in (SINGLE_LINE_PATTERN, FREE_TEXT_PATTERN):
                    current.setdefault("allOf", [{"pattern": SINGLE_LINE_PATTERN}])
            if isinstance(current.get("additionalProperties"), dict):
                # A map's names pass the same policy as its values (the decoder checks keys).
                current.setdefault("propertyNames", {"pattern": SINGLE_LINE_PATTERN})
            stack.extend(value for key, value in current.items() if key != "example")


def _request_components(document: dict[str, Any]) -> set[str]:
    """Component schemas reachable from a request body: what clients send."""
    schemas = document["components"]["schemas"]
    pending = [
        body
        for methods in document["paths"].values()
        for spec in methods.values()
        if (body := spec.get("requestBody"))
    ]
    found: set[str] = set()
    while pending:
        text = json.dumps(pending.pop())
        for name in re.findall(r'"#/components/schemas/([^"]+)"', text):
            if name not in found:
                found.add(name)
                pending.append(schemas[name])
    return found


def _apply_text_policy(document: dict[str, Any]) -> None:
    for methods in document["paths"].values():
        for spec in methods.values():
            for parameter in spec.get("parameters", []):
                _with_text_policy(parameter.get("schema"))
            _with_text_policy(spec.get("requestBody"))
    schemas = document["components"]["schemas"]
    for name in _request_components(document):
        _with_text_policy(schemas[name])


_RATE_LIMIT_HEADERS: dict[str, Any] = {
    "RateLimit-Policy": {
        "description": "The operation's budget for this tenant: requests per second (q, w=1) "
        'and burst, e.g. `"reads";q=100;w=1;burst=200`',
        "schema": {"type": "string"},
    },
}
_THROTTLED_HEADERS: dict[str, Any] = {
    "Retry-After": {
        "description": "Seconds to wait before the next request (an integer)",
        "schema": {"type": "integer", "minimum": 1},
    },
    "RateLimit": {
        "description": 'What remains of the budget: `"<budget>";r=0;t=<seconds>`',
        "schema": {"type": "string"},
    },
    **_RATE_LIMIT_HEADERS,
}


def _declare_rate_limit(spec: dict[str, Any], method: str, path: str) -> None:
    """Every limited operation: its budget, the policy field on each answer, and the 429."""
    budget = budget_for(method, path)
    spec["x-budget"] = budget.value
    responses = spec["responses"]
    for status, answer in responses.items():
        if status.startswith("2"):
            answer.setdefault("headers", {}).update(_RATE_LIMIT_HEADERS)
    own = responses.get("429", {}).get("description")
    text = f"The tenant's {budget.value} budget is spent (reason RATE_LIMITED_{budget.name})"
    responses["429"] = {
        **_error_response(f"{text}. {own}" if own else text),
        "headers": _THROTTLED_HEADERS,
    }


def _error_response(text: str) -> dict[str, Any]:
    return {
        "description": text,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorInfo"}}},
    }


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
