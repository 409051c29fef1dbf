"""Permission names. The wire name (enum value) is what credentials store and what the
authorizer passes on; the display name is what 403 messages say, as the spec writes it."""

from enum import StrEnum


class Permission(StrEnum):
    VIEW_KNOWLEDGE = "VIEW_KNOWLEDGE"
    MANAGE_KNOWLEDGE = "MANAGE_KNOWLEDGE"
    MANAGE_PHASES = "MANAGE_PHASES"
    MANAGE_USERS = "MANAGE_USERS"
    BROWSE_EVENTS = "BROWSE_EVENTS"
    MANAGE_EVENTS = "MANAGE_EVENTS"
    VIEW_QA = "VIEW_QA"
    ADMIN = "ADMIN"
    RESOURCE_CENTER_PUBLISH = "RESOURCE_CENTER_PUBLISH"

    @property
    def display_name(self) -> str:
        return _DISPLAY_NAMES[self]


_DISPLAY_NAMES = {
    Permission.VIEW_KNOWLEDGE: "View Knowledge",
    Permission.MANAGE_KNOWLEDGE: "Manage Knowledge",
    Permission.MANAGE_PHASES: "Manage Phases",
    Permission.MANAGE_USERS: "Manage Users",
    Permission.BROWSE_EVENTS: "Browse Events",
    Permission.MANAGE_EVENTS: "Manage Events",
    Permission.VIEW_QA: "View QA",
    Permission.ADMIN: "Admin",
    Permission.RESOURCE_CENTER_PUBLISH: "Resource Center publish",
}


def parse_permissions(text: str) -> frozenset[Permission]:
    """Reads the comma-joined list the authorizer puts in its context; unknown names are
    dropped so that a permission retired later grants nothing."""
    known = {permission.value for permission in Permission}
    return frozenset(Permission(name) for name in text.split(",") if name in known)


def denial_message(any_of: tuple[Permission, ...]) -> str:
    """`Access denied — View Knowledge or Manage Knowledge permission required` (spec)."""
    names = [permission.display_name for permission in any_of]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    return f"Access denied — {listed} permission required"
