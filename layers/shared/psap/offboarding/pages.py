"""What an offboarding step collects: the kinds of the archive's files, a page of lines and
purge targets, and DynamoDB items as JSON lines."""

import base64
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from psap.storage.documents import decode_document
from psap.storage.queries import partition_request, query_pages

PROBE: Final = 100  # ids per BatchGetItem


class Kind(StrEnum):
    KNOWLEDGE = "knowledge"
    USERS = "users"  # with their enrollments and task lists (same partition)
    EVALUATIONS = "evaluations"
    INCIDENTS = "incidents"
    EVENTS = "events"
    MEDIA = "media"
    CONNECTORS = "connectors"
    DELIVERIES = "deliveries"
    RESOURCE_CENTER = "resourceCenter"
    CAD_SUBMISSIONS = "cadSubmissions"  # CAD intake idempotency records, with raw bodies
    INCIDENT_UPLOADS = "incidentUploads"  # upload jobs
    AUDIT_EXPORTS = "auditExports"  # audit export jobs (the records themselves are kept)
    TENANT_EXPORTS = "tenantExports"  # tenant export jobs (the Admin API's archives)
    AUDIT = "audit"  # exported, kept
    REGISTRY = "registry"  # the partition registry itself: purged, no file of its own


@dataclass
class Page:
    """One step's work: lines for the kind's file, partitions to purge later, next cursor."""

    lines: list[dict[str, Any]] = field(default_factory=list)
    purge: list[dict[str, Any]] = field(default_factory=list)
    cursor: Any = None
    # Lines of other kinds' files (a registry page names partitions of several kinds).
    elsewhere: dict["Kind", list[dict[str, Any]]] = field(default_factory=dict)

    def add(self, kind: "Kind", lines: list[dict[str, Any]]) -> None:
        self.elsewhere.setdefault(kind, []).extend(lines)


def json_value(value: Mapping[str, Any]) -> Any:
    """A DynamoDB attribute value as JSON; a stored (compressed) document as its JSON."""
    ((tag, inner),) = value.items()
    if tag in ("S", "BOOL"):
        return inner
    if tag == "NULL":
        return None
    if tag == "N":
        return int(inner) if inner.lstrip("-").isdigit() else float(inner)
    if tag == "B":
        try:
            return {"document": decode_document(bytes(inner))}
        except Exception:  # not a document: kept byte for byte
            return {"base64": base64.b64encode(bytes(inner)).decode()}
    if tag == "L":
        return [json_value(element) for element in inner]
    if tag == "M":
        return {name: json_value(element) for name, element in inner.items()}
    if tag == "BS":
        return [base64.b64encode(bytes(element)).decode() for element in inner]
    return sorted(inner)  # SS, NS


def item_line(raw: Mapping[str, Any]) -> dict[str, Any]:
    return {name: json_value(value) for name, value in raw.items()}


def partition_items(table: str, pk: str) -> Iterator[dict[str, Any]]:
    for page in query_pages(partition_request(table, pk), f"partition {pk}"):
        yield from page


def dynamo_target(kind: Kind, table: str, pk: str) -> dict[str, Any]:
    return {"kind": kind.value, "table": table, "pk": pk}


def objects_target(kind: Kind, bucket: str, prefix: str) -> dict[str, Any]:
    return {"kind": kind.value, "bucket": bucket, "prefix": prefix}
