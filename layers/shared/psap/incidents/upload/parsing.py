"""Reading an upload file into rows: each with its line number, the incident fields it sets,
or the reason it is rejected.

- JSON Lines: one Incident object per line, camelCase fields exactly as the spec's Incident
  (notes and responders as arrays). Blank lines are skipped.
- CSV (RFC 4180, UTF-8): a header row of Incident field names, then one incident per record;
  an empty cell is null; `notes` and `responders` cells hold a JSON array. A header naming
  an unknown or repeated column, or without `number`, rejects the whole file.
- A row sets the fields it carries; fields it does not carry (a key absent from the object,
  a column absent from the header) keep the stored value, or are null on a new incident.
- `id`, `createdAt` and `event` are the service's: ignored, so a GET answer can be sent back.
- Every timestamp must be ISO 8601 with a time and Z or an offset; the reason names the field.
- The text policy (psap.text): no control character or lone surrogate in any string, except
  tab and newlines in free text (`additionalContext`, a note's `note`); a JSON value nests
  at most psap.text.MAX_JSON_DEPTH levels. A row that breaks it is rejected, naming the field.
"""

import csv
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from psap.errors import InvalidInput
from psap.incidents.models import Incident, IncidentNote, IncidentResponder
from psap.incidents.upload.models import UploadFormat
from psap.text import JsonTooDeep, TextRefused, check_document, parse_json

MAX_LINE_BYTES = 262_144  # one row; a longer line is rejected, never held whole
_REASON_CHARS = 300
_IGNORED = frozenset({"id", "createdAt", "event"})
_LISTS = ("notes", "responders")
FREE_TEXT_FIELDS = frozenset({"additionalContext", "note"})


def _aliases(model: type[BaseModel]) -> dict[str, str]:
    """Wire name -> Python name of a model's fields."""
    return {field.alias or name: name for name, field in model.model_fields.items()}


def _timestamps(model: type[BaseModel]) -> frozenset[str]:
    return frozenset(
        field.alias or name
        for name, field in model.model_fields.items()
        if "datetime" in str(field.annotation)
    )


_INCIDENT_FIELDS = _aliases(Incident)
_UPLOADABLE = frozenset(_INCIDENT_FIELDS) - _IGNORED
_NESTED: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "notes": (frozenset(_aliases(IncidentNote)), _timestamps(IncidentNote)),
    "responders": (frozenset(_aliases(IncidentResponder)), _timestamps(IncidentResponder)),
}
_TIMESTAMPS = _timestamps(Incident) - _IGNORED


@dataclass(frozen=True)
class ParsedRow:
    line: int  # where the row starts in the file, 1-based
    number: str | None
    fields: dict[str, Any] | None  # the wire fields the row sets; None when rejected
    reason: str | None = None


class _Rejected(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason[:_REASON_CHARS]


def _check_timestamp(value: Any, path: str) -> None:
    if value is None:
        return
    problem = "an ISO 8601 date-time with Z or an offset is expected"
    if not isinstance(value, str) or "T" not in value.upper():
        raise _Rejected(f"Invalid field '{path}': {problem}")
    try:
        parsed = datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        raise _Rejected(f"Invalid field '{path}': {problem}") from None
    if parsed.tzinfo is None:
        raise _Rejected(f"Invalid field '{path}': {problem} (no offset given)")


def _check_object(
    value: dict[str, Any], known: frozenset[str], timestamps: frozenset[str], *, path: str
) -> None:
    unknown = sorted(set(value) - known)
    if unknown:
        names = ", ".join(f"'{path}{name}'" for name in unknown[:3])
        raise _Rejected(f"Unknown field {names}")
    for name in timestamps:
        _check_timestamp(value.get(name), f"{path}{name}")


def validated_fields(raw: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The row's number and the wire fields it sets, normalized as the store keeps them."""
    try:
        check_document(raw, FREE_TEXT_FIELDS)
    except TextRefused as refused:
        raise _Rejected(f"Invalid field '{refused.path}': {refused.problem}") from None
    number = raw.get("number")
    if not isinstance(number, str) or not number.strip():
        raise _Rejected("Missing field 'number': every row needs the incident number")
    _check_object(raw, _UPLOADABLE | _IGNORED, _TIMESTAMPS, path="")
    fields = {key: value for key, value in raw.items() if key not in _IGNORED}
    fields["number"] = number.strip()
    for name, (known, timestamps) in _NESTED.items():
        entries = fields.get(name)
        if name in fields and entries is None:
            fields[name] = []  # null clears the list; arrays are never null on the wire
        elif entries is not None:
            if not isinstance(entries, list):
                raise _Rejected(f"Invalid field '{name}': an array is expected")
            for index, entry in enumerate(entries):
                if not isinstance(entry, dict):
                    raise _Rejected(f"Invalid field '{name}[{index}]': an object is expected")
                _check_object(entry, known, timestamps, path=f"{name}[{index}].")
    try:
        incident = Incident.model_validate(fields)
    except ValidationError as error:
        detail = error.errors()[0]
        where = ".".join(str(part) for part in detail.get("loc", ()))
        raise _Rejected(f"Invalid field '{where}': {detail.get('msg', 'is not valid')}") from None
    names = {_INCIDENT_FIELDS[key] for key in fields}
    return fields["number"], incident.model_dump(mode="json", by_alias=True, include=names)


def _number_of(raw: Any) -> str | None:
    number = raw.get("number") if isinstance(raw, dict) else None
    if not isinstance(number, str):
        return None
    return number.strip()[:200] or None


def _row(line: int, raw: dict[str, Any]) -> ParsedRow:
    try:
        number, fields = validated_fields(raw)
    except _Rejected as rejected:
        return ParsedRow(line, _number_of(raw), None, rejected.reason)
    return ParsedRow(line, number, fields)


def parse_rows(file_format: UploadFormat, lines: Iterable[bytes]) -> Iterator[ParsedRow]:
    """The file's rows in order. Raises InvalidInput when the file as a whole is unreadable
    (a bad CSV header, malformed CSV quoting)."""
    if file_format is UploadFormat.JSONL:
        return _jsonl_rows(lines)
    return _csv_rows(lines)


def _jsonl_rows(lines: Iterable[bytes]) -> Iterator[ParsedRow]:
    for line_number, line in enumerate(lines, start=1):
        if len(line) > MAX_LINE_BYTES:
            yield ParsedRow(line_number, None, None, f"Longer than {MAX_LINE_BYTES} bytes")
            continue
        try:
            text = line.decode("utf-8-sig" if line_number == 1 else "utf-8")
        except UnicodeDecodeError:
            yield ParsedRow(line_number, None, None, "Not valid UTF-8")
            continue
        if not text.strip():
            continue
        try:
            raw = parse_json(text)
        except JsonTooDeep as error:
            yield ParsedRow(line_number, None, None, f"Not accepted: JSON {error}")
            continue
        except ValueError as error:
            problem = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
            yield ParsedRow(line_number, None, None, f"Not valid JSON: {problem}")
            continue
        if not isinstance(raw, dict):
            yield ParsedRow(line_number, None, None, "A line must be one JSON object")
            continue
        yield _row(line_number, raw)


class _CsvLines:
    """Decoded lines for the csv module, remembering which lines were not UTF-8 or too long
    (their rows are rejected, not the file)."""

    def __init__(self, lines: Iterable[bytes]) -> None:
        self._lines = iter(lines)
        self.count = 0
        self.bad: dict[int, str] = {}

    def __iter__(self) -> Iterator[str]:
        for line in self._lines:
            self.count += 1
            if len(line) > MAX_LINE_BYTES:
                self.bad[self.count] = f"Longer than {MAX_LINE_BYTES} bytes"
                yield "\n"
                continue
            try:
                yield line.decode("utf-8-sig" if self.count == 1 else "utf-8")
            except UnicodeDecodeError:
                self.bad[self.count] = "Not valid UTF-8"
                yield line.decode("utf-8", errors="replace")


def _csv_rows(lines: Iterable[bytes]) -> Iterator[ParsedRow]:
    source = _CsvLines(lines)
    reader = csv.reader(source, strict=True)
    header: list[str] | None = None
    start = 1
    try:
        for cells in reader:
            first, start = start, source.count + 1
            bad = next(
                (source.bad[n] for n in range(first, source.count + 1) if n in source.bad), None
            )
            if header is None:
                if bad is not None:
                    raise InvalidInput(f"The CSV header (line {first}) is not readable: {bad}")
                if cells:
                    header = _header(cells, first)
                continue
            if bad is not None:
                yield ParsedRow(first, None, None, bad)
            elif not any(cell.strip() for cell in cells):
                continue
            elif len(cells) != len(header):
                yield ParsedRow(
                    first, None, None, f"{len(cells)} cells; the header has {len(header)} columns"
                )
            else:
                yield _csv_row(first, dict(zip(header, cells, strict=True)))
    except csv.Error as error:
        raise InvalidInput(f"The CSV is malformed at line {source.count}: {error}") from error
    if header is None:
        raise InvalidInput("The file is empty: a CSV upload needs a header row and incidents")


def _header(cells: list[str], line: int) -> list[str]:
    names = [cell.strip() for cell in cells]
    for name in names:
        if name not in _UPLOADABLE | _IGNORED:
            raise InvalidInput(
                f"Unknown CSV column '{name[:100]}' (line {line}): columns are Incident "
                "field names in camelCase"
            )
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise InvalidInput(f"Repeated CSV column '{repeated[0]}' (line {line})")
    if "number" not in names:
        raise InvalidInput(f"The CSV header (line {line}) has no 'number' column")
    return names


def _csv_row(line: int, cells: dict[str, str]) -> ParsedRow:
    raw: dict[str, Any] = {}
    for name, cell in cells.items():
        text = cell.strip()
        if name in _LISTS and text:
            try:
                raw[name] = parse_json(text)
            except ValueError:
                return ParsedRow(
                    line,
                    _number_of(cells),
                    None,
                    f"Invalid field '{name}': a JSON array is expected",
                )
        else:
            raw[name] = text or None
    return _row(line, raw)
