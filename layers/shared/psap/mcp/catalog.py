"""What the MCP endpoint offers: tools and resource templates over the same read logic as the
REST functions, each tied to the REST operation whose permission it needs.

A tool's arguments are a strict pydantic model (snake_case, no extra keys, no coercion of
"5" into 5); its output schema is the REST response model's. The permission is looked up
in psap.http.operations by the REST route, so the table stays the one source of truth.

Each tool imports its area's logic and models when it is first used (or listed), not when
the function starts: one function serves seven areas, and a container that only answers
get_incident should not build the QA and training models (`make bench`, section mcp).
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter

from psap.http.operations import OPERATIONS, Operation
from psap.http.principal import Principal
from psap.knowledge.models import KnowledgeType
from psap.paging import PageQuery
from psap.resource_center.models import ItemType
from psap.resource_center.query import DEFAULT_PAGE_SIZE as SEARCH_PAGE_SIZE
from psap.resource_center.query import MAX_PAGE_SIZE as SEARCH_MAX_PAGE_SIZE
from psap.resource_center.query import MAX_QUERY_LENGTH, parse_search_query

# The REST lists' paging (psap.knowledge.listing, psap.qa.listing), written here so that
# importing the catalog does not import every area's store and models; a unit test checks
# that they agree.
KNOWLEDGE_PAGE_SIZE: Final = 50
KNOWLEDGE_MAX_PAGE_SIZE: Final = 200
EVALUATION_PAGE_SIZE: Final = 20
EVALUATION_MAX_PAGE_SIZE: Final = 50

BASE: Final = "/api/v1/external"
INT64_MAX: Final = 2**63 - 1

type Id = Annotated[int, Field(ge=1, le=INT64_MAX)]


class Arguments(BaseModel):
    """Tool arguments as the model sends them: exact JSON types, nothing unknown."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class SearchArguments(Arguments):
    query: Annotated[
        str, StringConstraints(min_length=1, max_length=MAX_QUERY_LENGTH, pattern=r"\S")
    ] = Field(description="What to look for, in plain words (e.g. 'stroke assessment')")
    item_type: ItemType | None = Field(
        default=None, description="Only COACHING_CONTENT or only HELP_ARTICLE results"
    )
    page_size: Annotated[int, Field(ge=1)] = Field(
        default=SEARCH_PAGE_SIZE,
        description=f"How many results, best first (capped at {SEARCH_MAX_PAGE_SIZE})",
    )


class IncidentArguments(Arguments):
    incident_id: Id = Field(description="The incident's numeric id")


class EventArguments(Arguments):
    event_id: Id = Field(description="The event's numeric id")


class KnowledgeCardArguments(Arguments):
    knowledge_id: Id = Field(description="The knowledge entry's numeric id")


class KnowledgeListArguments(Arguments):
    provider: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = Field(
        default=None, description="Only entries of this provider (exact match)"
    )
    knowledge_type: KnowledgeType | None = Field(
        default=None, description="Only entries of this type (exact match)"
    )
    page: Annotated[int, Field(ge=0)] = Field(default=0, description="0-based page number")
    size: Annotated[int, Field(ge=1)] = Field(
        default=KNOWLEDGE_PAGE_SIZE,
        description=f"Entries per page (capped at {KNOWLEDGE_MAX_PAGE_SIZE})",
    )


class EvaluationListArguments(Arguments):
    user_id: Id = Field(description="The user's numeric id")
    page: Annotated[int, Field(ge=0)] = Field(default=0, description="0-based page number")
    size: Annotated[int, Field(ge=1)] = Field(
        default=EVALUATION_PAGE_SIZE,
        description=f"Evaluations per page, newest first (capped at {EVALUATION_MAX_PAGE_SIZE})",
    )


class EnrollmentListArguments(Arguments):
    user_id: Id = Field(description="The user's numeric id")


# The reads, each importing its area on first use (see the module's docstring).
# ruff: noqa: PLC0415


def _search(principal: Principal, arguments: Any) -> Any:
    # The search engine (onnxruntime, the model) comes from the search layer.
    from psap.resource_center.search import search_resource_center

    query = parse_search_query(
        arguments.query, 0, arguments.page_size, item_type=arguments.item_type
    )
    return search_resource_center(principal.tenant_id, principal.permissions, query)


def _incident(principal: Principal, arguments: Any) -> Any:
    from psap.incidents.reading import get_incident

    return get_incident(principal.tenant_id, arguments.incident_id)


def _event(principal: Principal, arguments: Any) -> Any:
    from psap.events.reading import get_event

    return get_event(principal.tenant_id, arguments.event_id)


def _card(principal: Principal, arguments: Any) -> Any:
    from psap.knowledge.card import get_card

    return get_card(principal.tenant_id, arguments.knowledge_id)


def _knowledge(principal: Principal, arguments: Any) -> Any:
    from psap.knowledge.listing import list_knowledge
    from psap.knowledge.models import ExternalKnowledgePageDto

    # The light listing answers plain JSON dicts; the tool's output is the model.
    return ExternalKnowledgePageDto.model_validate(
        list_knowledge(
            principal.tenant_id,
            arguments.page,
            arguments.size,
            provider=arguments.provider,
            knowledge_type=arguments.knowledge_type,
        )
    )


def _evaluations(principal: Principal, arguments: Any) -> Any:
    from psap.qa.listing import list_evaluations
    from psap.qa.store import EvaluationFilters

    return list_evaluations(
        principal.tenant_id,
        arguments.user_id,
        paging=PageQuery(arguments.page, arguments.size),
        filters=EvaluationFilters(),
    )


def _enrollments(principal: Principal, arguments: Any) -> Any:
    from psap.training.listing import list_enrollments

    return list_enrollments(principal.tenant_id, arguments.user_id).enrollments


def _search_output() -> Any:
    from psap.resource_center.models import ResourceCenterSearchResponse

    return ResourceCenterSearchResponse


def _incident_output() -> Any:
    from psap.incidents.models import Incident

    return Incident


def _event_output() -> Any:
    from psap.events.models import Event

    return Event


def _card_output() -> Any:
    from psap.knowledge.card import KnowledgeCardDto

    return KnowledgeCardDto


def _knowledge_output() -> Any:
    from psap.knowledge.models import ExternalKnowledgePageDto

    return ExternalKnowledgePageDto


def _evaluations_output() -> Any:
    from psap.qa.models import EvaluationPage

    return EvaluationPage


def _enrollments_output() -> Any:
    from psap.training.models import PhaseEnrollment

    return list[PhaseEnrollment]


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    arguments: type[Arguments]
    route: str  # the REST route (GET) whose permission and logic the tool shares
    output_type: Callable[[], Any]  # the REST response type, imported when first needed
    run: Callable[[Principal, Any], Any]
    # Path parameters of the REST route, for the audit record (`resourceIds`).
    resource_ids: Callable[[Any], dict[str, str]] = lambda arguments: {}
    # The REST body is a JSON array: structured content before 2026-07-28 must be an object.
    wrap_as: str | None = None

    @property
    def operation(self) -> Operation:
        return OPERATIONS[("GET", BASE + self.route)]

    @property
    def output(self) -> TypeAdapter[Any]:
        return _adapter(self.output_type)


@cache
def _adapter(output_type: Callable[[], Any]) -> TypeAdapter[Any]:
    return TypeAdapter(output_type())


TOOLS: Final[tuple[Tool, ...]] = (
    Tool(
        name="search_resource_center",
        title="Search the resource center",
        description=(
            "Searches the published resource-center catalog (coaching content and help "
            "articles) by keyword and meaning, best matches first. Use it to find guidance, "
            "training material or how-to articles for a topic. Each result has a title, a "
            "summary, a snippet with the matched words in <mark> tags, its url, and whether "
            "this center holds the license for it (licensed) and has imported it "
            "(importStatus). Credentials without Resource Center access see help articles only."
        ),
        arguments=SearchArguments,
        route="/mcp/resources/resource-center/search",
        output_type=_search_output,
        run=_search,
    ),
    Tool(
        name="get_incident",
        title="Get an incident",
        description=(
            "Reads one 911 incident of this center by its numeric id: number, type and "
            "priority, location and coordinates, caller, call-taker and call timestamps, "
            "notes, responding units with their dispatch/en-route/arrival/clear times, "
            "disposition, and the id of the linked event (read it with get_event). An id that "
            "does not exist for this center is reported as not found."
        ),
        arguments=IncidentArguments,
        route="/mcp/resources/incidents/{incidentId}",
        output_type=_incident_output,
        run=_incident,
        resource_ids=lambda arguments: {"incidentId": str(arguments.incident_id)},
    ),
    Tool(
        name="get_event",
        title="Get an event",
        description=(
            "Reads one event (the call-handling record of an incident) by its numeric id: "
            "number, type, summary, location, date, the personnel involved (call-takers, "
            "dispatchers), the linked incident's id, and media ids (recordings, radio "
            "traffic). An id that does not exist for this center is reported as not found."
        ),
        arguments=EventArguments,
        route="/mcp/resources/events/{eventId}",
        output_type=_event_output,
        run=_event,
        resource_ids=lambda arguments: {"eventId": str(arguments.event_id)},
    ),
    Tool(
        name="get_knowledge_card",
        title="Read a knowledge card",
        description=(
            "Reads the card of a knowledge entry (a guide card, instruction card, policy...) "
            "by its numeric id: its latest version, whether that version is the published "
            "(active) one, and one plain-text digest per section (questions, spoken "
            "instructions, CAD actions, links...), preferring this center's own edits. Use it "
            "to tell a call-taker what a card says. processingStatus PENDING means the digest "
            "of the newest version is still being made. Find ids with list_knowledge."
        ),
        arguments=KnowledgeCardArguments,
        route="/mcp/resources/knowledge/{knowledgeId}/card",
        output_type=_card_output,
        run=_card,
        resource_ids=lambda arguments: {"knowledgeId": str(arguments.knowledge_id)},
    ),
    Tool(
        name="list_knowledge",
        title="List knowledge entries",
        description=(
            "Lists this center's knowledge entries loaded through the API (guide cards, "
            "instruction cards, policies...), sorted by id, as summaries: id, name, provider, "
            "knowledgeType, externalId and the published version number. Filter by provider "
            "or knowledge_type; page through with page and size (totalItems and totalPages "
            "tell how many there are). Read an entry's content with get_knowledge_card."
        ),
        arguments=KnowledgeListArguments,
        route="/knowledge",
        output_type=_knowledge_output,
        run=_knowledge,
    ),
    Tool(
        name="list_user_evaluations",
        title="List a user's QA evaluations",
        description=(
            "Lists the quality-assurance evaluations of one user (a call-taker or dispatcher) "
            "by user id, newest first, one page at a time: the evaluated event, status, "
            "scores, each criterion's result with explanations and transcript excerpts, and "
            "protocol (guide card) compliance results. Pages are large: start with a small "
            "size. An unknown user is reported as not found."
        ),
        arguments=EvaluationListArguments,
        route="/qa/user/{userId}/evaluations",
        output_type=_evaluations_output,
        run=_evaluations,
        resource_ids=lambda arguments: {"userId": str(arguments.user_id)},
    ),
    Tool(
        name="list_user_enrollments",
        title="List a user's training enrollments",
        description=(
            "Lists the training phase enrollments of one user by user id: phase, status "
            "(SCHEDULED, IN_PROGRESS, SUBMITTED, WAITING_SIGNOFF, COMPLETE, CANCELLED), dates, "
            "training officer, hours, and task lists with their items and progress counters. "
            "A user without enrollments has an empty list; an unknown user is reported as not "
            "found."
        ),
        arguments=EnrollmentListArguments,
        route="/train/user/{userId}/enrollments",
        output_type=_enrollments_output,
        run=_enrollments,
        resource_ids=lambda arguments: {"userId": str(arguments.user_id)},
        wrap_as="enrollments",
    ),
)
TOOLS_BY_NAME: Final = {tool.name: tool for tool in TOOLS}


@dataclass(frozen=True)
class ResourceTemplate:
    uri_template: str
    name: str
    title: str
    description: str
    tool: Tool  # the read behind it: same logic, permission and audit
    parameter: str  # the URI template's variable
    argument: str  # the tool's argument it fills

    @property
    def pattern(self) -> re.Pattern[str]:
        escaped = re.escape(self.uri_template).replace(
            re.escape("{" + self.parameter + "}"), r"(?P<id>[1-9][0-9]{0,18})"
        )
        return re.compile(f"^{escaped}$")


RESOURCE_TEMPLATES: Final[tuple[ResourceTemplate, ...]] = (
    ResourceTemplate(
        uri_template="psap://incidents/{incidentId}",
        name="incident",
        title="Incident",
        description="One incident of this center as JSON, the same as get_incident.",
        tool=TOOLS_BY_NAME["get_incident"],
        parameter="incidentId",
        argument="incident_id",
    ),
    ResourceTemplate(
        uri_template="psap://events/{eventId}",
        name="event",
        title="Event",
        description="One event of this center as JSON, the same as get_event.",
        tool=TOOLS_BY_NAME["get_event"],
        parameter="eventId",
        argument="event_id",
    ),
    ResourceTemplate(
        uri_template="psap://knowledge/{knowledgeId}/card",
        name="knowledge-card",
        title="Knowledge card",
        description="The card of one knowledge entry as JSON, the same as get_knowledge_card.",
        tool=TOOLS_BY_NAME["get_knowledge_card"],
        parameter="knowledgeId",
        argument="knowledge_id",
    ),
)


def resource_for(uri: str) -> tuple[ResourceTemplate, int] | None:
    """The template a URI matches and the id in it."""
    for template in RESOURCE_TEMPLATES:
        match = template.pattern.match(uri)
        if match is not None and int(match["id"]) <= INT64_MAX:
            return template, int(match["id"])
    return None
