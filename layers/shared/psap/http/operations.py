"""Every operation of the API and the permissions it needs: the one permission table.

Keyed by (method, resource path as in template.yaml). The shared entrypoint checks it before
the route runs, so a caller without the permission gets 403 before any validation or data
access. A test fails when a route of the template is missing here.
"""

from dataclasses import dataclass

from psap.auth.permissions import Permission, denial_message

P = Permission


@dataclass(frozen=True)
class Operation:
    operation_id: str
    any_of: tuple[Permission, ...] = ()
    public: bool = False  # no credential at all (API documentation)

    @property
    def denial(self) -> str:
        return denial_message(self.any_of)

    @property
    def requirement_text(self) -> str:
        if self.public:
            return "No authentication."
        if not self.any_of:
            return "Any valid partner credential."
        names = " or ".join(permission.display_name for permission in self.any_of)
        return f"Permission: {names}."


OPERATIONS: dict[tuple[str, str], Operation] = {
    ("GET", "/api/v1/external/knowledge"): Operation(
        "listKnowledge", (P.VIEW_KNOWLEDGE, P.MANAGE_KNOWLEDGE)
    ),
    ("GET", "/api/v1/external/openapi.json"): Operation("getOpenApiDocument", public=True),
    ("GET", "/api/v1/external/docs"): Operation("getApiDocs", public=True),
}


def operation_for(method: str, resource: str) -> Operation | None:
    return OPERATIONS.get((method.upper(), resource))
