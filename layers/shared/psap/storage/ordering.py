"""The ordering guard for records a connector keeps updating (incidents, events).

Updates can arrive out of order (SQS redelivery, retries, parallel consumers). Each write
carries the caller's `SourceOrder` (the source's event time, then a sequence for updates
with the same time); the store writes only when it is newer than the stored one, with a
conditional write, so an older update never overwrites newer data.
"""

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from psap.clock import format_timestamp_micro


@dataclass(frozen=True, order=True)
class SourceOrder:
    """When the source produced the update; `sequence` breaks ties between equal times."""

    time: datetime
    sequence: int = 0

    def key(self) -> str:
        """Fixed width, microseconds: string order in DynamoDB equals time-then-sequence
        order (`2026-11-23T02:32:15.123456Z#00000000000000000007`)."""
        moment = self.time if self.time.tzinfo else self.time.replace(tzinfo=UTC)
        stamp = format_timestamp_micro(moment)
        if self.sequence < 0:
            raise ValueError("sequence must not be negative")
        return f"{stamp}#{self.sequence:020d}"


class UpsertOutcome(StrEnum):
    CREATED = "CREATED"  # a new record with a new service id
    UPDATED = "UPDATED"  # the existing record now holds this update
    STALE = "STALE"  # not newer than what is stored (older, or a replay): nothing written


@dataclass(frozen=True)
class UpsertResult:
    id: int  # the service's integer id of the record, whatever the outcome
    outcome: UpsertOutcome
