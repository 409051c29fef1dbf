"""GET /api/v1/external/train/user/{userId}/enrollments: a user's phase enrollments."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.models import INT64_MAX
from psap.training.listing import list_enrollments
from psap.training.models import PhaseEnrollment

app = create_resolver()


@app.get(
    "/api/v1/external/train/user/<userId>/enrollments",
    summary="List a user's phase enrollments",
    description=(
        "Every phase enrollment of the user, by id, in full form: task lists with their "
        "template version, items, audit history, groups and progress counters. An existing "
        "user without enrollments answers []; an unknown user, or one of another tenant, 404."
    ),
    operation_id="listEnrollments",
    tags=["Training"],
)
def enrollments(
    user_id: Annotated[int, Path(alias="userId", ge=0, le=INT64_MAX, description="The user's id")],
) -> list[PhaseEnrollment]:
    return list_enrollments(current_principal(app).tenant_id, user_id)


handler = lambda_handler(app)
