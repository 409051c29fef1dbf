"""A job item's lease: which run may write the job's progress, so a job's steps never run
twice at once however often its queue delivers a message.

A run claims the lease (conditional UpdateItem: no run holds it, or the holder's heartbeat
is older than `stale_after`: that run has died), and every later write of the run is
conditional on still holding it. A run that stops early frees the lease (an old heartbeat)
so the job's next message is taken at once.
"""

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Final

from psap.clock import format_timestamp, utc_now
from psap.storage.aws_errors import ConditionFailed, translated
from psap.storage.dynamodb import dynamodb

_FREE: Final = "2000-01-01T00:00:00.000Z"  # a heartbeat any claim finds stale


class LeaseLost(Exception):
    """Another run holds the job's lease now: this run's writes are refused."""


class JobLease:
    """The lease of one job item (`runId`, `heartbeat`, and a `status` attribute)."""

    def __init__(self, table: str, key: Mapping[str, Any], run_id: str, *, what: str) -> None:
        self._table = table
        self._key = dict(key)
        self.run_id = run_id
        self._what = what

    def claim(
        self,
        stale_after: timedelta,
        open_states: Sequence[str],
        changes: Mapping[str, Any],
        *,
        now: datetime | None = None,
    ) -> dict[str, Any] | None:
        """Takes the lease of a job in one of `open_states`, setting `changes` (attribute
        values) with it; the item as it now is, or None when a live run holds it."""
        moment = now or utc_now()
        names = {"#status": "status", **{f"#c{n}": name for n, name in enumerate(changes)}}
        values: dict[str, Any] = {
            ":run": {"S": self.run_id},
            ":now": {"S": format_timestamp(moment)},
            ":stale": {"S": format_timestamp(moment - stale_after)},
            **{f":c{n}": value for n, value in enumerate(changes.values())},
            **{f":open{n}": {"S": state} for n, state in enumerate(open_states)},
        }
        assignments = ", ".join(f"#c{n} = :c{n}" for n in range(len(changes)))
        opened = ", ".join(f":open{n}" for n in range(len(open_states)))
        try:
            with translated(self._what):
                answer = dynamodb().update_item(
                    TableName=self._table,
                    Key=self._key,
                    UpdateExpression="SET runId = :run, heartbeat = :now"
                    + (f", {assignments}" if assignments else ""),
                    ConditionExpression=f"#status IN ({opened}) AND "
                    "(attribute_not_exists(heartbeat) OR heartbeat < :stale)",
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues=values,
                    ReturnValues="ALL_NEW",
                )
        except ConditionFailed:
            return None
        return dict(answer["Attributes"])

    def write(self, changes: Mapping[str, Any], remove: Sequence[str] = ()) -> None:
        """Sets `changes` (attribute values) and a new heartbeat, removes `remove`, only while
        this run holds the lease (LeaseLost otherwise)."""
        names = {f"#c{n}": name for n, name in enumerate(changes)}
        names.update({f"#r{n}": name for n, name in enumerate(remove)})
        values: dict[str, Any] = {
            ":run": {"S": self.run_id},
            **{f":c{n}": value for n, value in enumerate(changes.values())},
        }
        assignments = [f"#c{n} = :c{n}" for n in range(len(changes))]
        if "heartbeat" not in changes and "heartbeat" not in remove:
            assignments.insert(0, "heartbeat = :now")
            values[":now"] = {"S": format_timestamp(utc_now())}
        expression = "SET " + ", ".join(assignments)
        if remove:
            expression += " REMOVE " + ", ".join(f"#r{n}" for n in range(len(remove)))
        try:
            with translated(self._what):
                dynamodb().update_item(
                    TableName=self._table,
                    Key=self._key,
                    UpdateExpression=expression,
                    ConditionExpression="runId = :run",
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues=values,
                )
        except ConditionFailed as error:
            raise LeaseLost(self._what) from error

    def free(self) -> None:
        """Gives the lease up: the job's next message is taken at once."""
        self.write({"heartbeat": {"S": _FREE}})
