"""Media ingest: SRT parse + store time for a 2-hour radio-traffic recording (moto).

A deterministic 2-hour channel: a transmission every few seconds (1.2-4 s long, 0.2-1.8 s
apart, about 2 000 cues), most opening with a unit label (`ENGINE 5: ...`). Figures are
medians of a few runs: decode + parse + checks (psap.media.subrip), building the record,
storing it (S3 original + one transaction; moto in-process, so the store figure is moto's
cost more than DynamoDB's), the whole upload through the function's handler, an idempotent
re-upload, the media GET, and the sizes that decide whether segments sit inline in the item.
"""

import base64
import contextlib
import hashlib
import io
import json
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from moto import mock_aws

from psap.config import tenant_data_table
from psap.events.models import Event
from psap.events.store import import_event
from psap.media import store, subrip
from psap.media.ingest import radio_traffic_media
from psap.media.models import RadioTrafficMedia
from psap.observability import metrics
from psap.storage.documents import encode_document
from psap.storage.dynamodb import dynamodb
from psap.storage.s3 import s3
from tools.bench.core import Options, Progress, Row, Section, median, milliseconds
from tools.bench.functions import LambdaContext, function_module
from tools.bench.moto import create_tables, environment_changed, use_in_process_environment
from tools.bench.template import table_specs

TENANT = 1
EVENT_ID = 6001
RECORDING_SECONDS = 2 * 3600
RUNS = 5
STARTED = datetime(2026, 1, 5, 14, tzinfo=UTC)
UNITS = ("DISPATCH", "ENGINE 5", "ENGINE 9", "TRUCK 3", "MEDIC 12", "BATTALION 2", "SQUAD 1")
PHRASES = (
    "copy, responding",
    "on scene, nothing showing, investigating",
    "requesting a second alarm, heavy fire on the second floor",
    "primary search complete, all clear",
    "transporting one patient to County General, non-emergent",
    "available in quarters",
    "water supply established at the hydrant on Alder",
    "we have a working fire, command will be on TAC 4",
    "copy, time check 14:32",
    "patient contact, adult male, conscious and breathing",
)
type Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def two_hour_srt(seed: int = 6) -> str:
    rng = random.Random(seed)  # noqa: S311 - reproducible test data, not secrets
    blocks, moment, number = [], 1.0, 1
    while moment < RECORDING_SECONDS - 10:
        length = rng.uniform(1.2, 4.0)
        label = rng.choice(UNITS)
        text = f"{label}: {rng.choice(PHRASES)}" if rng.random() < 0.9 else rng.choice(PHRASES)
        blocks.append(f"{number}\n{_clock(moment)} --> {_clock(moment + length)}\n{text}\n")
        moment += length + rng.uniform(0.2, 1.8)
        number += 1
    return "\n".join(blocks)


def _clock(seconds: float) -> str:
    millis = round(seconds * 1000)
    return (
        f"{millis // 3_600_000:02d}:{millis // 60_000 % 60:02d}:"
        f"{millis // 1000 % 60:02d},{millis % 1000:03d}"
    )


def _handler(directory: str) -> Handler:
    handler: Handler = function_module(directory, f"bench_{directory}", register=True).handler
    return handler


CONTEXT = LambdaContext()


def _request(method: str, resource: str, path: str, *, permissions: str) -> dict[str, Any]:
    return {
        "resource": resource,
        "path": path,
        "httpMethod": method,
        "headers": {},
        "multiValueHeaders": {},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": None,
        "body": None,
        "isBase64Encoded": False,
        "requestContext": {
            "requestId": "bench",
            "resourcePath": resource,
            "httpMethod": method,
            "identity": {"sourceIp": "127.0.0.1"},
            "authorizer": {
                "principalId": "bench",
                "tenantId": str(TENANT),
                "credentialId": "bench",
                "kind": "partner",
                "permissions": permissions,
                "label": "bench",
            },
        },
    }


def _upload_event(text: str) -> dict[str, Any]:
    resource = "/api/v1/external/media/radio-traffic"
    event = _request("POST", resource, resource, permissions="MANAGE_EVENTS")
    event["headers"] = {"Content-Type": "application/x-subrip"}
    event["multiValueHeaders"] = {"Content-Type": ["application/x-subrip"]}
    query = {
        "eventId": str(EVENT_ID),
        "channel": "FIRE-DISPATCH-1",
        "recordingStartedAt": "2026-01-05T14:00:00Z",
    }
    event["queryStringParameters"] = query
    event["multiValueQueryStringParameters"] = {name: [value] for name, value in query.items()}
    # API Gateway hands a non-text media type to Lambda base64-encoded.
    event["body"], event["isBase64Encoded"] = base64.b64encode(text.encode()).decode(), True
    return event


def _timed[T](action: Callable[..., T], *arguments: Any) -> tuple[float, T]:
    # The functions' log and audit lines would drown the table; they are not the figure.
    with contextlib.redirect_stdout(io.StringIO()):
        started = time.perf_counter()
        result = action(*arguments)
        return time.perf_counter() - started, result


def _parse(data: bytes) -> list[subrip.Cue]:
    return subrip.parse(subrip.decode(data))


@dataclass
class _Timings:
    parse: list[float] = field(default_factory=list)
    build: list[float] = field(default_factory=list)
    store: list[float] = field(default_factory=list)
    upload: list[float] = field(default_factory=list)
    replay: list[float] = field(default_factory=list)
    get: list[float] = field(default_factory=list)


def _logic_steps(data: bytes, timings: _Timings) -> RadioTrafficMedia:
    """Parse, build and store, timed apart; each run stores a record of its own."""
    table = tenant_data_table()
    event = Event(id=EVENT_ID, number="EV-BENCH-1")
    media: RadioTrafficMedia | None = None
    for run_index in range(RUNS):
        seconds, cues = _timed(_parse, data)
        timings.parse.append(seconds)
        sha = hashlib.sha256(data + str(run_index).encode()).hexdigest()
        media_id = store.next_media_id()
        seconds, media = _timed(
            radio_traffic_media,
            *(media_id, event, "FIRE-DISPATCH-1", STARTED, cues, sha, len(data), STARTED),
        )
        timings.build.append(seconds)
        seconds, _ = _timed(store.create_radio_traffic, table, "bench-media", TENANT, media, data)
        timings.store.append(seconds)
    assert media is not None  # noqa: S101 - RUNS > 0
    return media


def _through_handlers(text: str, cue_count: int, timings: _Timings) -> None:
    """Upload (201), the same again (200) and GET, through the functions' handlers."""
    upload, get = _handler("media_radio_traffic_upload"), _handler("media_get")
    resource = "/api/v1/external/mcp/resources/media/{mediaId}"
    for run_index in range(RUNS):
        # A cue more per run: new content, so each first upload creates.
        variant = text + f"\n{cue_count + 1}\n02:00:00,000 --> 02:00:0{run_index + 1},000\nOK\n"
        for expected, times in ((201, timings.upload), (200, timings.replay)):
            seconds, answer = _timed(upload, _upload_event(variant), CONTEXT)
            if answer["statusCode"] != expected:
                raise SystemExit(f"upload answered {answer['body'][:300]}")
            times.append(seconds)
        media_id = json.loads(answer["body"])["id"]
        request = _request(
            "GET", resource, resource.replace("{mediaId}", str(media_id)), permissions=""
        )
        request["requestContext"]["authorizer"]["permissions"] = "BROWSE_EVENTS"
        request["pathParameters"] = {"mediaId": str(media_id)}
        seconds, read = _timed(get, request, CONTEXT)
        if read["statusCode"] != 200:
            raise SystemExit(f"media GET answered {read['body'][:300]}")
        timings.get.append(seconds)


def run(options: Options) -> list[Row]:
    progress = Progress("media")
    specs, reader = table_specs()
    use_in_process_environment(specs)
    os.environ.update(MEDIA_BUCKET="bench-media", POWERTOOLS_METRICS_DISABLED="true")
    environment_changed()
    # Created at import, perhaps before this environment: it would lack its namespace.
    metrics.namespace = os.environ["POWERTOOLS_METRICS_NAMESPACE"]
    text = two_hour_srt()
    data = text.encode()
    progress(f"2-hour SRT generated: {len(data)} bytes")
    timings = _Timings()
    with mock_aws():
        dynamodb.cache_clear()
        s3.cache_clear()
        create_tables(dynamodb(), specs)
        s3().create_bucket(Bucket="bench-media")
        progress(f"tables from template.yaml ({reader})")
        import_event(TENANT, Event(id=EVENT_ID, number="EV-1"), STARTED)
        media = _logic_steps(data, timings)
        progress(f"parse, build, store x{RUNS}")
        _through_handlers(text, media.cue_count, timings)
        progress(f"handler upload, re-upload and GET x{RUNS}")
    dynamodb.cache_clear()
    s3.cache_clear()
    document = media.model_dump(mode="json", by_alias=True)
    compressed, raw_json = len(encode_document(document)), len(json.dumps(document))
    parse, build = median(timings.parse), median(timings.build)
    stored, upload = median(timings.store), median(timings.upload)
    inline = compressed <= store.INLINE_SEGMENTS_BYTES
    return [
        Row("SRT file: bytes", f"{len(data)} B ({len(data) / 1024:.0f} KiB)"),
        Row("SRT file: cues", str(media.cue_count)),
        Row("decode + parse + checks (srt library)", milliseconds(parse)),
        Row("build the record and segments", milliseconds(build)),
        Row("store: S3 original + one transaction (moto)", milliseconds(stored)),
        Row("parse + build + store, total", milliseconds(parse + build + stored)),
        Row(
            "whole upload through the function's handler (201)",
            milliseconds(upload),
            "< 10000 ms (function Timeout)",
            upload < 10.0,
        ),
        Row("idempotent re-upload (200, same id)", milliseconds(median(timings.replay))),
        Row("media GET through its handler", milliseconds(median(timings.get))),
        Row("record JSON with segments", f"{raw_json / 1024:.0f} KiB"),
        Row(
            "record compressed (zlib)",
            f"{compressed / 1024:.0f} KiB ({'inline' if inline else 'segments in S3'})",
            f"<= {store.INLINE_SEGMENTS_BYTES // 1000} kB inline",
        ),
    ]


SECTION = Section("media", "Media ingest: 2-hour SRT radio traffic, parse + store (moto)", run)
