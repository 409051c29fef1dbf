"""The CAD connection's functions in-process (intake, worker, dispatcher, delivery jobs),
their queues and table, and submissions in both forms. Connectors and updates are in
tests/support/webhooks.py, the CAD's receiver in receiver.py, the clock in clock.py."""

import base64
import copy
import json
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from local.template import load_template
from psap import clock
from psap.config import cad_table
from psap.storage.dynamodb import dynamodb
from psap.storage.sqs import sqs
from psap.webhooks import dispatcher, jobs, transport
from psap.webhooks import secrets as vault
from psap.webhooks.models import Lane
from tests.support.harness import HandlerHarness, with_headers

TEMPLATE = load_template()
TENANT = 31
OTHER_TENANT = 32


# ---------------------------------------------------------------- environment


# The CAD path's functions, whose environment its tests run under.
CAD_FUNCTIONS = (
    "CadIntakeFunction",
    "CadWorkerFunction",
    "WebhookDispatcherFunction",
    "DeliveryJobWorkerFunction",
)


def forget_caches() -> None:
    """Every per-container cache of the CAD path: clients, connectors, secrets, kept-alive
    sockets."""
    vault.secrets_manager.cache_clear()
    vault.forget_all()
    dispatcher.forget_connectors()
    for lane in Lane:
        transport.outbound_client(lane).close()
    transport.outbound_client.cache_clear()


def queue_url(logical_id: str) -> str:
    return TEMPLATE.queues[logical_id].url


def drain(logical_id: str) -> list[dict[str, Any]]:
    """Every message now visible in a queue (removed from it), bodies parsed."""
    bodies: list[dict[str, Any]] = []
    while True:
        answer = sqs().receive_message(
            QueueUrl=queue_url(logical_id), MaxNumberOfMessages=10, WaitTimeSeconds=0
        )
        messages = answer.get("Messages", [])
        if not messages:
            return bodies
        for message in messages:
            bodies.append(json.loads(message["Body"]))
            sqs().delete_message(
                QueueUrl=queue_url(logical_id), ReceiptHandle=message["ReceiptHandle"]
            )


def run_delivery_jobs(now: datetime | None = None) -> int:
    """Runs every queued delivery-job step (each queues the next) until none is left, as
    DeliveryJobWorkerFunction would; returns how many steps ran."""
    steps = 0
    while queued := drain("DeliveryJobQueue"):
        for body in queued:
            jobs.run_step(jobs.JobStep.model_validate(body), now or clock.utc_now())
            steps += 1
    return steps


def delayed(logical_id: str) -> int:
    attributes = sqs().get_queue_attributes(
        QueueUrl=queue_url(logical_id), AttributeNames=["ApproximateNumberOfMessagesDelayed"]
    )["Attributes"]
    return int(attributes.get("ApproximateNumberOfMessagesDelayed", "0"))


def table_items() -> list[dict[str, Any]]:
    return list(dynamodb().scan(TableName=cad_table())["Items"])


# ---------------------------------------------------------------- handlers and events


class CadFunctions(HandlerHarness):
    """The CAD functions' handlers, called as API Gateway and SQS would call them (each
    imported on first use, as a cold start would: most tests need one or two)."""

    @property
    def intake(self) -> Any:
        return self.handler("cad_intake")

    @property
    def worker(self) -> Any:
        return self.handler("cad_worker")

    @property
    def dispatcher(self) -> Any:
        return self.handler("webhook_dispatcher")

    @property
    def scheduler(self) -> Any:
        return self.handler("webhook_scheduler")

    @property
    def job_worker(self) -> Any:
        return self.handler("delivery_job_worker")

    def submit(
        self,
        body: dict[str, Any] | bytes | str,
        tenant: int = TENANT,
        content_type: str | None = "application/json",
        *,
        kind: str = "cad",
        base64_encoded: bool = False,
    ) -> tuple[int, Any]:
        raw = body if isinstance(body, bytes | str) else json.dumps(body)
        raw_bytes = raw.encode() if isinstance(raw, str) else raw
        event = self.proxy_event(
            "cad_intake",
            tenant=tenant,
            permissions=None,
            kind=kind,
            body=base64.b64encode(raw_bytes).decode() if base64_encoded else raw_bytes.decode(),
        )
        event["isBase64Encoded"] = base64_encoded
        headers = {k: v for k, v in event["headers"].items() if k.lower() != "content-type"}
        if content_type is not None:
            headers["Content-Type"] = content_type
        with_headers(event, headers)
        status, parsed, _ = self.answer("cad_intake", event)
        return status, parsed

    def _sqs_event(self, logical_id: str, bodies: list[dict[str, Any]], receives: int) -> Any:
        event = self.load_event("cad_worker")
        template = event["Records"][0]
        event["Records"] = []
        for index, body in enumerate(bodies):
            record = copy.deepcopy(template)
            record["messageId"] = f"message-{index}"
            record["body"] = json.dumps(body)
            record["attributes"]["ApproximateReceiveCount"] = str(receives)
            record["eventSourceARN"] = TEMPLATE.queues[logical_id].arn
            event["Records"].append(record)
        return event

    def run_worker(self, receives: int = 1) -> dict[str, Any]:
        """Runs the worker on what the intake queue holds."""
        bodies = drain("CadIntakeQueue")
        result: dict[str, Any] = self.worker(
            self._sqs_event("CadIntakeQueue", bodies, receives), self.context
        )
        return result

    def dispatch(self, bodies: list[dict[str, Any]], queue: str = "WebhookQueue") -> dict[str, Any]:
        result: dict[str, Any] = self.dispatcher(self._sqs_event(queue, bodies, 1), self.context)
        return result

    def run_job_steps(self, after_each: Callable[[], object] | None = None) -> list[float]:
        """Runs DeliveryJobWorkerFunction on the delivery job queue, one step per event
        (its BatchSize), until no step is left, and `after_each` after each step (e.g. the
        dispatcher on what it queued, as it runs beside the worker); returns each step's
        seconds."""
        seconds: list[float] = []
        while queued := drain("DeliveryJobQueue"):
            for body in queued:
                started = time.perf_counter()
                answer = self.job_worker(
                    self._sqs_event("DeliveryJobQueue", [body], 1), self.context
                )
                seconds.append(time.perf_counter() - started)
                assert answer == {"batchItemFailures": []}, answer
                if after_each is not None:
                    after_each()
        return seconds

    def run_dispatcher(self) -> list[dict[str, Any]]:
        """Runs the dispatcher on what the webhook queue shows now; returns the messages."""
        bodies = drain("WebhookQueue")
        if bodies:
            self.dispatch(bodies)
        return bodies


def flat_submission(
    event_id: str = "A-1",
    number: str = "2026-000123",
    event_type: str = "incident.created",
    *,
    time: str = "2026-11-23T02:32:15.123Z",
    tenant: int | None = TENANT,
    **incident: Any,
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "number": number,
        "incidentType": "Structure Fire",
        "priority": "1",
        "location": "1200 Main St",
        "latitude": 33.9533,
        "longitude": "-117.3962",
        "callerNumber": "+19515550100",
        "callReceivedTime": "2026-11-23T02:30:01Z",
        "notes": [
            {"noteId": "n1", "note": "Smoke from the roof", "noteAt": "2026-11-23T02:31:00Z"}
        ],
        "responders": [{"unitName": "E12", "dispatchedAt": "2026-11-23T02:31:30Z"}],
        **incident,
    }
    envelope: dict[str, Any] = {
        "specversion": "1.0",
        "id": event_id,
        "source": "urn:cad:riverside",
        "type": event_type,
        "time": time,
        "subject": number,
        "data": data,
    }
    if tenant is not None:
        envelope["tenantId"] = tenant
    return envelope


def eido_submission(
    event_id: str = "E-1",
    number: str = "EIDO-77",
    event_type: str = "incident.created",
    *,
    time: str = "2026-11-23T02:40:00Z",
) -> dict[str, Any]:
    return {
        "specversion": "1.0",
        "id": event_id,
        "source": "urn:cad:lakeshore",
        "type": event_type,
        "time": time,
        "tenantid": str(TENANT),
        "datacontenttype": "application/json",
        "data": {
            "eidoMessageIdentifier": "urn:uuid:6f1f8e2a-2f5b-4c44-9d8e-2b1f0f7d9a01",
            "lastUpdateTimeStamp": "2026-11-23T02:40:00Z",
            "incidentComponent": [
                {
                    "componentIdentifier": "inc-1",
                    "incidentTrackingIdentifier": number,
                    "incidentTypeCommonRegistryText": ["Water Rescue"],
                    "incidentCommonPriorityNumber": 2,
                    "incidentCreationTimeStamp": "2026-11-23T02:35:00Z",
                    "locationReference": {"$ref": "loc-1"},
                    "disposition": {"dispositionCommonRegistryText": "Patient transported"},
                }
            ],
            "locationComponent": [
                {"$id": "loc-0", "civicAddressText": "Elsewhere"},
                {
                    "$id": "loc-1",
                    "civicAddressText": "Pier 4, Lakeshore Dr",
                    "locationByValue": {"latitude": 43.0731, "longitude": -89.4012},
                },
            ],
            "notesComponent": [
                {
                    "noteIdentifier": "note-1",
                    "noteText": "Caller sees a person in the water",
                    "noteDateTimeStamp": "2026-11-23T02:36:00Z",
                    "authorReference": {"$ref": "agent-7"},
                }
            ],
            "emergencyResourceComponent": [
                {
                    "unitIdentifier": "Boat 3",
                    "dispatchedTimeStamp": "2026-11-23T02:37:00Z",
                    "onSceneTimeStamp": "2026-11-23T02:45:00Z",
                }
            ],
            "callComponent": {
                "callIdentifier": "CALL-9001",
                "callTypeDescription": "911",
                "callStartTimeStamp": "2026-11-23T02:34:30Z",
                "callAnswerTimeStamp": "2026-11-23T02:34:35Z",
                "callEndTimeStamp": "2026-11-23T02:38:00Z",
                "callbackNumber": "+16085550199",
                "callerName": "J. Doe",
            },
            "agencyComponent": [
                {"agencyName": "Lakeshore Fire", "agencyTypeCommonRegistryText": "Fire"}
            ],
        },
    }
