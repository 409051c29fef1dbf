"""Knowledge writes and reads of a 500-question card, in-process under moto.

Each request goes through its function's own handler (API Gateway REST proxy event, the
Powertools resolver, validation, the logic and the store) against tables, the digest queue
and the content bucket created from template.yaml:

- create of a new 500-question card (a new externalId each time) and append of a new
  version of one card (every referenceId kept, one question reworded): median latency;
- what one append writes: DynamoDB items (transaction and id sequence), the bytes of the
  version item (its compressed document beside the JSON it holds), write units, S3 bytes;
- GET of that card (latest version) and of its knowledge card: median latency.

moto emulates DynamoDB in Python: absolute figures are moto's, not DynamoDB's (a transaction
there copies the whole table first), so they compare requests with each other, not with AWS.
"""

import contextlib
import io
import json
import math
import os
import statistics
import time
import warnings
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from moto import mock_aws

from local.template import load_template
from psap.knowledge.content import ApiControl
from tools.bench.core import Options, Progress, Row, Section, milliseconds
from tools.bench.functions import LambdaContext, function_module, partner_request_context
from tools.bench.moto import create_template_resources, environment_changed

TENANT = 1
QUESTIONS = 500
CREATES, APPENDS, READS = 15, 15, 40
ITEM_LIMIT = 400 * 1024  # DynamoDB's item size limit
# Every section owned by the API: ApiControl's defaults, by wire name.
API_OWNED = ApiControl().model_dump(by_alias=True)

type Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


CONTEXT = LambdaContext()


def _environment() -> None:
    template = load_template()
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_PROFILE"):
        os.environ.pop(name, None)
    os.environ.update(template.globals_environment)
    os.environ.update(
        {
            "AWS_REGION": "us-east-1",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": "bench",  # a dummy for the SDK; moto answers every call
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_METRICS_DISABLED": "true",
            "POWERTOOLS_LOG_LEVEL": "WARNING",
        }
    )
    environment_changed()


def _quiet_logs() -> None:
    """The shared Logger may exist already (another section imported it before the
    environment was set): its level is set directly, so log lines do not flood the figures."""
    from psap.observability import logger  # noqa: PLC0415 - after the environment is set

    logger.setLevel("WARNING")


@cache
def handler(function: str) -> Handler:
    """The function's module, imported by file path once, as a warm container holds it."""
    loaded: Handler = function_module(function, f"bench_{function}_app").handler
    return loaded


def event(
    method: str, resource: str, path: dict[str, str] | None = None, *, body: Any = None
) -> dict[str, Any]:
    """A REST (v1) proxy event as API Gateway sends it after the partner authorizer."""
    concrete = resource
    for name, value in (path or {}).items():
        concrete = concrete.replace("{" + name + "}", value)
    return {
        "resource": resource,
        "path": concrete,
        "httpMethod": method,
        "headers": {"Content-Type": "application/json"},
        "multiValueHeaders": {"Content-Type": ["application/json"]},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": path,
        "body": json.dumps(body) if body is not None else None,
        "isBase64Encoded": False,
        "requestContext": partner_request_context(TENANT, "VIEW_KNOWLEDGE,MANAGE_KNOWLEDGE"),
    }


def call(function: str, request: dict[str, Any], expected: int) -> dict[str, Any]:
    # Powertools writes EMF lines to stdout and warns about metrics: not figures.
    from psap.observability import metrics  # noqa: PLC0415 - after the environment is set

    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        answer = handler(function)(request, CONTEXT)
    # With metrics disabled Powertools never empties its buffer, and the 100th value of a
    # metric publishes it (an error when the Metrics object was made without a namespace).
    metrics.clear_metrics()
    if answer["statusCode"] != expected:
        raise RuntimeError(f"{function} answered {answer['statusCode']}: {answer['body'][:300]}")
    body: dict[str, Any] = json.loads(answer["body"])
    return body


def card_payload(number: int) -> dict[str, Any]:
    """A 500-question guide card: every tenth question has a related group of two."""
    questions = []
    for index in range(QUESTIONS):
        question: dict[str, Any] = {
            "questionText": f"Question {index}: is the caller able to describe the patient's "
            "breathing, colour and level of consciousness right now?",
            "displayCriteria": f"chiefComplaint == 'C{index % 40}'",
            "isCritical": index % 7 == 0,
        }
        if index % 10 == 0:
            question["relatedQuestions"] = [
                {
                    "label": "If not breathing normally",
                    "displayCriteria": "breathing == 'abnormal'",
                    "questions": [
                        {"questionText": f"Follow-up {index}.1: is the airway open?"},
                        {"questionText": f"Follow-up {index}.2: any choking sounds?"},
                    ],
                }
            ]
        questions.append(question)
    return {
        "name": f"Benchmark Card {number}",
        "provider": "BENCH",
        "knowledgeType": "GUIDE_CARD",
        "externalId": f"gc-bench-{number}",
        "apiControl": API_OWNED,
        "questionList": questions,
        "spokenInstructions": [{"instructionText": "Stay on the line with me."}],
        "actions": {"dispatchTriggers": [{"condition": "breathing == 'absent'"}]},
    }


def append_payload(entry: dict[str, Any], round_number: int) -> dict[str, Any]:
    """The next version: every referenceId kept, one question reworded."""
    questions = [
        {key: value for key, value in question.items() if key not in {"effectiveDisplayCriteria"}}
        for question in entry["questionList"]
    ]
    questions[round_number % QUESTIONS]["questionText"] += f" (revision {round_number})"
    return {
        "apiControl": API_OWNED,
        "questionList": questions,
        "spokenInstructions": entry["spokenInstructions"],
        "actions": {"dispatchTriggers": entry["actions"]["dispatchTriggers"]},
    }


@dataclass
class WriteCounter:
    """What the knowledge functions write, seen on the shared botocore clients."""

    transactions: list[list[dict[str, Any]]] = field(default_factory=list)
    updates: int = 0
    s3_bytes: int = 0
    messages: int = 0

    def reset(self) -> None:
        self.transactions.clear()
        self.updates = self.s3_bytes = self.messages = 0

    def __call__(self, model: Any, params: dict[str, Any], **_: Any) -> None:
        match model.name:
            case "TransactWriteItems":
                self.transactions.append(list(params["TransactItems"]))
            case "UpdateItem" | "PutItem":
                self.updates += 1
            case "PutObject":
                self.s3_bytes += len(params["Body"])
            case "SendMessage":
                self.messages += 1


@contextlib.contextmanager
def counting() -> Iterator[WriteCounter]:
    from psap.storage.dynamodb import dynamodb  # noqa: PLC0415
    from psap.storage.s3 import s3  # noqa: PLC0415
    from psap.storage.sqs import sqs  # noqa: PLC0415

    counter = WriteCounter()
    for client in (dynamodb(), s3(), sqs()):
        client.meta.events.register("before-parameter-build", counter)
    try:
        yield counter
    finally:
        for client in (dynamodb(), s3(), sqs()):
            client.meta.events.unregister("before-parameter-build", counter)


def build_without_storage(entry: dict[str, Any]) -> None:
    """An append's own work: parse the body, build the version, serialize and compress it."""
    from psap.knowledge.content import (  # noqa: PLC0415 - after the environment is set
        KnowledgeAppendRequest,
        Owner,
        Section,
        VersionContent,
    )
    from psap.knowledge.versioning import build_content, sent_sections  # noqa: PLC0415

    body = json.dumps(append_payload(entry, 1))
    request = KnowledgeAppendRequest.model_validate_json(body)
    current = VersionContent.model_validate(
        {key: entry[key] for key in ("questionList", "spokenInstructions", "actions", "media")}
    )
    owned = [section for section in Section if request.api_control.owner(section) is Owner.API]
    content = build_content(sent_sections(request, owned), current, {}, creating=False)
    zlib.compress(json.dumps(content.model_dump(mode="json", by_alias=True)).encode(), 6)


def attribute_bytes(value: dict[str, Any]) -> int:
    ((kind, inner),) = value.items()
    if kind == "M":
        return sum(len(name) + attribute_bytes(item) for name, item in inner.items())
    if kind == "L":
        return sum(attribute_bytes(item) for item in inner)
    if kind == "B":
        return len(inner)
    return len(str(inner).encode())


def item_bytes(item: dict[str, Any]) -> int:
    return sum(len(name) + attribute_bytes(value) for name, value in item.items())


def timed(function: Callable[[], Any]) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def knowledge_write(options: Options) -> list[Row]:
    progress = Progress("knowledge-write")
    _environment()
    _quiet_logs()
    with mock_aws():
        create_template_resources()
        payload_bytes = len(json.dumps(card_payload(0)))
        progress(f"{QUESTIONS}-question card: {payload_bytes / 1024:.0f} KB of JSON per request")
        create_resource = "/api/v1/external/knowledge"
        call("knowledge_create", event("POST", create_resource, body=card_payload(0)), 201)
        creates = [
            timed(
                lambda number=number: call(  # type: ignore[misc]
                    "knowledge_create",
                    event("POST", create_resource, body=card_payload(number)),
                    201,
                )
            )
            for number in range(1, CREATES + 1)
        ]
        progress(f"{CREATES} creates timed")
        entry = call(
            "knowledge_create", event("POST", create_resource, body=card_payload(999)), 201
        )
        path = {"knowledgeId": str(entry["id"])}
        append_resource = "/api/v1/external/knowledge/{knowledgeId}/versions"
        appends = []
        with counting() as counter:
            for round_number in range(APPENDS):
                body = append_payload(entry, round_number)
                counter.reset()
                appends.append(
                    timed(
                        lambda body=body: call(  # type: ignore[misc]
                            "knowledge_append", event("POST", append_resource, path, body=body), 201
                        )
                    )
                )
        progress(f"{APPENDS} appends timed")
        (transaction,) = counter.transactions
        version_item = next(write["Put"]["Item"] for write in transaction if "Put" in write)
        largest = max(
            item_bytes(write["Put"]["Item"]) if "Put" in write else 0 for write in transaction
        )
        # A transactional write costs 2 write units per KB of each item written.
        units = sum(
            2 * max(1, math.ceil(item_bytes(write["Put"]["Item"]) / 1024)) if "Put" in write else 2
            for write in transaction
        )
        raw = int(version_item["rawBytes"]["N"])
        stored = int(version_item["storedBytes"]["N"])
        cpu = [timed(lambda: build_without_storage(entry)) for _ in range(APPENDS)]
        get_resource = "/api/v1/external/knowledge/{knowledgeId}"
        reads = [
            timed(lambda: call("knowledge_get", event("GET", get_resource, path), 200))
            for _ in range(READS)
        ]
        card_resource = "/api/v1/external/mcp/resources/knowledge/{knowledgeId}/card"
        cards = [
            timed(lambda: call("knowledge_card", event("GET", card_resource, path), 200))
            for _ in range(READS)
        ]
        progress(f"{READS} reads of the card and of its knowledge card timed")
    return [
        Row(
            f"create, {QUESTIONS} questions (median of {CREATES})",
            milliseconds(statistics.median(creates)),
        ),
        Row(
            f"append, {QUESTIONS} questions (median of {APPENDS})",
            milliseconds(statistics.median(appends)),
        ),
        Row(
            "  of which validate + build + compress, no storage call (median)",
            milliseconds(statistics.median(cpu)),
        ),
        Row(
            "DynamoDB items written per append",
            f"{len(transaction)} in 1 transaction + {counter.updates} id sequence",
            "entry, version, card",
            len(transaction) == 3,
        ),
        Row(
            "version item per append (compressed document / its JSON)",
            f"{item_bytes(version_item) / 1024:.1f} KB ({stored / 1024:.1f} / {raw / 1024:.1f} KB)",
        ),
        Row(
            "largest item written per append",
            f"{largest / 1024:.1f} KB",
            "< 400 KB",
            largest < ITEM_LIMIT,
        ),
        Row("write units per append (transactional: 2 per KB per item)", f"{units} WCU"),
        Row(
            "S3 bytes and digest messages per append",
            f"{counter.s3_bytes} B, {counter.messages} msg",
        ),
        Row(
            f"GET latest version, {QUESTIONS} questions (median of {READS})",
            milliseconds(statistics.median(reads)),
        ),
        Row(f"GET knowledge card (median of {READS})", milliseconds(statistics.median(cards))),
    ]


SECTION = Section(
    "knowledge-write",
    "Knowledge create, append and read of a 500-question card (in-process, moto)",
    knowledge_write,
)
