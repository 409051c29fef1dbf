"""What a write changed, noted by the operation for its request's audit record.

A write operation calls `note_change` for each record it created or changed (ids and version
numbers, never payloads); the shared entrypoint takes them after the route ran and puts them
in the request's audit record. A Lambda environment serves one request at a time, so a
module-level list is the request's own; the entrypoint clears it before every request.
"""

from dataclasses import dataclass
from typing import Literal

type ChangeAction = Literal["CREATED", "UPDATED", "UNCHANGED", "DELETED", "ACCEPTED", "STARTED"]


@dataclass(frozen=True)
class Change:
    """A plain dataclass: every request path takes them, the light ones included (no pydantic);
    AuditRecord validates and dumps it as the object {resource, id, action, version}."""

    resource: str  # "knowledge", "incident", "media", "auditExport", ...
    id: str
    action: ChangeAction
    version: int | None = None


_noted: list[Change] = []


def note_change(
    resource: str, resource_id: int | str, action: ChangeAction, *, version: int | None = None
) -> None:
    _noted.append(Change(resource=resource, id=str(resource_id), action=action, version=version))


def take_changes() -> list[Change]:
    """The changes noted since the last call, and forgets them."""
    taken = list(_noted)
    _noted.clear()
    return taken
