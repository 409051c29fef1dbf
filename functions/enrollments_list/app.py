"""GET /api/v1/external/train/user/{userId}/enrollments: a user's phase enrollments."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.models import INT64_MAX
from psap.training import listing
from psap.training.listing import ANSWER_BUDGET_BYTES, DEFAULT_SIZE, MAX_SIZE
from psap.training.models import PhaseEnrollment

app = create_resolver()
_PATH = "/api/v1/external/train/user/{user_id}/enrollments"


@app.get(
    "/api/v1/external/train/user/<userId>/enrollments",
    summary="List a user's phase enrollments",
    description=(
        "The user's phase enrollments, by id, in full form: task lists with their "
        "template version, items, audit history, groups and progress counters. An existing "
        "user without enrollments answers []; an unknown user, or one of another tenant, 404. "
        f"At most `size` enrollments (default {DEFAULT_SIZE}, silently capped at {MAX_SIZE}) "
        f"and about {ANSWER_BUDGET_BYTES // 1_000_000} MB of JSON per answer; when more "
        'remain, a `Link: <...?after={id}&size={size}>; rel="next"` header names the rest.'
    ),
    operation_id="listEnrollments",
    tags=["Training"],
    responses={
        200: {
            "description": "The enrollments; `Link` (rel=next) when more remain",
            "content": {"application/json": {"model": list[PhaseEnrollment]}},
        }
    },
)
def list_enrollments(
    user_id: Annotated[int, Path(alias="userId", ge=0, le=INT64_MAX, description="The user's id")],
    after: Annotated[
        int | None,
        Query(ge=0, le=INT64_MAX, description="Only enrollments with a greater id (from Link)"),
    ] = None,
    size: Annotated[
        int, Query(ge=1, le=INT64_MAX, description=f"At most this many, capped at {MAX_SIZE}")
    ] = DEFAULT_SIZE,
) -> Response[str]:
    found = listing.list_enrollments(current_principal(app).tenant_id, user_id, after, size=size)
    body = "[" + ",".join(item.model_dump_json(by_alias=True) for item in found.enrollments) + "]"
    headers: dict[str, str] = {}
    if found.next_after is not None:
        path = _PATH.format(user_id=user_id)
        effective = min(size, MAX_SIZE)
        headers["Link"] = f'<{path}?after={found.next_after}&size={effective}>; rel="next"'
    return Response(200, "application/json", body, headers)


handler = lambda_handler(app)
