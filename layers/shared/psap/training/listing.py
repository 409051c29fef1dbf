"""List a user's phase enrollments (full form, with task lists), a slice at a time.

The spec's answer is a bare array, so the slice is bounded without changing its shape: at
most `size` enrollments (default DEFAULT_SIZE, silently capped at MAX_SIZE) and at most
ANSWER_BUDGET_BYTES of JSON, well under Lambda's 6 MB response limit. When more remain, the
handler names the next slice in a `Link: <...?after={id}>; rel="next"` header (RFC 8288):
a client that reads no header gets the first slice, as before for every user with up to
DEFAULT_SIZE enrollments (docs/limits.md, "Answer sizes").
"""

from typing import Final

from psap.errors import NotFound
from psap.training import store
from psap.training.store import EnrollmentSlice

DEFAULT_SIZE: Final = 50
MAX_SIZE: Final = 200
ANSWER_BUDGET_BYTES: Final = 4_000_000


def list_enrollments(
    tenant_id: int, user_id: int, after: int | None = None, *, size: int = DEFAULT_SIZE
) -> EnrollmentSlice:
    """An existing user without enrollments has an empty list; an unknown user is 404."""
    found = store.list_enrollments(
        tenant_id, user_id, after, size=min(size, MAX_SIZE), budget_bytes=ANSWER_BUDGET_BYTES
    )
    if found is None:
        raise NotFound(f"user {user_id} not found")
    return found
