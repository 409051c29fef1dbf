"""Every operation of the API and the permissions it needs: the one permission table.

Keyed by (method, resource path as in template.yaml). The shared entrypoint checks it before
the route runs, so a caller without the permission gets 403 before any validation or data
access. A test fails when a route of the template is missing here.
"""

from dataclasses import dataclass, replace

from psap.auth.credentials import CredentialKind
from psap.auth.permissions import Permission, denial_message
from psap.console.paths import api_resource
from psap.http.body import JSON_MEDIA_TYPE, BodyRule
from psap.limits import (
    ADMIN_BODY_LIMIT,
    CAD_BODY_LIMIT,
    INCIDENT_UPLOAD_INLINE_MAX_BYTES,
    KNOWLEDGE_BODY_LIMIT,
    MAX_UPLOAD_BODY_BYTES,
    SMALL_JSON_BODY_LIMIT,
)

P = Permission
RADIO_TRAFFIC_PATH = "/api/v1/external/media/radio-traffic"
RADIO_TRAFFIC_JSON_PATH = "/api/v1/external/media/radio-traffic/json"
SRT_MEDIA_TYPE = "application/x-subrip"

# Every body goes through psap.http.body.decode_body with its operation's rule.
JSON_BODY = BodyRule(max_bytes=SMALL_JSON_BODY_LIMIT)
KNOWLEDGE_BODY = BodyRule(max_bytes=KNOWLEDGE_BODY_LIMIT)
ADMIN_BODY = BodyRule(max_bytes=ADMIN_BODY_LIMIT)
CAD_BODY = BodyRule(
    max_bytes=CAD_BODY_LIMIT,
    media_types=frozenset({JSON_MEDIA_TYPE, "application/cloudevents+json"}),
    json_types=frozenset({JSON_MEDIA_TYPE, "application/cloudevents+json"}),
)
# The radio-traffic upload's two forms, one operation each (psap.media.ingest): a body of
# the other form is told where it goes.
RADIO_TRAFFIC_FILE_BODY = BodyRule(
    max_bytes=MAX_UPLOAD_BODY_BYTES,
    media_types=frozenset({SRT_MEDIA_TYPE}),
    json_types=frozenset(),
    elsewhere=((JSON_MEDIA_TYPE, f"POST {RADIO_TRAFFIC_JSON_PATH}"),),
)
RADIO_TRAFFIC_JSON_BODY = BodyRule(
    max_bytes=MAX_UPLOAD_BODY_BYTES,
    elsewhere=((SRT_MEDIA_TYPE, f"POST {RADIO_TRAFFIC_PATH}"),),
)
# JSON Lines and CSV rows are checked row by row (psap.incidents.upload.parsing: UTF-8 and
# the text policy included): a bad row is rejected alone, the others applied.
INCIDENT_FILE_BODY = BodyRule(
    max_bytes=INCIDENT_UPLOAD_INLINE_MAX_BYTES,
    media_types=frozenset({"text/csv", "application/x-ndjson", "application/jsonl"}),
    json_types=frozenset(),
    checked_by_row=True,
)


@dataclass(frozen=True)
class Operation:
    operation_id: str
    any_of: tuple[Permission, ...] = ()  # empty: any valid credential of `credential_kind`
    public: bool = False  # no credential at all (API documentation)
    # The kind of credential the route's authorizer admits; any other kind is refused (401).
    credential_kind: CredentialKind = CredentialKind.PARTNER
    # What the body may be (media types, size, JSON); None: the operation takes no body.
    body: BodyRule | None = None
    # Re-read the credential (strongly consistent) before acting, so a revoked or expired
    # one is refused at once rather than after the authorizer's cache (ReauthorizeEvery).
    rechecks_credential: bool = False
    # An operation that declares no query parameter, and where a client could mean one (a
    # sibling operation takes them): any query parameter is 400 with this hint, never dropped.
    no_query: str | None = None

    @property
    def max_body_bytes(self) -> int | None:
        return None if self.body is None else self.body.max_bytes

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
    # Knowledge writes, reads and card. Bodies over 1 MB are 413 before parsing.
    ("POST", "/api/v1/external/knowledge"): Operation(
        "createKnowledge", (P.MANAGE_KNOWLEDGE,), body=KNOWLEDGE_BODY
    ),
    ("POST", "/api/v1/external/knowledge/{knowledgeId}/versions"): Operation(
        "appendKnowledgeVersion", (P.MANAGE_KNOWLEDGE,), body=KNOWLEDGE_BODY
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
    # Tenant data reads. Evaluations: View QA is ours (the spec does not say).
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
    # Resource center: any partner credential; without ADMIN or Resource Center
    # publish the results are help articles only (psap.resource_center.search).
    ("GET", "/api/v1/external/mcp/resources/resource-center/search"): Operation(
        "searchResourceCenter"
    ),
    # Media ingest: the body limit lets a JSON upload carry a base64 file of
    # psap.limits.MAX_SRT_BYTES; the logic checks the file's own size (413) too.
    ("POST", RADIO_TRAFFIC_PATH): Operation(
        "uploadRadioTraffic", (P.MANAGE_EVENTS,), body=RADIO_TRAFFIC_FILE_BODY
    ),
    ("POST", RADIO_TRAFFIC_JSON_PATH): Operation(
        "uploadRadioTrafficJson",
        (P.MANAGE_EVENTS,),
        body=RADIO_TRAFFIC_JSON_BODY,
        no_query="give eventId or incidentNumber, channel and recordingStartedAt in the JSON body",
    ),
    ("GET", "/api/v1/external/mcp/resources/media/{mediaId}"): Operation(
        "getMedia", (P.BROWSE_EVENTS, P.MANAGE_EVENTS)
    ),
    # Audit log exports: the tenant's admins only.
    ("POST", "/api/v1/external/audit-log/exports"): Operation(
        "createAuditExport", (P.ADMIN,), body=JSON_BODY
    ),
    ("GET", "/api/v1/external/audit-log/exports/{exportId}"): Operation(
        "getAuditExport", (P.ADMIN,)
    ),
    # Incident upload: bodies over the inline limit go the presigned way.
    ("POST", "/api/v1/external/incidents/upload"): Operation(
        "uploadIncidents", (P.MANAGE_EVENTS,), body=INCIDENT_FILE_BODY
    ),
    ("POST", "/api/v1/external/incidents/uploads"): Operation(
        "createIncidentUpload", (P.MANAGE_EVENTS,), body=JSON_BODY
    ),
    ("POST", "/api/v1/external/incidents/uploads/{uploadId}/start"): Operation(
        "startIncidentUpload", (P.MANAGE_EVENTS,)
    ),
    ("GET", "/api/v1/external/incidents/uploads/{uploadId}"): Operation(
        "getIncidentUpload", (P.MANAGE_EVENTS,)
    ),
    # Tenant admin API: connectors, their delivery log and credentials, Admin only.
    ("POST", "/api/v1/external/admin/connectors"): Operation(
        "createConnector", (P.ADMIN,), body=ADMIN_BODY
    ),
    ("GET", "/api/v1/external/admin/connectors"): Operation("listConnectors", (P.ADMIN,)),
    ("GET", "/api/v1/external/admin/connectors/{connectorId}"): Operation(
        "getConnector", (P.ADMIN,)
    ),
    ("PATCH", "/api/v1/external/admin/connectors/{connectorId}"): Operation(
        "updateConnector", (P.ADMIN,), body=ADMIN_BODY
    ),
    ("POST", "/api/v1/external/admin/connectors/{connectorId}/disable"): Operation(
        "disableConnector", (P.ADMIN,)
    ),
    ("POST", "/api/v1/external/admin/connectors/{connectorId}/enable"): Operation(
        "enableConnector", (P.ADMIN,)
    ),
    ("POST", "/api/v1/external/admin/connectors/{connectorId}/rotate-secret"): Operation(
        "rotateConnectorSecret", (P.ADMIN,), body=ADMIN_BODY
    ),
    ("POST", "/api/v1/external/admin/connectors/{connectorId}/test"): Operation(
        "testConnector", (P.ADMIN,)
    ),
    ("GET", "/api/v1/external/admin/connectors/{connectorId}/deliveries"): Operation(
        "listDeliveries", (P.ADMIN,)
    ),
    ("GET", "/api/v1/external/admin/connectors/{connectorId}/stats"): Operation(
        "getConnectorStats", (P.ADMIN,)
    ),
    ("POST", "/api/v1/external/admin/connectors/{connectorId}/deliveries/recover"): Operation(
        "recoverDeliveries", (P.ADMIN,), body=ADMIN_BODY
    ),
    ("GET", "/api/v1/external/admin/deliveries/{deliveryId}"): Operation("getDelivery", (P.ADMIN,)),
    ("POST", "/api/v1/external/admin/deliveries/{deliveryId}/replay"): Operation(
        "replayDelivery", (P.ADMIN,)
    ),
    ("POST", "/api/v1/external/admin/credentials"): Operation(
        "issueCredential", (P.ADMIN,), body=ADMIN_BODY
    ),
    ("GET", "/api/v1/external/admin/credentials"): Operation("listCredentials", (P.ADMIN,)),
    # The console (docs/console.md): a single-use sign-in link for the calling Admin.
    ("POST", "/api/v1/external/admin/console-links"): Operation("createConsoleLink", (P.ADMIN,)),
    ("POST", "/api/v1/external/admin/credentials/{credentialId}/revoke"): Operation(
        "revokeCredential", (P.ADMIN,)
    ),
    # Everything the tenant owns, as the offboarding's signed archive (docs/admin-api.md).
    ("POST", "/api/v1/external/admin/tenant-exports"): Operation(
        "createTenantExport", (P.ADMIN,), body=ADMIN_BODY
    ),
    ("GET", "/api/v1/external/admin/tenant-exports/{exportId}"): Operation(
        "getTenantExport", (P.ADMIN,)
    ),
    # The MCP endpoint: any partner credential may speak the protocol; each tool
    # call or resource read then needs the permission of its REST operation above.
    ("POST", "/mcp"): Operation("postMcpMessage"),
    ("GET", "/mcp"): Operation("getMcpStream"),
    ("DELETE", "/mcp"): Operation("deleteMcpSession"),
    # The console's pages and its session (sign-in by a link's code, sign-out): no bearer
    # credential; the session cookie is checked by the function itself.
    ("GET", "/console"): Operation("getConsole", public=True),
    ("GET", "/console/{asset+}"): Operation("getConsoleAsset", public=True),
    ("POST", "/console/session"): Operation("openConsoleSession", public=True, body=JSON_BODY),
    ("GET", "/console/session"): Operation("getConsoleSession", public=True),
    ("DELETE", "/console/session"): Operation("endConsoleSession", public=True),
    # CAD intake: a `cad` credential, no data permissions; the envelope's tenantId
    # cross-check (403) is made by psap.cad.intake.
    ("POST", "/cad/v1/incidents"): Operation(
        "submitCadIncident", credential_kind=CredentialKind.CAD, body=CAD_BODY
    ),
}


# The tenant admin API issues credentials and moves CAD connectors: a credential revoked a
# moment ago must not do either, so every operation under it re-reads its credential.
ADMIN_API_PREFIX = "/api/v1/external/admin/"
OPERATIONS = {
    key: replace(operation, rechecks_credential=True)
    if key[1].startswith(ADMIN_API_PREFIX)
    else operation
    for key, operation in OPERATIONS.items()
}


def operation_for(method: str, resource: str) -> Operation | None:
    """A console API path is its admin API operation (psap.console.paths)."""
    return OPERATIONS.get((method.upper(), api_resource(resource)))


def methods_for(resource: str) -> list[str]:
    """The methods the resource has, sorted (for a 405's Allow header)."""
    resource = api_resource(resource)
    return sorted(method for method, path in OPERATIONS if path == resource)
