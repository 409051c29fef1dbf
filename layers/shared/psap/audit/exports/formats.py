"""The export file's text: NDJSON lines that verify alone, or CSV rows for reading."""

import csv
import io
import json
from collections.abc import Iterable
from typing import Any, Final

from psap.audit.chain import Link, head_line, omitted_line, record_line
from psap.audit.exports.models import AuditExport, ExportFormat
from psap.audit.store import ChainPage, RecordFilter

CSV_COLUMNS: Final = (
    "time",
    "tenantId",
    "credentialId",
    "principal",
    "credentialKind",
    "operation",
    "method",
    "path",
    "resourceIds",
    "status",
    "requestId",
    "sourceIp",
    "userAgent",
    "changes",
    "durationMs",
)


def content_type(export: AuditExport) -> str:
    return "application/x-ndjson" if export.format is ExportFormat.NDJSON else "text/csv"


def page_text(
    export: AuditExport, where: RecordFilter, page: ChainPage, *, last: Link | None
) -> tuple[bytes, int]:
    """A page's text and how many of its records are asked for. NDJSON carries every chain
    of the range's days whole, the records not asked for as their links only, and each
    chain's head: `psap-admin audit verify` checks the file alone (psap.audit.chain). CSV
    holds the records asked for, for reading, not verifying."""
    lines: list[dict[str, Any]] = []
    rows: list[list[str]] = []
    for entry in page.entries:
        if last is not None and last.chain != entry.link.chain:
            lines.append(head_line(last))
        last = entry.link
        if where.admits(entry.record, export.start, export.end):
            lines.append(record_line(entry.record, entry.link))
            rows.append(_csv_values(entry.record))
        else:
            lines.append(omitted_line(entry.link))
    if export.format is ExportFormat.NDJSON:
        return "".join(map(ndjson_line, lines)).encode("utf-8"), len(rows)
    return (csv_rows(rows).encode("utf-8") if rows else b""), len(rows)


def ndjson_line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def _csv_values(record: dict[str, Any]) -> list[str]:
    values: list[str] = []
    for column in CSV_COLUMNS:
        value = record.get(column)
        if value is None:
            values.append("")
        elif isinstance(value, dict | list):
            values.append(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
        else:
            values.append(_spreadsheet_safe(str(value)))
    return values


def _spreadsheet_safe(text: str) -> str:
    """Caller-chosen text (a user agent, a path) must not run as a spreadsheet formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def csv_rows(rows: Iterable[list[str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerows(rows)
    return buffer.getvalue()
