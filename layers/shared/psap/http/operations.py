"""Every operation of the API and the permissions it needs: the one permission table.

Keyed by (method, resource path as in template.yaml). The shared entrypoint checks it before
the route runs, so a caller without the permission gets 403 before any validation or data
access. A test fails when a route of the template is missing here.
"""

from dataclasses import dataclass

from psap.auth.credentials import CredentialKind
from psap.auth.permissions import Permission, denial_message
from psap.incidents.upload.limits import INLINE_MAX_BYTES as INCIDENT_UPLOAD_INLINE_BYTES
from psap.media.limits import MAX_UPLOAD_BODY_BYTES

P = Permission
KNOWLEDGE_BODY_LIMIT = 1_048_576  # bytes of a knowledge create or append body


@dataclass(frozen=True)
class Operation:
    operation_id: str
    any_of: tuple[Permission, ...] = ()  # empty: any valid credential of `credential_kind`
    public: bool = False  # no credential at all (API documentation)
    # The kind of credential the route's authorizer admits; any other kind is refused (401).
    credential_kind: CredentialKind = CredentialKind.PARTNER
    # Bodies above this many bytes are refused with 413 before they are parsed.
    max_body_bytes: int | None = None

    @property
    def denial(self) -> str:
        return denial_message(self.any_of)

    @property
    def requirement_text(self) -> str:
        if self.public:
            return "No authentication."
        if not self.any_of:
            return f"Any valid {self.credential_kind.value} credential."
        names = " or ".join(permission.display_name for permission in self.any_of)
        return f"Permission: {names}."


OPERATIONS: dict[tuple[str, str], Operation] = {
    ("GET", "/api/v1/external/knowledge"): Operation(
        "listKnowledge", (P.VIEW_KNOWLEDGE, P.MANAGE_KNOWLEDGE)
    ),
    # Knowledge writes, reads and card (issue 3). Bodies over 1 MB are 413 before parsing.
    ("POST", "/api/v1/external/knowledge"): Operation(
        "createKnowledge", (P.MANAGE_KNOWLEDGE,), max_body_bytes=KNOWLEDGE_BODY_LIMIT
    ),
    ("POST", "/api/v1/external/knowledge/{knowledgeId}/versions"): Operation(
        "appendKnowledgeVersion", (P.MANAGE_KNOWLEDGE,), max_body_bytes=KNOWLEDGE_BODY_LIMIT
    ),
    ("GET", "/api/v1/external/knowledge/{knowledgeId}"): Operation(
        "getKnowledge", (P.VIEW_KNOWLEDGE, P.MANAGE_KNOWLEDGE)
    ),
    ("POST", "/api/v1/external/knowledge/{knowledgeId}/versions/{version}/publish"): Operation(
        "publishKnowledgeVersion", (P.MANAGE_KNOWLEDGE,)
    ),
    ("POST", "/api/v1/external/knowledge/{knowledgeId}/unpublish"): Operation(
        "unpublishKnowledge", (P.MANAGE_KNOWLEDGE,)
    ),
    ("DELETE", "/api/v1/external/knowledge/{knowledgeId}"): Operation(
        "deleteKnowledge", (P.MANAGE_KNOWLEDGE,)
    ),
    ("GET", "/api/v1/external/mcp/resources/knowledge/{knowledgeId}/card"): Operation(
        "getKnowledgeCard", (P.VIEW_KNOWLEDGE, P.MANAGE_KNOWLEDGE, P.ADMIN)
    ),
    ("GET", "/api/v1/external/openapi.json"): Operation("getOpenApiDocument", public=True),
    ("GET", "/api/v1/external/docs"): Operation("getApiDocs", public=True),
    # Tenant data reads (issue 4). Evaluations: View QA is ours (the spec does not say).
    ("GET", "/api/v1/external/user"): Operation("listUsers", (P.MANAGE_USERS,)),
    ("GET", "/api/v1/external/train/user/{userId}/enrollments"): Operation(
        "listEnrollments", (P.MANAGE_PHASES,)
    ),
    ("GET", "/api/v1/external/qa/user/{userId}/evaluations"): Operation(
        "listEvaluations", (P.VIEW_QA,)
    ),
    ("GET", "/api/v1/external/mcp/resources/incidents/{incidentId}"): Operation(
        "getIncident", (P.BROWSE_EVENTS, P.MANAGE_EVENTS)
    ),
    ("GET", "/api/v1/external/mcp/resources/events/{eventId}"): Operation(
        "getEvent", (P.BROWSE_EVENTS, P.MANAGE_EVENTS)
    ),
    # Resource center (issue 7): any partner credential; without ADMIN or Resource Center
    # publish the results are help articles only (psap.resource_center.search).
    ("GET", "/api/v1/external/mcp/resources/resource-center/search"): Operation(
        "searchResourceCenter"
    ),
    # Media ingest (issue 6 part 2): the body limit lets a JSON upload carry a base64 file of
    # psap.media.limits.MAX_SRT_BYTES; the logic checks the file's own size (413) too.
    ("POST", "/api/v1/external/media/radio-traffic"): Operation(
        "uploadRadioTraffic", (P.MANAGE_EVENTS,), max_body_bytes=MAX_UPLOAD_BODY_BYTES
    ),
    ("GET", "/api/v1/external/mcp/resources/media/{mediaId}"): Operation(
        "getMedia", (P.BROWSE_EVENTS, P.MANAGE_EVENTS)
    ),
    # Audit log exports (issue 6 part 1): the tenant's admins only.
    ("POST", "/api/v1/external/audit-log/exports"): Operation("createAuditExport", (P.ADMIN,)),
    ("GET", "/api/v1/external/audit-log/exports/{exportId}"): Operation(
        "getAuditExport", (P.ADMIN,)
    ),
    # Incident upload (issue 6 part 3): bodies over the inline limit go the presigned way.
    ("POST", "/api/v1/external/incidents/upload"): Operation(
        "uploadIncidents", (P.MANAGE_EVENTS,), max_body_bytes=INCIDENT_UPLOAD_INLINE_BYTES
    ),
    ("POST", "/api/v1/external/incidents/uploads"): Operation(
        "createIncidentUpload", (P.MANAGE_EVENTS,)
    ),
    ("POST", "/api/v1/external/incidents/uploads/{uploadId}/start"): Operation(
        "startIncidentUpload", (P.MANAGE_EVENTS,)
    ),
    ("GET", "/api/v1/external/incidents/uploads/{uploadId}"): Operation(
        "getIncidentUpload", (P.MANAGE_EVENTS,)
    ),
    # The MCP endpoint (issue 17): any partner credential may speak the protocol; each tool
    # call or resource read then needs the permission of its REST operation above.
    ("POST", "/mcp"): Operation("postMcpMessage"),
    ("GET", "/mcp"): Operation("getMcpStream"),
    ("DELETE", "/mcp"): Operation("deleteMcpSession"),
    # CAD intake: a `cad` credential, no data permissions; the envelope's tenantId
    # cross-check (403) is made by psap.cad.intake.
    ("POST", "/cad/v1/incidents"): Operation(
        "submitCadIncident", credential_kind=CredentialKind.CAD
    ),
}


def operation_for(method: str, resource: str) -> Operation | None:
    return OPERATIONS.get((method.upper(), resource))
