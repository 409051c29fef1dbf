"""The MCP endpoint: a tool call against the REST GET of the same resource, and cold init.

Warm latency: the MCP function's handler answers `tools/call get_incident` and the incident
GET function's handler answers `GET /mcp/resources/incidents/{id}` for the same incident of
a demo tenant, in-process under moto with tables from template.yaml, in alternating blocks
of 10 so that drift on a shared machine touches both alike. Both pay the same GetItem; the
tool call adds JSON-RPC decoding, argument validation, and the body twice (structured
content and its text). Target: median tool call / median REST GET <= 1.2.

Cold init: importing the MCP function's module in a fresh interpreter next to the REST
knowledge-list function's, measured as tools.bench.cold measures (no bytecode, then
precompiled; median of --runs). The MCP function imports a tool's area on the tool's first
call, so its module alone is not the whole cold path: "MCP + first get_incident" also
imports what that first call loads (boto3, the incident store and models, the output
adapter), and is compared with the REST incident GET function's import.
"""

import copy
import io
import json
import os
import tempfile
import time
from collections.abc import Callable
from contextlib import redirect_stdout
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from moto import mock_aws

from local.demo_tenant_data import generate, load
from psap.observability import metrics
from psap.storage.dynamodb import dynamodb
from tools.bench.cold import LAYER, LIST_FUNCTION, Target, compile_cache, measure
from tools.bench.core import Options, Progress, Row, Section, median, milliseconds, ratio_row
from tools.bench.functions import LambdaContext, function_module
from tools.bench.moto import create_tables, use_in_process_environment
from tools.bench.template import table_environment, table_specs

ROOT = Path(__file__).resolve().parents[2]
MCP_FUNCTION = ROOT / "functions" / "mcp"
INCIDENT_FUNCTION = ROOT / "functions" / "incident_get"
TENANT = 1
WARM_LIMIT = 1.2  # tool call / REST GET
COLD_LIMIT = 1.5  # MCP function / knowledge list function (context: it serves seven reads)
FIRST_CALL_LIMIT = 1.2  # MCP + its first get_incident's imports / REST incident GET

FIRST_CALL_SOURCE = f'''"""The MCP function's module, then its first get_incident's imports."""
import importlib.util

_spec = importlib.util.spec_from_file_location("mcp_app", {str(MCP_FUNCTION / "app.py")!r})
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)

import psap.incidents.reading  # noqa: E402,F401  (imported by the tool's first call)
from psap.mcp.catalog import TOOLS_BY_NAME  # noqa: E402

TOOLS_BY_NAME["get_incident"].output  # the output adapter, built on the first call
handler = _module.handler
'''

type Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


CONTEXT = LambdaContext("McpFunction", memory_limit_in_mb=2048)


def _handler(directory: Path) -> Handler:
    handler: Handler = function_module(directory.name, f"bench_{directory.name}_app").handler
    return handler


def _event(name: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((ROOT / "events" / f"{name}.json").read_text())
    event["requestContext"]["authorizer"].update(tenantId=str(TENANT), permissions="BROWSE_EVENTS")
    return event


def rest_event(incident_id: int) -> dict[str, Any]:
    event = _event("incident_get")
    event["pathParameters"] = {"incidentId": str(incident_id)}
    event["path"] = f"/api/v1/external/mcp/resources/incidents/{incident_id}"
    return event


def tool_event(incident_id: int) -> dict[str, Any]:
    event = _event("mcp")
    message = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "get_incident", "arguments": {"incident_id": incident_id}},
    }
    event["body"] = json.dumps(message)
    return event


def call(handler: Handler, event: dict[str, Any]) -> dict[str, Any]:
    with redirect_stdout(io.StringIO()):  # the audit line and Powertools' metrics line
        answer = handler(copy.deepcopy(event), CONTEXT)
    if answer["statusCode"] != 200:
        raise RuntimeError(f"answered {answer['statusCode']}: {answer['body']}")
    return answer


def warm_latency(options: Options, progress: Progress) -> list[Row]:
    specs, reader = table_specs()
    use_in_process_environment(specs)
    metrics.namespace = os.environ["POWERTOOLS_METRICS_NAMESPACE"]
    rest, tool = _handler(INCIDENT_FUNCTION), _handler(MCP_FUNCTION)
    with mock_aws():
        dynamodb.cache_clear()
        create_tables(dynamodb(), specs)
        dataset = generate(
            4101,
            TENANT,
            100_000,
            user_count=20,
            evaluation_count=10,
            incident_count=10,
            domain="bench.example",
        )
        load(dataset, TENANT, datetime(2026, 1, 5, tzinfo=UTC))
        progress(f"tables from template.yaml ({reader}); a demo tenant with 10 incidents")
        incident_id = dataset.incidents[3].id
        if incident_id is None:
            raise RuntimeError("the demo incidents have ids")
        sides = {"rest": (rest, rest_event(incident_id)), "tool": (tool, tool_event(incident_id))}
        rest_body = json.loads(call(rest, sides["rest"][1])["body"])
        tool_body = json.loads(call(tool, sides["tool"][1])["body"])
        if tool_body["result"]["structuredContent"] != rest_body:
            raise RuntimeError("the tool call and the REST GET answered different bodies")
        for _ in range(5):  # warm-up: caches, lazy paths
            for handler, event in sides.values():
                call(handler, event)
        timings: dict[str, list[float]] = {"rest": [], "tool": []}
        for _ in range(options.warm_calls // 10):
            for side, (handler, event) in sides.items():
                for _ in range(10):
                    started = time.perf_counter()
                    call(handler, event)
                    timings[side].append(time.perf_counter() - started)
    progress(f"{len(timings['tool'])} timed calls per side")
    rest_times, tool_times = sorted(timings["rest"]), sorted(timings["tool"])
    p95 = int(len(rest_times) * 0.95) - 1
    return [
        Row(
            f"REST GET incident, handler (median of {len(rest_times)})",
            milliseconds(median(rest_times)),
        ),
        Row("  same, p95", milliseconds(rest_times[p95])),
        Row(
            f"MCP tools/call get_incident, handler (median of {len(tool_times)})",
            milliseconds(median(tool_times)),
        ),
        Row("  same, p95", milliseconds(tool_times[p95])),
        ratio_row(
            "tool call / REST GET (medians)",
            median(tool_times),
            median(rest_times),
            limit=WARM_LIMIT,
        ),
    ]


def cold_init(options: Options, progress: Progress) -> list[Row]:
    specs, _ = table_specs()
    tables = table_environment(specs)
    targets = [
        Target("list", "knowledge list (REST)", LIST_FUNCTION),
        Target("incident", "incident GET (REST)", INCIDENT_FUNCTION),
        Target("mcp", "MCP endpoint", MCP_FUNCTION),
    ]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="psap-bench-mcp-") as scratch:
        base = Path(scratch)
        first_call = base / "mcp-first-call"
        first_call.mkdir()
        (first_call / "app.py").write_text(FIRST_CALL_SOURCE)
        targets.append(Target("first", "MCP + first get_incident", first_call))
        counter = iter(range(1_000_000))

        def fresh() -> Path:
            path = base / f"empty-{next(counter)}"
            path.mkdir()
            return path

        cold = measure(
            targets, options.runs, fresh, tables=tables, progress=progress, mode="no bytecode cache"
        )
        cache = base / "compiled"
        sources = {s for runs in cold.values() for sample in runs for s in sample.sources}
        compile_cache(
            cache,
            sources,
            [LAYER, LIST_FUNCTION, INCIDENT_FUNCTION, MCP_FUNCTION, first_call],
            progress=progress,
        )
        warm = measure(
            targets,
            options.runs,
            lambda: cache,
            tables=tables,
            progress=progress,
            mode="precompiled",
        )
    for mode, samples in (("no bytecode cache", cold), ("precompiled", warm)):
        medians = {
            key: median([sample.seconds for sample in runs]) for key, runs in samples.items()
        }
        for target in targets:
            modules = samples[target.key][0].modules
            rows.append(
                Row(
                    f"{mode}: {target.label} import ({modules} modules)",
                    milliseconds(medians[target.key]),
                )
            )
        rows.append(
            ratio_row(
                f"{mode}: MCP / knowledge list", medians["mcp"], medians["list"], limit=COLD_LIMIT
            )
        )
        rows.append(
            ratio_row(
                f"{mode}: MCP + first get_incident / incident GET",
                medians["first"],
                medians["incident"],
                limit=FIRST_CALL_LIMIT,
            )
        )
    return rows


def run(options: Options) -> list[Row]:
    progress = Progress("mcp")
    return warm_latency(options, progress) + cold_init(options, progress)


SECTION = Section("mcp", "MCP endpoint: tool call vs REST GET, cold init", run)
