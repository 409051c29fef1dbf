"""SQS event source mappings: one poller per SQS event of the template.

Each poller does what Lambda's event source mapping does: long-polls the queue for up to
BatchSize messages (gathering for MaximumBatchingWindowInSeconds), invokes the function with
the standard SQS event, and deletes what succeeded. With ReportBatchItemFailures only the
records not named in batchItemFailures are deleted; an invalid response fails the whole
batch. Records that are not deleted reappear after the visibility timeout, and the queue's
RedrivePolicy (applied by moto on receive) moves them to the DLQ after maxReceiveCount.

A mapping runs several batches at once, as Lambda's scales its pollers: up to
ScalingConfig.MaximumConcurrency or the function's reserved concurrency, whichever is lower.
It adds a batch for each receive that found messages and drops one for each that found none,
so an idle queue costs one long poll at a time.
A throttled invoke is retried while the batch is still invisible; a batch still throttled
when its time runs out is left alone and reappears after the visibility timeout, nothing
deleted, nothing failed. A mapping whose function has no concurrency free does not receive
at all, so a throttle does not spend the messages' receives (and never drives them to the
DLQ): they wait in the queue.
"""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from botocore.exceptions import BotoCoreError, ClientError

from local.aws import sqs_client
from local.runtime import InvokeResult, LogSink, print_line
from local.template import REGION, Function, Queue, SqsEvent, StackTemplate

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient
    from mypy_boto3_sqs.type_defs import MessageTypeDef

Invoke = Callable[[str, Any], InvokeResult]
# Whether the function could run one more invocation now (LambdaRuntime.has_headroom).
Headroom = Callable[[str], bool]
# Whether the fault plan delivers the batch just received from this queue twice.
Duplicate = Callable[[str], bool]
# ReceiveMessage returns at most 10 messages per call, whatever the batch size.
MAX_MESSAGES_PER_RECEIVE: Final = 10
WAIT_TIME_SECONDS: Final = 1
ERROR_BACKOFF_SECONDS: Final = 1.0
# Concurrent batches of a mapping with neither MaximumConcurrency nor reserved concurrency:
# the five pollers Lambda starts an SQS mapping with (it scales further only under load).
DEFAULT_BATCH_CONCURRENCY: Final = 5
# How often a waiting batch slot looks whether the mapping stopped.
SCALE_CHECK_SECONDS: Final = 0.5
# First and longest pause between tries of a throttled batch.
THROTTLE_BACKOFF_SECONDS: Final = 0.05
MAX_THROTTLE_BACKOFF_SECONDS: Final = 1.0


def batch_concurrency(function: Function, event: SqsEvent) -> int:
    """How many batches a mapping runs at once: MaximumConcurrency or the function's reserved
    concurrency, whichever is lower, else the local default."""
    limits = [
        limit
        for limit in (event.maximum_concurrency, function.reserved_concurrency)
        if limit is not None
    ]
    return min(limits) if limits else DEFAULT_BATCH_CONCURRENCY


def sqs_record(message: MessageTypeDef, queue: Queue) -> dict[str, Any]:
    """One record of the SQS event Lambda builds from a received message."""
    attributes = dict(message.get("Attributes") or {})
    message_attributes: dict[str, Any] = {}
    for name, value in (message.get("MessageAttributes") or {}).items():
        binary = value.get("BinaryValue")
        message_attributes[name] = {
            "stringValue": value.get("StringValue"),
            "binaryValue": base64.b64encode(binary).decode() if binary is not None else None,
            "stringListValues": list(value.get("StringListValues") or []),
            "binaryListValues": [
                base64.b64encode(item).decode() for item in value.get("BinaryListValues") or []
            ],
            "dataType": value["DataType"],
        }
        # Lambda leaves out the value fields a message attribute does not have.
        message_attributes[name] = {
            key: item for key, item in message_attributes[name].items() if item is not None
        }
    record: dict[str, Any] = {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message.get("Body", ""),
        "attributes": attributes,
        "messageAttributes": message_attributes,
        "md5OfBody": message.get("MD5OfBody"),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue.arn,
        "awsRegion": REGION,
    }
    if "MD5OfMessageAttributes" in message:
        record["md5OfMessageAttributes"] = message["MD5OfMessageAttributes"]
    return record


def sqs_event(messages: Iterable[MessageTypeDef], queue: Queue) -> dict[str, Any]:
    return {"Records": [sqs_record(message, queue) for message in messages]}


def failed_message_ids(
    result: InvokeResult, message_ids: list[str], *, reports_batch_item_failures: bool
) -> set[str]:
    """The messages of a batch that must stay in the queue after this invoke."""
    everything = set(message_ids)
    if not result.ok:
        return everything
    if not reports_batch_item_failures:
        return set()
    failed = _reported_failures(result.payload)
    # An invalid response, or one naming a message not in the batch, fails the whole batch.
    if failed is None or not failed <= everything:
        return everything
    return failed


def _reported_failures(response: Any) -> set[str] | None:
    """The itemIdentifiers of a batch response; None when the response is invalid."""
    # A null or empty response, or one without batchItemFailures, is complete success.
    if response is None or response in ("", {}):
        return set()
    if not isinstance(response, dict):
        return None
    failures = response.get("batchItemFailures") or []
    if not isinstance(failures, list):
        return None
    identifiers = [
        failure.get("itemIdentifier") if isinstance(failure, dict) else None for failure in failures
    ]
    if not all(isinstance(identifier, str) and identifier for identifier in identifiers):
        return None
    return {str(identifier) for identifier in identifiers}


@dataclass(frozen=True)
class BatchOutcome:
    received: int
    deleted: int
    failed: int
    # The batch never ran: every invoke of it was throttled; its records wait in the queue.
    throttled: bool = False


class SqsPoller:
    """The event source mapping of one SQS event: receive, invoke, delete, in `concurrency`
    batches at once."""

    def __init__(
        self,
        function: Function,
        event: SqsEvent,
        queue: Queue,
        *,
        endpoint_url: str,
        invoke: Invoke,
        log: LogSink = print_line,
        batches: LogSink | None = None,
        concurrency: int | None = None,
        headroom: Headroom | None = None,
        duplicate: Duplicate | None = None,
    ) -> None:
        """`batches` takes the line of a batch that succeeded whole (default: `log`)."""
        self.function = function
        self._duplicate = duplicate
        self.event = event
        self.queue = queue
        self.concurrency = (
            batch_concurrency(function, event) if concurrency is None else concurrency
        )
        self._invoke = invoke
        self._headroom = headroom
        self._log = log
        self._batches = batches or log
        self._sqs: SQSClient = sqs_client(endpoint_url)
        self._stop = threading.Event()
        # One thread per batch slot: each receives and runs its own batches; slots beyond
        # the first work only while there are messages (_scale).
        self._active = 1
        self._scaling = threading.Condition()
        self._threads = [
            threading.Thread(
                target=self._run,
                args=(slot,),
                name=f"sqs-{function.logical_id}-{event.name}-{slot}",
                daemon=True,
            )
            for slot in range(self.concurrency)
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    @property
    def running(self) -> bool:
        return any(thread.is_alive() for thread in self._threads)

    @property
    def active_batches(self) -> int:
        """Batch slots receiving now (1 while the queue is idle, up to `concurrency`)."""
        with self._scaling:
            return self._active

    def request_stop(self) -> None:
        """Stop after the current receive (a long poll of at most a second or two)."""
        self._stop.set()
        with self._scaling:
            self._scaling.notify_all()

    def stop(self, timeout: float = 10.0) -> None:
        self.request_stop()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            if thread.is_alive():
                thread.join(max(0.0, deadline - time.monotonic()))

    def _run(self, slot: int) -> None:
        while self._await_turn(slot):
            if self._headroom is not None and not self._headroom(self.function.logical_id):
                # Receiving now would only spend the messages' receives on a throttle.
                self._stop.wait(THROTTLE_BACKOFF_SECONDS)
                continue
            try:
                outcome = self.poll_once()
            except (BotoCoreError, ClientError) as error:
                if self._stop.is_set():
                    return
                self._log(f"[sqs {self.queue.logical_id}] receive failed: {error}")
                self._stop.wait(ERROR_BACKOFF_SECONDS)
                continue
            self._scale(busy=outcome.received > 0 and not outcome.throttled)
            if outcome.throttled:
                self._stop.wait(MAX_THROTTLE_BACKOFF_SECONDS)

    def _await_turn(self, slot: int) -> bool:
        """Wait until batch slot `slot` is wanted; False once the mapping stops."""
        with self._scaling:
            while slot >= self._active and not self._stop.is_set():
                self._scaling.wait(SCALE_CHECK_SECONDS)
        return not self._stop.is_set()

    def _scale(self, *, busy: bool) -> None:
        # A batch that found messages wakes one more slot (up to the cap); an empty receive
        # lets one go, so an idle mapping long-polls its queue once, not `concurrency` times.
        with self._scaling:
            if busy:
                self._active = min(self.concurrency, self._active + 1)
                self._scaling.notify_all()
            else:
                self._active = max(1, self._active - 1)

    def _receive(self, count: int) -> list[MessageTypeDef]:
        response = self._sqs.receive_message(
            QueueUrl=self.queue.url,
            MaxNumberOfMessages=min(count, MAX_MESSAGES_PER_RECEIVE),
            WaitTimeSeconds=WAIT_TIME_SECONDS,
            # AttributeNames under its current name: all system attributes, receive count included.
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],
        )
        return list(response.get("Messages") or [])

    def _gather(self) -> list[MessageTypeDef]:
        """Up to BatchSize messages, waiting at most the batching window for a full batch."""
        messages = self._receive(self.event.batch_size)
        window_ends = time.monotonic() + self.event.maximum_batching_window
        while (
            messages
            and len(messages) < self.event.batch_size
            and time.monotonic() < window_ends
            and not self._stop.is_set()
        ):
            messages.extend(self._receive(self.event.batch_size - len(messages)))
        return messages

    def poll_once(self) -> BatchOutcome:
        """One receive-invoke-delete cycle; public so tests can drive it step by step."""
        # Counted from before the receive: the messages' visibility timeout starts no earlier.
        # Past that moment they may be visible again and another batch may take them.
        invisible_until = time.monotonic() + self.queue.visibility_timeout
        messages = self._gather()
        if not messages:
            return BatchOutcome(received=0, deleted=0, failed=0)
        event = sqs_event(messages, self.queue)
        result = self._invoke_through_throttles(event, invisible_until - self.function.timeout)
        if result.throttled:
            self._log(
                f"SQS {self.queue.logical_id} -> {self.function.logical_id}: {len(messages)}"
                f" records throttled ({result.throttle_reason}); left in the queue, visible"
                " again after the visibility timeout"
            )
            return BatchOutcome(received=len(messages), deleted=0, failed=0, throttled=True)
        ids = [message["MessageId"] for message in messages]
        failed = failed_message_ids(
            result, ids, reports_batch_item_failures=self.event.reports_batch_item_failures
        )
        if self._duplicate is not None and self._duplicate(self.queue.logical_id):
            # At-least-once delivery: the same messages reach the function a second time.
            again = self._invoke_through_throttles(event, invisible_until - self.function.timeout)
            self._log(f"SQS {self.queue.logical_id}: {len(messages)} records delivered twice")
            if not again.throttled:
                failed |= failed_message_ids(
                    again, ids, reports_batch_item_failures=self.event.reports_batch_item_failures
                )
        done = [message for message in messages if message["MessageId"] not in failed]
        self._delete(done)
        status = "ok" if result.ok else f"{result.error_type}: {result.error_message}"
        # A batch that went through whole is routine (the audit writer's follows every
        # request): it goes to its own sink; failures and retries go to the log.
        log = self._batches if result.ok and not failed else self._log
        log(
            f"SQS {self.queue.logical_id} -> {self.function.logical_id}: {len(messages)} records,"
            f" {len(done)} deleted, {len(failed)} left for retry ({status})"
        )
        return BatchOutcome(received=len(messages), deleted=len(done), failed=len(failed))

    def _invoke_through_throttles(self, event: dict[str, Any], give_up_at: float) -> InvokeResult:
        """Invoke, trying a throttled invoke again (with backoff) while an invocation started
        then would still end before the batch's messages become visible again."""
        backoff = THROTTLE_BACKOFF_SECONDS
        while True:
            result = self._invoke(self.function.logical_id, event)
            if not result.throttled or time.monotonic() + backoff > give_up_at:
                return result
            if self._stop.wait(backoff):
                return result
            backoff = min(backoff * 2, MAX_THROTTLE_BACKOFF_SECONDS)

    def _delete(self, messages: list[MessageTypeDef]) -> None:
        for start in range(0, len(messages), MAX_MESSAGES_PER_RECEIVE):
            chunk = messages[start : start + MAX_MESSAGES_PER_RECEIVE]
            self._sqs.delete_message_batch(
                QueueUrl=self.queue.url,
                Entries=[
                    {"Id": str(index), "ReceiptHandle": message["ReceiptHandle"]}
                    for index, message in enumerate(chunk)
                ],
            )


def stop_pollers(pollers: Iterable[SqsPoller]) -> None:
    """Stop every poller; all are told first so their last long polls end together."""
    pollers = list(pollers)
    for poller in pollers:
        poller.request_stop()
    for poller in pollers:
        poller.stop()


def create_pollers(
    template: StackTemplate,
    endpoint_url: str,
    invoke: Invoke,
    *,
    log: LogSink = print_line,
    batches: LogSink | None = None,
    headroom: Headroom | None = None,
    duplicate: Duplicate | None = None,
) -> list[SqsPoller]:
    """A poller for every enabled SQS event of the template (not started)."""
    return [
        SqsPoller(
            function,
            event,
            template.queues[event.queue_id],
            endpoint_url=endpoint_url,
            invoke=invoke,
            log=log,
            batches=batches,
            headroom=headroom,
            duplicate=duplicate,
        )
        for function, event in template.sqs_events()
        if event.enabled
    ]
