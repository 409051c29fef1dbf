"""SQS fair queues in the embedded AWS: a tenant's backlog does not delay the other tenants.

A standard SQS queue whose messages carry a MessageGroupId is a fair queue: SQS counts, per
group (a tenant here), the messages in flight and the share of the consumers' recent
processing time, and calls a group noisy when it holds more than 10 % of the messages in
flight with at least 30 of its own, or more than 10 % of the processing time. While any
quiet group's message is visible, a receive returns quiet groups' messages first; noisy
groups' messages come after them, the group with the fewest in flight first. Nothing is
dropped or throttled: a noisy group's messages wait longer, in their own order
(docs/capacity.md, "Fair queues"; AWS: "How Amazon SQS fair queues work").

moto delivers a standard queue in arrival order whatever the group, so one tenant's surge
in the CAD intake or webhook queue would delay every other tenant's updates locally as it
would not on AWS. Here a standard queue's visible messages are ordered as above before moto's
receive walks them. FIFO queues are unchanged. The processing time of a message is the time
from its last receive to its delete, kept for the last PROCESSING_WINDOW seconds.
"""

import threading
import time
from collections import Counter, deque
from typing import Any, Final

# AWS's thresholds (approximate on AWS, exact here).
NOISY_SHARE: Final = 0.10
NOISY_MINIMUM_IN_FLIGHT: Final = 30
PROCESSING_WINDOW: Final = 60.0

_RECEIVED_AT: Final = "_psap_received_at"


class _Processing:
    """Each group's recent processing time on one queue."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done: deque[tuple[float, str, float]] = deque()  # (deleted at, group, seconds)

    def add(self, group: str, seconds: float, now: float) -> None:
        with self._lock:
            self._done.append((now, group, seconds))

    def shares(self, now: float) -> dict[str, float]:
        with self._lock:
            while self._done and self._done[0][0] < now - PROCESSING_WINDOW:
                self._done.popleft()
            spent: dict[str, float] = {}
            for _, group, seconds in self._done:
                spent[group] = spent.get(group, 0.0) + seconds
        total = sum(spent.values())
        return {group: seconds / total for group, seconds in spent.items()} if total else {}


def _processing(queue: Any) -> _Processing:
    processing: _Processing | None = getattr(queue, "_psap_processing", None)
    if processing is None:
        processing = _Processing()
        queue._psap_processing = processing
    return processing


def fair_order(messages: list[Any], in_flight: list[Any], shares: dict[str, float]) -> list[Any]:
    """The visible messages in the order a fair queue delivers them (stable within a rank)."""
    if not any(message.group_id for message in messages):
        return messages
    flying: Counter[str] = Counter(m.group_id for m in in_flight if m.group_id is not None)
    total = sum(flying.values())

    def noisy(group: str) -> bool:
        by_concurrency = flying[group] >= NOISY_MINIMUM_IN_FLIGHT and (
            flying[group] > NOISY_SHARE * total
        )
        return by_concurrency or shares.get(group, 0.0) > NOISY_SHARE

    ranks: dict[str, tuple[int, int]] = {}

    def rank(message: Any) -> tuple[int, int]:
        group = message.group_id
        if group is None:
            return (0, 0)  # a message without a group is a tenant of its own: quiet
        if group not in ranks:
            ranks[group] = (1, flying[group]) if noisy(group) else (0, 0)
        return ranks[group]

    return sorted(messages, key=rank)


def install() -> None:
    """Orders moto's standard queues fairly (idempotent)."""
    from moto.sqs.models import Message, Queue  # noqa: PLC0415 - moto loads lazily

    if getattr(Queue, "_psap_fair", False):
        return
    arrival_order = Queue.messages.fget  # type: ignore[attr-defined]
    mark_received = Message.mark_received
    delete_message = Queue.delete_message

    def messages(self: Queue) -> list[Any]:
        visible: list[Any] = arrival_order(self)
        if self.fifo_queue or len(visible) < 2:
            return visible
        now = time.time()
        in_flight = [m for m in self._pending_messages if not m.visible]
        return fair_order(visible, in_flight, _processing(self).shares(now))

    def received(self: Message, visibility_timeout: int | None = None) -> None:
        setattr(self, _RECEIVED_AT, time.time())
        mark_received(self, visibility_timeout)

    def delete(self: Queue, receipt_handle: str) -> None:
        if not self.fifo_queue:
            for message in self._messages:
                if message.group_id is not None and message.had_receipt_handle(receipt_handle):
                    started = getattr(message, _RECEIVED_AT, None)
                    if started is not None:
                        now = time.time()
                        _processing(self).add(message.group_id, now - started, now)
                    break
        delete_message(self, receipt_handle)

    Queue.messages = property(messages)  # type: ignore[assignment,method-assign]
    Message.mark_received = received  # type: ignore[method-assign]
    Queue.delete_message = delete  # type: ignore[method-assign]
    Queue._psap_fair = True  # type: ignore[attr-defined]
