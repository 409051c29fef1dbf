"""DynamoDB's per-partition capacity, metered and (when asked) enforced by the embedded AWS.

On DynamoDB, on-demand or provisioned, one partition key value serves at most 1,000 write
units and 3,000 read units per second; past that, requests to that key are refused with
ProvisionedThroughputExceededException whatever the table's capacity. moto counts nothing.
Here every item request is counted as DynamoDB counts it (docs/capacity.md, "DynamoDB
partition capacity"):

- a write: the item's size rounded up to 1 KB per WCU, the larger of the old and the new
  item for a put that replaces or an update; a delete: the old item (1 WCU if none);
- a read: 4 KB per RCU; eventually consistent reads half, strongly consistent full;
- transactional writes and reads twice the units;
- Query and Scan: the sizes of the items read (before any filter), summed per partition key
  and then rounded; BatchWriteItem and BatchGetItem: each item on its own;
- a global secondary index write counts on the index's partition key too, named
  `table/index`, by the item's projected size (a changed index key: a delete on the old key
  and a put on the new one).

The meter keeps, per table (or `table/index`) and partition key, what each second consumed
(a ring of the last seconds, per operation too) and, per key pattern (ids replaced by
`{id}`), the peak any one key of it reached in one second and how many of its requests were
throttled. With a SCALE set (`psap-local --partition-capacity SCALE`), a key that has
already consumed 1,000/SCALE WCU (3,000/SCALE RCU) in the current second is refused,
before the request changes anything, with DynamoDB's own error body, which botocore's
standard retry mode retries; each refusal is one log line.

Simplifications, written down: a request is refused only once its key has reached the limit
(the request that crosses it passes, as burst capacity would let it); a BatchWriteItem or
BatchGetItem naming a refused key is refused whole (DynamoDB returns such items unprocessed
and refuses the call only when all are); a transaction naming one is refused with
ProvisionedThroughputExceededException too (DynamoDB may cancel it with a ThrottlingError
reason instead); no adaptive capacity or partition splits.
"""

from __future__ import annotations

import base64
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Final

WRITE_UNIT_BYTES: Final = 1024
READ_UNIT_BYTES: Final = 4096
PARTITION_WCU: Final = 1000  # per partition key value, per second, on DynamoDB
PARTITION_RCU: Final = 3000
SECONDS_KEPT: Final = 120
REPORT_PATH: Final = "/_psap/capacity"
RESET_PATH: Final = "/_psap/capacity/reset"
_ERROR_TYPE: Final = "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException"
# What DynamoDB answers for a hot key of an on-demand table.
_ERROR_MESSAGE: Final = (
    "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically"
    " scaling your table or index so please try again shortly. If exceptions persist, check if"
    " you have a hot key:"
    " https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html"
)

# ------------------------------------------------------------------------------ item sizes


def attribute_size(value: Any) -> int:
    """Bytes of one attribute value as DynamoDB sizes it: a string its UTF-8 bytes, a number
    one byte per two significant digits plus one, binary its bytes, a boolean or null one
    byte, a list or map 3 bytes plus one per element plus the elements (a map's names too),
    a set the sum of its elements. `value` is the wire form ({"S": "x"}) or moto's
    DynamoType."""
    kind, content = _typed(value)
    if kind == "S":
        return len(str(content).encode())
    if kind == "N":
        return _number_size(str(content))
    if kind == "B":
        return len(_binary(content))
    if kind in {"BOOL", "NULL"}:
        return 1
    if kind == "SS":
        return sum(len(str(element).encode()) for element in content)
    if kind == "NS":
        return sum(_number_size(str(element)) for element in content)
    if kind == "BS":
        return sum(len(_binary(element)) for element in content)
    if kind == "L":
        return 3 + sum(1 + attribute_size(element) for element in content)
    if kind == "M":
        return 3 + sum(
            1 + len(str(name).encode()) + attribute_size(element)
            for name, element in content.items()
        )
    return 0


def item_size(attributes: Mapping[str, Any]) -> int:
    """Bytes of an item: each attribute's name (UTF-8) and value."""
    return sum(len(name.encode()) + attribute_size(value) for name, value in attributes.items())


def _typed(value: Any) -> tuple[str, Any]:
    kind = getattr(value, "type", None)
    if kind is not None:  # moto's DynamoType
        return str(kind), value.value
    (kind, content), *_ = value.items()
    return str(kind), content


def _number_size(text: str) -> int:
    try:
        digits = Decimal(text).normalize().as_tuple().digits
    except InvalidOperation:
        return (sum(character.isdigit() for character in text) + 1) // 2 + 1
    significant = len(digits) or 1
    return (significant + 1) // 2 + 1


def _binary(content: Any) -> bytes:
    if isinstance(content, bytes):
        return content
    try:
        return base64.b64decode(str(content), validate=True)
    except ValueError:
        return str(content).encode()


def write_units(size: int, *, transactional: bool = False) -> float:
    """WCU of one item write: 1 per started KB (at least 1), twice in a transaction."""
    units = max(1, math.ceil(size / WRITE_UNIT_BYTES))
    return float(units * (2 if transactional else 1))


def read_units(size: int, *, consistent: bool, transactional: bool = False) -> float:
    """RCU of reading `size` bytes: 1 per started 4 KB (at least 1) strongly consistent,
    half eventually consistent, twice in a transaction."""
    units = max(1, math.ceil(size / READ_UNIT_BYTES))
    if transactional:
        return float(2 * units)
    return float(units) if consistent else units / 2


# ------------------------------------------------------------------------------ key patterns

_KEPT_SEGMENT = re.compile(r"^[A-Za-z][A-Za-z_]{0,15}$")


def key_pattern(key: str) -> str:
    """The key with its ids replaced by `{id}`: each `#`-separated part that is not a word
    of letters (tenant ids, numbers, uuids, dates, hashes, shards, quoted names)."""
    return "#".join(
        part if _KEPT_SEGMENT.match(part) and not _looks_generated(part) else "{id}"
        for part in key.split("#")
    )


def _looks_generated(part: str) -> bool:
    # A word of letters that is long and mixed case (a hash or token in base32/base64).
    return len(part) > 12 and not (part.isupper() or part.islower())


# ------------------------------------------------------------------------------ the meter


@dataclass(frozen=True)
class Consumption:
    """Units one request consumed on one partition key (of a table or `table/index`)."""

    table: str
    key: str
    operation: str
    wcu: float = 0.0
    rcu: float = 0.0


@dataclass
class _Peak:
    wcu: float = 0.0
    rcu: float = 0.0
    wcu_key: str = ""
    rcu_key: str = ""
    throttled: int = 0


@dataclass
class _Second:
    second: int
    # (table, key, operation) -> [wcu, rcu, consumptions: items or queried keys]
    consumed: dict[tuple[str, str, str], list[float]] = field(default_factory=dict)


class ThroughputExceeded(Exception):
    """A key past its limit: the request is refused with DynamoDB's error."""

    def __init__(self, operation: str, table: str, key: str, *, writing: bool) -> None:
        super().__init__(f"DynamoDB throttled {operation} on {table} key {key}")
        self.operation = operation
        self.table = table
        self.key = key
        self.writing = writing


class PartitionMeter:
    """Consumed capacity per table and partition key, per second; the throttle's limits."""

    def __init__(
        self,
        *,
        seconds_kept: int = SECONDS_KEPT,
        clock: Callable[[], float] = time.time,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.scale: float | None = None
        self._clock = clock
        self._log = log
        self._lock = threading.RLock()
        self._ring: deque[_Second] = deque(maxlen=seconds_kept)
        # (table, key) -> [second, wcu, rcu] of the key's current second.
        self._current: dict[tuple[str, str], list[float]] = {}
        self._peaks: dict[tuple[str, str], _Peak] = {}
        self._since = clock()

    def enforce(self, scale: float | None, log: Callable[[str], None] | None = None) -> None:
        """Refuse past 1,000/scale WCU and 3,000/scale RCU per key and second (None: never)."""
        if scale is not None and scale <= 0:
            raise ValueError("the partition capacity scale must be more than 0")
        self.scale = scale
        if log is not None:
            self._log = log

    @property
    def limits(self) -> tuple[float, float] | None:
        if self.scale is None:
            return None
        return PARTITION_WCU / self.scale, PARTITION_RCU / self.scale

    def check(self, operation: str, targets: Iterable[tuple[str, str, bool]]) -> None:
        """Raises ThroughputExceeded for the first (table, key, writing) already at its limit
        this second, and counts and logs it."""
        limits = self.limits
        if limits is None:
            return
        second = int(self._clock())
        with self._lock:
            for table, key, writing in targets:
                current = self._current.get((table, key))
                if current is None or current[0] != second:
                    continue
                used, limit = (current[1], limits[0]) if writing else (current[2], limits[1])
                if used >= limit:
                    self._peak(table, key).throttled += 1
                    refusal = ThroughputExceeded(operation, table, key, writing=writing)
                    break
            else:
                return
        if self._log is not None:
            self._log(str(refusal))
        raise refusal

    def record(self, consumptions: Iterable[Consumption]) -> None:
        second = int(self._clock())
        with self._lock:
            if not self._ring or self._ring[-1].second != second:
                self._ring.append(_Second(second))
            ring = self._ring[-1].consumed
            for used in consumptions:
                units = ring.setdefault((used.table, used.key, used.operation), [0.0, 0.0, 0])
                units[0] += used.wcu
                units[1] += used.rcu
                units[2] += 1
                current = self._current.get((used.table, used.key))
                if current is None or current[0] != second:
                    current = self._current[(used.table, used.key)] = [second, 0.0, 0.0]
                current[1] += used.wcu
                current[2] += used.rcu
                peak = self._peak(used.table, used.key)
                if current[1] > peak.wcu:
                    peak.wcu, peak.wcu_key = current[1], used.key
                if current[2] > peak.rcu:
                    peak.rcu, peak.rcu_key = current[2], used.key
            if len(self._current) > 200_000:  # keys of past seconds are of no use
                self._current = {
                    key: value for key, value in self._current.items() if value[0] == second
                }

    def _peak(self, table: str, key: str) -> _Peak:
        return self._peaks.setdefault((table, key_pattern(key)), _Peak())

    def report(self) -> dict[str, Any]:
        """Per table, per key pattern: the peak WCU and RCU one key reached in one second,
        which key, and the requests throttled; with the scale and limits in force."""
        with self._lock:
            tables: dict[str, dict[str, Any]] = {}
            for (table, pattern), peak in sorted(self._peaks.items()):
                tables.setdefault(table, {})[pattern] = {
                    "peakWcu": round(peak.wcu, 1),
                    "peakRcu": round(peak.rcu, 1),
                    "peakWcuKey": peak.wcu_key,
                    "peakRcuKey": peak.rcu_key,
                    "throttled": peak.throttled,
                }
            limits = self.limits
            return {
                "scale": self.scale,
                "limits": {"wcu": limits[0], "rcu": limits[1]} if limits else None,
                "since": round(self._since, 3),
                "until": round(self._clock(), 3),
                "throttled": sum(peak.throttled for peak in self._peaks.values()),
                "tables": tables,
            }

    def recent(self, seconds: int) -> list[dict[str, Any]]:
        """The last `seconds` seconds of the ring: what each key consumed, per operation."""
        with self._lock:
            kept = list(self._ring)[-seconds:] if seconds > 0 else []
            return [
                {
                    "second": entry.second,
                    "consumed": [
                        {
                            "table": table,
                            "key": key,
                            "operation": operation,
                            "wcu": wcu,
                            "rcu": rcu,
                            "reads": int(count) if rcu else 0,
                            "writes": int(count) if wcu else 0,
                        }
                        for (table, key, operation), (wcu, rcu, count) in sorted(
                            entry.consumed.items()
                        )
                    ],
                }
                for entry in kept
            ]

    def reset(self) -> dict[str, Any]:
        """Starts a new measurement; answers the report of the one it ends."""
        with self._lock:  # re-entrant: the report and the reset are one step
            report = self.report()
            self._ring.clear()
            self._current.clear()
            self._peaks.clear()
            self._since = self._clock()
        return report


METER: Final = PartitionMeter()


# ------------------------------------------------------------------------------ the report


def serve_report(app: Callable[..., Any], meter: PartitionMeter = METER) -> Callable[..., Any]:
    """WSGI middleware: the embedded AWS's loopback server answers GET /_psap/capacity with
    the report (`?seconds=N` adds the ring's last N seconds) and POST /_psap/capacity/reset
    with the report it ends; every other path goes to moto."""

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        path = environ.get("PATH_INFO", "")
        method = environ.get("REQUEST_METHOD", "GET")
        if path == REPORT_PATH and method == "GET":
            report = meter.report()
            query = environ.get("QUERY_STRING", "")
            seconds = re.search(r"(?:^|&)seconds=(\d+)", query)
            if seconds:
                report["recent"] = meter.recent(int(seconds.group(1)))
            return _json(start_response, report)
        if path == RESET_PATH and method == "POST":
            return _json(start_response, meter.reset())
        return app(environ, start_response)

    return application


def _json(start_response: Callable[..., Any], body: Any) -> list[bytes]:
    payload = json.dumps(body, indent=2).encode()
    start_response(
        "200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))]
    )
    return [payload]


# ------------------------------------------------------------------------------ moto hooks

_OPERATIONS: Final = {
    "get_item": "GetItem",
    "put_item": "PutItem",
    "update_item": "UpdateItem",
    "delete_item": "DeleteItem",
    "query": "Query",
    "scan": "Scan",
    "batch_get_item": "BatchGetItem",
    "batch_write_item": "BatchWriteItem",
    "transact_get_items": "TransactGetItems",
    "transact_write_items": "TransactWriteItems",
}
_SINGLE_WRITES: Final = {"PutItem", "UpdateItem", "DeleteItem"}
_WRITES: Final = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}
_request = threading.local()  # the request being metered, on the thread handling it


@dataclass(frozen=True)
class _Write:
    """One item a write request touches, and the item before it (its size and index entries,
    taken before the request: moto updates items in place)."""

    table: Any  # moto's Table
    key: Mapping[str, Any]
    transactional: bool
    before_size: int
    before_index: dict[str, tuple[str, int]]
    condition_only: bool = False


def _key_value(value: Any) -> str:
    kind, content = _typed(value)
    if kind == "B":
        return base64.b64encode(_binary(content)).decode()
    return str(content)


def _stored(table: Any, key: Mapping[str, Any]) -> Any:
    from moto.dynamodb.models.dynamo_type import DynamoType  # noqa: PLC0415 - moto loads lazily

    try:
        hash_value = DynamoType(key[table.hash_key_attr])
        range_value = DynamoType(key[table.range_key_attr]) if table.range_key_attr else None
        return table.get_item(hash_value, range_value)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    except Exception:  # moto's validation errors: the request itself answers them
        return None


def _size(item: Any) -> int:
    return item_size(item.attrs) if item is not None else 0


def _write_targets(operation: str, body: Mapping[str, Any], backend: Any) -> list[_Write]:
    tables = backend.tables

    def target(name: str, key: Mapping[str, Any], **options: Any) -> _Write | None:
        table = tables.get(name)
        if table is None or table.hash_key_attr not in key:
            return None
        key = {
            attribute: key[attribute]
            for attribute in (table.hash_key_attr, table.range_key_attr)
            if attribute and attribute in key
        }
        before = _stored(table, key)
        return _Write(
            table,
            key,
            before_size=_size(before),
            before_index=_index_entries(table, before),
            **options,
        )

    found: list[_Write | None] = []
    name = str(body.get("TableName", ""))
    if operation == "PutItem":
        found.append(target(name, body.get("Item") or {}, transactional=False))
    elif operation in {"UpdateItem", "DeleteItem"}:
        found.append(target(name, body.get("Key") or {}, transactional=False))
    elif operation == "BatchWriteItem":
        for name, requests in (body.get("RequestItems") or {}).items():
            for request in requests:
                put, delete = request.get("PutRequest"), request.get("DeleteRequest")
                key = (put or {}).get("Item") or (delete or {}).get("Key") or {}
                found.append(target(name, key, transactional=False))
    elif operation == "TransactWriteItems":
        for entry in body.get("TransactItems") or []:
            kind, request = next(iter(entry.items()))
            key = request.get("Item") or request.get("Key") or {}
            found.append(
                target(
                    request.get("TableName", ""),
                    key,
                    transactional=True,
                    condition_only=kind == "ConditionCheck",
                )
            )
    return [write for write in found if write is not None]


def _index_entries(table: Any, item: Any) -> dict[str, tuple[str, int]]:
    """GSI name -> (its partition key value, the projected item's size) for a stored item."""
    if item is None:
        return {}
    entries: dict[str, tuple[str, int]] = {}
    for index in getattr(table, "global_indexes", None) or []:
        hash_attributes = [key["AttributeName"] for key in index.schema if key["KeyType"] == "HASH"]
        if not hash_attributes or any(name not in item.attrs for name in index.schema_key_attrs):
            continue  # not in the index (a sparse index)
        entries[index.name] = (
            "#".join(_key_value(item.attrs[name]) for name in hash_attributes),
            _size(index.project(item)),
        )
    return entries


def _write_consumption(operation: str, write: _Write, after: Any) -> list[Consumption]:
    """What a write consumed, given the item after it (None: deleted, or never written)."""
    table = write.table
    key = _key_value(write.key[table.hash_key_attr])
    size = max(write.before_size, 0 if write.condition_only else _size(after))
    used = [
        Consumption(
            table.name,
            key,
            operation,
            wcu=write_units(size, transactional=write.transactional),
        )
    ]
    if write.condition_only:
        return used
    old, new = write.before_index, _index_entries(table, after)
    for name in sorted(set(old) | set(new)):
        index = f"{table.name}/{name}"
        if name in old and name in new and old[name][0] == new[name][0]:
            changes = [(new[name][0], max(old[name][1], new[name][1]))]
        else:
            changes = [entry for entry in (old.get(name), new.get(name)) if entry is not None]
        used.extend(
            Consumption(
                index, value, operation, wcu=write_units(size, transactional=write.transactional)
            )
            for value, size in changes
        )
    return used


def _write_limits(
    operation: str, writes: list[_Write], body: Mapping[str, Any]
) -> list[tuple[str, str, bool]]:
    """The keys a write request consumes on: its items', and their index keys (old and,
    for a put, new)."""
    targets: list[tuple[str, str, bool]] = []
    for write in writes:
        table = write.table
        targets.append((table.name, _key_value(write.key[table.hash_key_attr]), True))
        for name, (value, _) in write.before_index.items():
            targets.append((f"{table.name}/{name}", value, True))
        if operation == "PutItem":
            item = body.get("Item") or {}
            for index in getattr(table, "global_indexes", None) or []:
                for key in index.schema:
                    if key["KeyType"] == "HASH" and key["AttributeName"] in item:
                        value = _key_value(item[key["AttributeName"]])
                        targets.append((f"{table.name}/{index.name}", value, True))
    return targets


def _read_limits(
    operation: str, body: Mapping[str, Any], backend: Any
) -> list[tuple[str, str, bool]]:
    targets = []
    for name, key, _, _ in _read_targets(operation, body):
        table = backend.tables.get(name)
        if table is not None and table.hash_key_attr in key:
            targets.append((name, _key_value(key[table.hash_key_attr]), False))
    return targets


type _ItemRead = tuple[str, Mapping[str, Any], bool, bool]


def _read_targets(operation: str, body: Mapping[str, Any]) -> list[_ItemRead]:
    """(table name, key, consistent, transactional) of each item a Get reads."""
    if operation == "GetItem":
        name = str(body.get("TableName", ""))
        return [(name, body.get("Key") or {}, bool(body.get("ConsistentRead")), False)]
    if operation == "BatchGetItem":
        return [
            (name, key, bool(request.get("ConsistentRead")), False)
            for name, request in (body.get("RequestItems") or {}).items()
            for key in request.get("Keys") or []
        ]
    if operation == "TransactGetItems":
        return [
            (str(entry["Get"].get("TableName", "")), entry["Get"].get("Key") or {}, True, True)
            for entry in body.get("TransactItems") or []
            if "Get" in entry
        ]
    return []


def _item_reads(operation: str, body: Mapping[str, Any], backend: Any) -> list[Consumption]:
    used = []
    for name, key, consistent, transactional in _read_targets(operation, body):
        table = backend.tables.get(name)
        if table is None or table.hash_key_attr not in key:
            continue
        size = _size(_stored(table, key))
        units = read_units(size, consistent=consistent, transactional=transactional)
        used.append(Consumption(name, _key_value(key[table.hash_key_attr]), operation, rcu=units))
    return used


@dataclass
class _Scanned:
    """What a Query or Scan read, per (table or table/index, partition key): bytes."""

    consistent: bool = False
    sizes: dict[tuple[str, str], int] = field(default_factory=dict)


def _metered_action(operation: str, handle: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def action(self: Any) -> Any:
        body: Mapping[str, Any] = self.body or {}
        backend = self.dynamodb_backend
        writes: list[_Write] = []
        try:
            if operation in _WRITES:
                writes = _write_targets(operation, body, backend)
                targets = _write_limits(operation, writes, body)
            else:
                targets = _read_limits(operation, body, backend)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, StopIteration):
            return handle(self)  # a malformed request: moto's own validation answers it
        _refused(lambda: METER.check(operation, targets))
        scanned = _Scanned(consistent=bool(body.get("ConsistentRead")))
        _request.scanned, _request.operation = scanned, operation
        try:
            answer = handle(self)
        except Exception as error:
            if operation in _SINGLE_WRITES and "ConditionalCheckFailed" in str(
                getattr(error, "error_type", "")
            ):
                # A refused condition still consumes the write's units on DynamoDB (on the
                # table: the index has nothing to write).
                METER.record(
                    Consumption(
                        write.table.name,
                        _key_value(write.key[write.table.hash_key_attr]),
                        operation,
                        wcu=write_units(write.before_size),
                    )
                    for write in writes
                )
            raise
        finally:
            _request.scanned = None
        try:
            used = _consumed(operation, body, backend, writes=writes, scanned=scanned)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
            # A shape the meter does not know must never fail a request moto answered.
            print(f"partition capacity: {operation} not metered ({error!r})", flush=True)
            return answer
        METER.record(used)
        return answer

    action._psap_metered = handle  # type: ignore[attr-defined]
    return action


def _consumed(
    operation: str,
    body: Mapping[str, Any],
    backend: Any,
    *,
    writes: list[_Write],
    scanned: _Scanned,
) -> list[Consumption]:
    used: list[Consumption] = []
    for write in writes:
        used.extend(_write_consumption(operation, write, _stored(write.table, write.key)))
    used.extend(_item_reads(operation, body, backend))
    for (name, value), size in scanned.sizes.items():
        units = read_units(size, consistent=scanned.consistent)
        used.append(Consumption(name, value, operation, rcu=units))
    return used


def _refused(check: Callable[[], None]) -> None:
    """Runs a limit check; a key past its limit answers DynamoDB's error."""
    try:
        check()
    except ThroughputExceeded as refusal:
        raise _throttle_error(refusal) from None


def _throttle_error(refusal: ThroughputExceeded) -> Exception:
    from moto.core.exceptions import JsonRESTError  # noqa: PLC0415 - moto loads lazily

    from local.template import ACCOUNT_ID, REGION  # noqa: PLC0415

    table, _, index = refusal.table.partition("/")
    resource = f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/{table}"
    if index:
        resource += f"/index/{index}"
    kind = "Index" if index else "Table"
    work = "Write" if refusal.writing else "Read"
    error = JsonRESTError(_ERROR_TYPE, _ERROR_MESSAGE)
    error.description = json.dumps(
        {
            "__type": _ERROR_TYPE,
            "message": _ERROR_MESSAGE,
            "ThrottlingReasons": [
                {"reason": f"{kind}{work}KeyRangeThroughputExceeded", "resource": resource}
            ],
        }
    )
    return error


def _collecting(read: Callable[..., Any], *, query: bool) -> Callable[..., Any]:
    """moto's Table.query / Table.scan, asked without the filter and projection so that what
    was read (before them) is counted, then filtered and projected as moto does."""

    def collect(self: Any, *args: Any, **kwargs: Any) -> Any:
        scanned: _Scanned | None = getattr(_request, "scanned", None)
        if scanned is None:
            return read(self, *args, **kwargs)
        names = _QUERY_ARGUMENTS if query else _SCAN_ARGUMENTS
        arguments = dict(zip(names, args, strict=False)) | kwargs
        index_name = arguments.get("index_name")
        name = f"{self.name}/{index_name}" if index_name else self.name
        hash_attributes = [self.hash_key_attr]
        if index_name:
            index = self.get_index(index_name)
            hash_attributes = [k["AttributeName"] for k in index.schema if k["KeyType"] == "HASH"]
        if query:
            queried = _queried_key(arguments, hash_attributes)
            if queried is not None:
                _refused(lambda: METER.check(_request.operation, [(name, queried, False)]))
                scanned.sizes.setdefault((name, queried), 0)
        filter_expression = arguments.pop("filter_expression", None)
        projection_name = "projection_expressions" if query else "projection_expression"
        projection = arguments.pop(projection_name, None)
        results, scanned_count, last_key = read(
            self, **arguments, filter_expression=None, **{projection_name: None}
        )
        for item in results:
            if all(attribute in item.attrs for attribute in hash_attributes):
                value = "#".join(_key_value(item.attrs[a]) for a in hash_attributes)
                scanned.sizes[(name, value)] = scanned.sizes.get((name, value), 0) + _size(item)
        if filter_expression is not None:
            results = [item for item in results if filter_expression.expr(item)]
        if projection:
            results = [item.project(projection) for item in results]
        return results, scanned_count, last_key

    collect.__wrapped_read__ = read  # type: ignore[attr-defined]
    return collect


_QUERY_ARGUMENTS: Final = (
    "hash_key",
    "range_comparison",
    "range_objs",
    "limit",
    "exclusive_start_key",
    "scan_index_forward",
    "projection_expressions",
    "index_name",
    "consistent_read",
    "filter_expression",
)
_SCAN_ARGUMENTS: Final = (
    "filters",
    "limit",
    "exclusive_start_key",
    "filter_expression",
    "index_name",
    "consistent_read",
    "projection_expression",
    "segments",
)


def _queried_key(arguments: Mapping[str, Any], hash_attributes: list[str]) -> str | None:
    conditions = dict(arguments.get("hash_key_conditions") or [])
    if conditions and all(name in conditions for name in hash_attributes):
        return "#".join(_key_value(conditions[name]) for name in hash_attributes)
    hash_key = arguments.get("hash_key")
    return _key_value(hash_key) if hash_key is not None else None


def install() -> None:
    """Meters every item request of moto's DynamoDB (in this process: the embedded AWS's
    server, or a test's mock_aws). Throttling stays off until METER.enforce(scale)."""
    from moto.dynamodb.models.table import Table  # noqa: PLC0415 - moto loads lazily
    from moto.dynamodb.responses import DynamoHandler  # noqa: PLC0415

    # Each part on its own: moto_queries.install (every embedded AWS's start) replaces
    # Table.query with a new function, which must be wrapped again.
    if not hasattr(Table.query, "__wrapped_read__"):
        Table.query = _collecting(Table.query, query=True)  # type: ignore[method-assign]
    if not hasattr(Table.scan, "__wrapped_read__"):
        Table.scan = _collecting(Table.scan, query=False)  # type: ignore[method-assign]
    if getattr(DynamoHandler, "_psap_metered", False):
        return
    for method, operation in _OPERATIONS.items():
        setattr(DynamoHandler, method, _metered_action(operation, getattr(DynamoHandler, method)))
    DynamoHandler._psap_metered = True  # type: ignore[attr-defined]


def uninstall() -> None:
    from moto.dynamodb.models.table import Table  # noqa: PLC0415 - moto loads lazily
    from moto.dynamodb.responses import DynamoHandler  # noqa: PLC0415

    if not getattr(DynamoHandler, "_psap_metered", False):
        return
    for method in _OPERATIONS:
        setattr(DynamoHandler, method, getattr(DynamoHandler, method)._psap_metered)
    if hasattr(Table.query, "__wrapped_read__"):
        Table.query = Table.query.__wrapped_read__  # type: ignore[method-assign]
    if hasattr(Table.scan, "__wrapped_read__"):
        Table.scan = Table.scan.__wrapped_read__  # type: ignore[method-assign]
    DynamoHandler._psap_metered = False  # type: ignore[attr-defined]


@contextmanager
def partition_capacity(scale: float | None) -> Iterator[PartitionMeter]:
    """For a test: the meter installed, reset, and enforcing `scale` for the block."""
    installed = getattr(_hooks_owner(), "_psap_metered", False)
    install()
    METER.reset()
    METER.enforce(scale)
    try:
        yield METER
    finally:
        METER.enforce(None)
        METER.reset()
        if not installed:
            uninstall()


def _hooks_owner() -> Any:
    from moto.dynamodb.responses import DynamoHandler  # noqa: PLC0415 - moto loads lazily

    return DynamoHandler


def fetch_report(endpoint_url: str, *, seconds: int = 0, reset: bool = False) -> dict[str, Any]:
    """A running embedded AWS's report (`reset`: and a new measurement from now)."""
    import urllib.request  # noqa: PLC0415 - only the CLI and the bench ask

    if not endpoint_url.startswith("http://"):
        raise ValueError(f"{endpoint_url} is not the local stack's embedded AWS")
    if reset:
        url, data, method = endpoint_url + RESET_PATH, b"", "POST"
    else:
        url, data, method = (
            endpoint_url + REPORT_PATH + (f"?seconds={seconds}" if seconds else ""),
            None,
            "GET",
        )
    request = urllib.request.Request(url, data=data, method=method)  # noqa: S310 - http only
    with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 - http only
        report: dict[str, Any] = json.loads(answer.read())
    return report
