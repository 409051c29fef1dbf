"""What a warm authorizer container remembers of the tokens it refused, so that a flood of
bad tokens costs no DynamoDB read after the first (docs/design.md, "The cheap refusal path").

Two bounded, in-memory structures, one per container (an authorizer container serves one
request at a time, so neither needs a lock):

- `RefusalMemory`: the hashes of refused tokens, each for `REMEMBER_SECONDS`, at most
  `REMEMBERED_TOKENS` of them (least recently refused dropped first). Only refusals are kept:
  an accepted token is read every time, so a revocation is seen at the next read.
- `RefusalBudget`: refusals per source IP in the current minute, for at most `TRACKED_SOURCES`
  addresses. A source over its budget gets no read for a token whose form cannot be checked
  offline (the legacy form); a checksummed token is still read, so a valid one works.

Standard library only: the authorizer's cold start stays light.
"""

from collections import OrderedDict
from dataclasses import dataclass
from enum import StrEnum

REMEMBER_SECONDS = 60.0
REMEMBERED_TOKENS = 10_000  # about 2 MB of hashes at most
REFUSALS_PER_SOURCE = 20  # per source IP and BUDGET_WINDOW_SECONDS, per container
BUDGET_WINDOW_SECONDS = 60.0
TRACKED_SOURCES = 10_000


class RefusalReason(StrEnum):
    """Why a token was refused: the metric's dimension, so a small closed set."""

    MISSING = "missing"  # no bearer token
    MALFORMED = "malformed"
    BAD_CHECKSUM = "bad-checksum"
    OTHER_KIND = "other-kind"  # the other direction's credential
    RETIRED_FORM = "retired-form"  # a legacy token after the operator retired the form
    REMEMBERED = "remembered"  # refused moments ago: not read again
    OVER_BUDGET = "over-budget"  # the source refused too often: a legacy token is not read
    UNKNOWN = "unknown"
    REVOKED = "revoked"
    EXPIRED = "expired"


@dataclass(frozen=True)
class RememberedRefusal:
    """A refusal as first decided after a read: replayed without one."""

    until: float
    why: str
    credential_id: str | None


class RefusalMemory:
    def __init__(
        self, seconds: float = REMEMBER_SECONDS, capacity: int = REMEMBERED_TOKENS
    ) -> None:
        self.seconds = seconds
        self.capacity = capacity
        self._refusals: OrderedDict[str, RememberedRefusal] = OrderedDict()

    def recall(self, hashed_token: str, now: float) -> RememberedRefusal | None:
        refusal = self._refusals.get(hashed_token)
        if refusal is None:
            return None
        if now >= refusal.until:
            del self._refusals[hashed_token]
            return None
        return refusal

    def remember(
        self, hashed_token: str, now: float, why: str, *, credential_id: str | None
    ) -> None:
        self._refusals[hashed_token] = RememberedRefusal(now + self.seconds, why, credential_id)
        self._refusals.move_to_end(hashed_token)
        while len(self._refusals) > self.capacity:
            self._refusals.popitem(last=False)

    def __len__(self) -> int:
        return len(self._refusals)


class RefusalBudget:
    """A fixed one-minute window per source: cheap, and exact enough for a flood."""

    def __init__(
        self,
        refusals: int = REFUSALS_PER_SOURCE,
        window_seconds: float = BUDGET_WINDOW_SECONDS,
        capacity: int = TRACKED_SOURCES,
    ) -> None:
        self.refusals = refusals
        self.window_seconds = window_seconds
        self.capacity = capacity
        self._windows: OrderedDict[str, tuple[float, int]] = OrderedDict()

    def _count(self, source_ip: str, now: float) -> int:
        window = self._windows.get(source_ip)
        if window is None or now - window[0] >= self.window_seconds:
            return 0
        return window[1]

    def exhausted(self, source_ip: str | None, now: float) -> bool:
        return source_ip is not None and self._count(source_ip, now) >= self.refusals

    def spend(self, source_ip: str | None, now: float) -> None:
        if source_ip is None:
            return
        count = self._count(source_ip, now)
        started = self._windows[source_ip][0] if count else now
        self._windows[source_ip] = (started, count + 1)
        self._windows.move_to_end(source_ip)
        while len(self._windows) > self.capacity:
            self._windows.popitem(last=False)


@dataclass
class RefusalGuard:
    """The container's memory and budget, handed to `authorize` by the handler, and whether
    tokens of the legacy form (no checksum) are still read at all."""

    memory: RefusalMemory
    budget: RefusalBudget
    legacy_tokens_accepted: bool = True

    @classmethod
    def for_container(cls, legacy_tokens_accepted: bool = True) -> "RefusalGuard":
        return cls(RefusalMemory(), RefusalBudget(), legacy_tokens_accepted)
