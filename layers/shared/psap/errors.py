"""Domain exceptions. They say what went wrong in the domain's words; psap.http.errors maps
them to HTTP statuses and ErrorInfo bodies in one place."""


class DomainError(Exception):
    """Base of every error a caller can cause. `info` is safe to show to the caller."""

    reason = "ERROR"

    def __init__(self, info: str) -> None:
        super().__init__(info)
        self.info = info


class InvalidInput(DomainError):
    reason = "INVALID_INPUT"


class InvalidParameter(InvalidInput):
    """A query or path parameter is wrong; `info` names the parameter."""

    reason = "INVALID_PARAMETER"

    def __init__(self, parameter: str, problem: str) -> None:
        super().__init__(f"Invalid parameter '{parameter}': {problem}")
        self.parameter = parameter


class InvalidField(InvalidInput):
    """A request body field is wrong; `info` names the field as the client spells it."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"Invalid field '{field}': {problem}")
        self.field = field


class RateLimited(DomainError):
    """Too many sensitive operations of one kind in the current window (429)."""

    reason = "RATE_LIMITED"

    def __init__(self, info: str, retry_after_seconds: int) -> None:
        super().__init__(info)
        self.retry_after_seconds = retry_after_seconds


class NotFound(DomainError):
    """The resource does not exist for this tenant (another tenant's ids look the same)."""

    reason = "NOT_FOUND"


class Conflict(DomainError):
    reason = "CONFLICT"


class PermissionDenied(DomainError):
    reason = "FORBIDDEN"


class PayloadTooLarge(DomainError):
    reason = "PAYLOAD_TOO_LARGE"


class UnsupportedMediaType(DomainError):
    reason = "UNSUPPORTED_MEDIA_TYPE"


class IdempotencyKeyReused(DomainError):
    """The same idempotency key arrived with a different body (422)."""

    reason = "IDEMPOTENCY_KEY_REUSED"


class RequestInFlight(Conflict):
    """The same idempotency key is being processed by a concurrent request (409)."""

    reason = "REQUEST_IN_FLIGHT"


class NotAuthenticated(DomainError):
    reason = "UNAUTHENTICATED"

    def __init__(self, info: str = "Authentication required") -> None:
        super().__init__(info)


class StoreUnavailable(Exception):
    """The data store failed or timed out: our problem (5xx), never the caller's."""
