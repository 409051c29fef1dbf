"""List a user's phase enrollments (full form, with task lists)."""

from psap.errors import NotFound
from psap.training import store
from psap.training.models import PhaseEnrollment


def list_enrollments(tenant_id: int, user_id: int) -> list[PhaseEnrollment]:
    """An existing user without enrollments has an empty list; an unknown user is 404."""
    enrollments = store.list_enrollments(tenant_id, user_id)
    if enrollments is None:
        raise NotFound(f"user {user_id} not found")
    return enrollments
