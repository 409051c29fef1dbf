"""The catalog of the specification's rules (docs/spec.md), one id per rule.

Tests name the rules they prove with `@pytest.mark.spec("knowledge-rule-4", ...)`; the
pytest plugin in tests/support/spec_marker.py refuses an id that is not here, and
`python -m tools.spec_map --write` turns the markers into docs/reference/spec-rules.md.

Ids: `<section>-rule-<n>` where the spec numbers its rules (the number is the spec's own), a
short stable name for the rules stated in tables and prose. Summaries are ours, one line;
the spec's wording is in docs/spec.md, under the section each rule links to. An id, once
used, keeps its meaning: a rule the spec drops is removed, never renumbered.

What the spec marks "not shown" is left to the design, not a rule: those items are listed
apart (OPEN_ITEMS) and no test may claim them.
"""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SpecSection:
    title: str
    # The heading's anchor in docs/spec.md (GitHub's slugs, as mkdocs.yml configures them).
    anchor: str


@dataclass(frozen=True, slots=True)
class SpecRule:
    id: str
    section: SpecSection
    summary: str


SERVICE = SpecSection("What the service does", "what-the-service-does")
RESOURCES = SpecSection("Resources and their fields", "resources-and-their-fields")
KNOWLEDGE = SpecSection(
    "Knowledge rules (create, append, read)", "knowledge-rules-create-append-read"
)
KNOWLEDGE_CARD = SpecSection(
    "Knowledge card (mcp knowledge card response)", "knowledge-card-mcp-knowledge-card-response"
)
STATES = SpecSection("States and transitions", "states-and-transitions")
ENDPOINTS = SpecSection("Endpoints", "endpoints")
KNOWLEDGE_LIST = SpecSection("List knowledge entries", "list-knowledge-entries")
KNOWLEDGE_OPERATIONS = SpecSection(
    "Knowledge create, append and read", "knowledge-create-append-and-read"
)
AUTHENTICATION = SpecSection("Authentication", "authentication")
DATA_AUTH = SpecSection("Authentication: data interface", "data-interface")
CAD_AUTH = SpecSection("Authentication: CAD to the service", "cad-to-the-service")
WEBHOOK_PROFILE = SpecSection(
    "Authentication: service to CAD (baseline webhook profile)",
    "service-to-cad-baseline-webhook-profile",
)
EVENTS = SpecSection("Events", "events")
ERRORS = SpecSection("Errors", "errors")
LIMITS = SpecSection("Limits", "limits")
VERSIONING = SpecSection("Versioning", "versioning")
# In the spec's order: the page lists the rules section by section, as the spec reads.
SECTIONS = (
    SERVICE,
    RESOURCES,
    KNOWLEDGE,
    KNOWLEDGE_CARD,
    STATES,
    ENDPOINTS,
    KNOWLEDGE_LIST,
    KNOWLEDGE_OPERATIONS,
    AUTHENTICATION,
    DATA_AUTH,
    CAD_AUTH,
    WEBHOOK_PROFILE,
    EVENTS,
    ERRORS,
    LIMITS,
    VERSIONING,
)

_KNOWLEDGE_RULES = (
    "a top-level `apiControl` object on each request says which sections the API owns",
    "an append replaces every API-owned section whole",
    "service-owned sections are edited in the service and carried forward; an append may "
    "not send them",
    "the `apiControl` flags are fixed at create; an append may not change them",
    "a question's `displayCriteria` is its own at the root and stacks on its group's inside "
    "`relatedQuestions`",
    "card-level links are `actions.links` and follow the `links` flag like any action set",
    "a link names its target by `targetExternalId` under the same provider, resolved on "
    "every write",
    "a link's target must already be loaded in the tenant; it need not be published",
    "an unresolvable `targetExternalId` rejects the whole request with 400",
    "`target*` fields are stored at write time and read back as stored, whatever happened "
    "to the target since",
    "create gives every item of every content list a `referenceId`; ids sent on create are ignored",
    "create and append answer the `referenceId`s, and GET reads them back",
    "on append a sent `referenceId` updates that item in place; an omitted one makes a new "
    "item with a fresh id",
    "on append a `referenceId` not in the previous version is a 400",
    "a `referenceMedia`/`mediaRef` naming a media id sent on create is repointed at the "
    "asset's assigned id",
)

_KNOWLEDGE_LIST_RULES = (
    "lists the tenant's entries with `source = API_IMPORT` that are not deleted, as summaries",
    "the list finds the `id` of an entry no create answered (one adopted outside the API)",
    "results are sorted by `id`",
    "`page` is 0-based; a `size` above 200 is reduced to 200 and the answer's `size` says so",
    "`provider` and `knowledgeType` filter by exact match; an omitted one does not filter",
)

_DATA_AUTH_RULES = (
    "every data-interface call needs a bearer token; a missing or invalid one is 401",
    "permissions are checked per operation as in the Endpoints table; lacking one is 403",
    "knowledge operations need Manage Knowledge; read-only lookups also accept View Knowledge",
    "resource-center search gives help articles only to users without Resource Center access "
    "(ADMIN or a Resource Center publish permission)",
)

_CAD_AUTH_RULES = (
    "`POST /cad/v1/incidents` takes a provisioned, customer-scoped API key as a bearer credential",
    "the customer comes from the credential; the envelope's `tenantId` is a cross-check only, "
    "never used for routing",
)

_WEBHOOK_PROFILE_RULES = (
    "a delivery carries the provisioned bearer credential the CAD endpoint authorizes",
    "a delivery is signed with a timestamped HMAC-SHA-256 over the exact body, against replay",
    "`X-SVC-Signature` is the digest of `<X-SVC-Timestamp>.<X-SVC-Delivery-Id>.<raw body>`",
    "a receiver verifies the raw body in constant time and rejects a timestamp more than "
    "300 s from its clock",
    "a retry keeps the delivery id and the exact body, with a new timestamp and signature",
    "a connector profile may document a security exception without weakening the baseline "
    "for other listeners",
)

_VERSIONING_RULES = (
    "the data interface is versioned in its path (`/api/v1/...`, document version `1.0`); CAD "
    "intake is `/cad/v1/incidents`",
    "each create or append makes an immutable version and one version at most is published; "
    "the card shows `versionId`, `version`, `active`",
    "task-list template versions and evaluation templates carry a `version` number",
    "connector profiles record CAD-specific compatibility exceptions",
)


def _numbered(prefix: str, section: SpecSection, summaries: tuple[str, ...]) -> list[SpecRule]:
    return [
        SpecRule(f"{prefix}-rule-{number}", section, summary)
        for number, summary in enumerate(summaries, start=1)
    ]


RULES: tuple[SpecRule, ...] = (
    SpecRule(
        "service-tenant-from-credential",
        SERVICE,
        "every call is scoped to the tenant of its credential; another tenant's ids are not found",
    ),
    # Field rules of the resources, where the spec states one beyond a type.
    SpecRule(
        "resources-timestamps-and-dates",
        RESOURCES,
        "`<ts>` fields are ISO 8601 UTC date-times and `<date>` fields are `YYYY-MM-DD`",
    ),
    SpecRule(
        "resources-knowledge-summary-fields",
        RESOURCES,
        "a knowledge summary has the ExternalKnowledgeDto fields, `publishedVersion` null "
        "when none is published",
    ),
    SpecRule(
        "resources-knowledge-page-fields",
        RESOURCES,
        "a knowledge page has `items`, 0-based `page`, effective `size`, `totalItems`, "
        "`totalPages`",
    ),
    SpecRule(
        "resources-knowledge-card-fields",
        KNOWLEDGE_CARD,
        "the card has the spec's fields and one digest per section of the latest version",
    ),
    SpecRule(
        "resources-knowledge-card-prefers-edits",
        KNOWLEDGE_CARD,
        "the card's digests prefer the user's edits made inside the service",
    ),
    SpecRule("resources-user-fields", RESOURCES, "a user has the User fields of the spec"),
    SpecRule(
        "resources-spring-page-fields",
        RESOURCES,
        "the users and evaluations lists answer a Spring-style page with consistent arithmetic",
    ),
    SpecRule(
        "resources-enrollment-fields",
        RESOURCES,
        "a phase enrollment, with its task lists, has the fields of the spec",
    ),
    SpecRule(
        "resources-nested-enrollment-fields",
        RESOURCES,
        "an enrollment nested in a task list or an evaluation carries `id` through `signoffId` "
        "only",
    ),
    SpecRule("resources-incident-fields", RESOURCES, "an incident has the fields of the spec"),
    SpecRule("resources-event-fields", RESOURCES, "an event has the fields of the spec"),
    SpecRule(
        "resources-search-fields",
        RESOURCES,
        "a resource-center answer has `results`, `totalHits`, `page`, `pageSize` and each "
        "result the spec's fields",
    ),
    SpecRule(
        "resources-search-license-and-import-status",
        RESOURCES,
        "each search result carries the searching tenant's `licensed` and `importStatus`",
    ),
    SpecRule(
        "resources-evaluation-fields",
        RESOURCES,
        "a QA evaluation, with results, protocol results and segments, has the spec's fields",
    ),
    SpecRule(
        "knowledge-reference-id-formats",
        KNOWLEDGE,
        "`referenceId`s are `q-`, `si-`, `ca-`, `sms-`, `dt-`, `lk-`, `md-` followed by 8 hex "
        "digits, by item kind",
    ),
    *_numbered("knowledge", KNOWLEDGE, _KNOWLEDGE_RULES),
    SpecRule(
        "states-enrollment-status",
        STATES,
        "an enrollment's `status` is one of the six states of the spec",
    ),
    *_numbered("knowledge-list", KNOWLEDGE_LIST, _KNOWLEDGE_LIST_RULES),
    SpecRule(
        "endpoints-path-ids-are-integers",
        ENDPOINTS,
        "`userId`, `incidentId`, `eventId` and `knowledgeId` in a path are integers",
    ),
    # The Endpoints table's permission column, one rule per operation.
    SpecRule(
        "endpoints-permission-knowledge-list",
        ENDPOINTS,
        "listing knowledge needs View Knowledge or Manage Knowledge",
    ),
    SpecRule(
        "endpoints-permission-knowledge-write-and-read",
        KNOWLEDGE_OPERATIONS,
        "knowledge create and append need Manage Knowledge; GET of an entry also takes View "
        "Knowledge",
    ),
    SpecRule(
        "endpoints-permission-enrollments", ENDPOINTS, "a user's enrollments need Manage Phases"
    ),
    SpecRule("endpoints-permission-users", ENDPOINTS, "the users list needs Manage Users"),
    SpecRule(
        "endpoints-permission-incident",
        ENDPOINTS,
        "an incident read needs Browse Events or Manage Events",
    ),
    SpecRule(
        "endpoints-permission-event",
        ENDPOINTS,
        "an event read needs Browse Events or Manage Events",
    ),
    SpecRule(
        "endpoints-permission-knowledge-card",
        ENDPOINTS,
        "the knowledge card needs View Knowledge, Manage Knowledge or Admin",
    ),
    SpecRule(
        "auth-credential-per-direction",
        AUTHENTICATION,
        "each direction has its own credentials: a CAD credential is no partner token, and "
        "the reverse",
    ),
    *_numbered("data-auth", DATA_AUTH, _DATA_AUTH_RULES),
    *_numbered("cad-auth", CAD_AUTH, _CAD_AUTH_RULES),
    *_numbered("webhook-profile", WEBHOOK_PROFILE, _WEBHOOK_PROFILE_RULES),
    SpecRule(
        "events-delivery-headers",
        EVENTS,
        "each delivery carries `X-SVC-Delivery-Id`, `X-SVC-Timestamp` and `X-SVC-Signature`",
    ),
    SpecRule(
        "events-retry-keeps-id-and-body",
        EVENTS,
        "a retried delivery keeps its delivery id and body",
    ),
    SpecRule(
        "events-duplicates-by-delivery-id",
        EVENTS,
        "a receiver recognises a duplicate delivery by its delivery id",
    ),
    SpecRule("errors-error-info", ERRORS, "every error body is ErrorInfo: `info` and `reason`"),
    SpecRule(
        "errors-401-body",
        ERRORS,
        "a missing or invalid bearer token is 401 with `info` = `Authentication required`",
    ),
    SpecRule(
        "errors-403-body",
        ERRORS,
        "a token without View or Manage Knowledge listing knowledge is 403 with the spec's "
        "exact `info`",
    ),
    SpecRule(
        "errors-400-unresolved-link-target",
        ERRORS,
        "an unresolvable `targetExternalId` is 400 ErrorInfo and nothing is written",
    ),
    SpecRule(
        "errors-400-unknown-reference-id",
        ERRORS,
        "an append's `referenceId` absent from the previous version is 400 ErrorInfo",
    ),
    SpecRule("limits-page-size-default", LIMITS, "the knowledge list's page size defaults to 50"),
    SpecRule(
        "limits-page-size-cap",
        LIMITS,
        "a knowledge-list page size above 200 is silently reduced to 200, no error",
    ),
    SpecRule("limits-page-number-base", LIMITS, "knowledge-list pages are numbered from 0"),
    SpecRule(
        "limits-timestamp-tolerance",
        LIMITS,
        "a webhook signature check allows 300 seconds between the timestamp and the clock",
    ),
    *_numbered("versioning", VERSIONING, _VERSIONING_RULES),
)

# Items the spec leaves open ("not shown"): the design decides them (docs/decisions/). Their
# summaries are shown on the generated page, which lives in docs/reference/: links are
# relative to it.
OPEN_ITEMS: tuple[SpecRule, ...] = (
    SpecRule(
        "data-auth-rule-5",
        DATA_AUTH,
        "token issuance, lifetime and format: opaque random tokens, stored hashed, expiring "
        "([credentials](../decisions/api.md))",
    ),
    SpecRule(
        "data-auth-rule-6",
        DATA_AUTH,
        "the permission for the evaluations list (ours: View QA, [decisions](../decisions/api.md))"
        " and for resource-center search (any valid partner credential, "
        "[decisions](../decisions/resource-center.md))",
    ),
    SpecRule(
        "versioning-rule-5",
        VERSIONING,
        "deprecation policy and compatibility guarantees across API versions",
    ),
)

RULES_BY_ID: dict[str, SpecRule] = {rule.id: rule for rule in RULES}
OPEN_ITEM_IDS: frozenset[str] = frozenset(item.id for item in OPEN_ITEMS)
