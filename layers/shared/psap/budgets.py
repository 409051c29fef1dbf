"""Per-tenant request budgets: which budget an operation draws on, and how a limit is told.

Every operation of the API belongs to one budget (reads, writes, search, bulk, admin, cad).
API Gateway enforces them (docs/limits.md): each tenant has one API key, which the
authorizers return as `usageIdentifierKey`, and the tenant's usage plan gives every method
of the API a token bucket (rate per second, burst) sized by the method's budget. A tenant's
own limits are a usage plan of its own, set by the operator without a deploy
(`psap-admin tenant limits set`).

Light on purpose: the authorizers import it on their cold path (no pydantic, no boto3).
"""

import hashlib
from dataclasses import dataclass
from enum import StrEnum

from psap.console.paths import api_resource


class Budget(StrEnum):
    READS = "reads"
    WRITES = "writes"
    SEARCH = "search"
    BULK = "bulk"
    ADMIN = "admin"
    CAD = "cad"


@dataclass(frozen=True)
class RateLimit:
    """A token bucket as API Gateway keeps it: `rate` tokens per second, at most `burst`."""

    rate: int
    burst: int


# What a parameter may hold: a zero or negative limit would refuse everything; more than the
# account's API Gateway quota (10 000 requests/s in most Regions) cannot be served anyway.
MAX_RATE = 10_000
MAX_BURST = 5_000

# Operations that cost much more than a read: searches and MCP sessions (the search index
# and the embedding model), and the bulk ones (exports, uploads, imports of files).
_SEARCH = frozenset(
    {
        ("GET", "/api/v1/external/mcp/resources/resource-center/search"),
        ("POST", "/mcp"),
        ("GET", "/mcp"),
        ("DELETE", "/mcp"),
    }
)
_BULK = frozenset(
    {
        ("POST", "/api/v1/external/audit-log/exports"),
        ("POST", "/api/v1/external/incidents/upload"),
        ("POST", "/api/v1/external/incidents/uploads"),
        ("POST", "/api/v1/external/incidents/uploads/{uploadId}/start"),
        ("POST", "/api/v1/external/media/radio-traffic"),
        ("POST", "/api/v1/external/media/radio-traffic/json"),
        # An admin operation, but reading all the tenant's data: the bulk budget.
        ("POST", "/api/v1/external/admin/tenant-exports"),
    }
)
_ADMIN_PREFIX = "/api/v1/external/admin/"
_CAD_PREFIX = "/cad/v1/"
_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def budget_for(method: str, resource: str) -> Budget:
    """The budget of the operation `method resource` (the resource path as in template.yaml;
    a console API path has its admin API operation's budget)."""
    resource = api_resource(resource)
    key = (method.upper(), resource)
    if resource.startswith(_CAD_PREFIX):
        return Budget.CAD
    if key in _BULK:
        return Budget.BULK
    if resource.startswith(_ADMIN_PREFIX):
        return Budget.ADMIN
    if key in _SEARCH:
        return Budget.SEARCH
    return Budget.READS if key[0] in _READ_METHODS else Budget.WRITES


class LimitsError(ValueError):
    """A limits text or value that cannot be used; the message names it."""


def check_limit(budget: str, rate: int, burst: int) -> RateLimit:
    if budget not in Budget.__members__.values():
        names = ", ".join(member.value for member in Budget)
        raise LimitsError(f"unknown budget {budget!r}: one of {names}")
    if not 1 <= rate <= MAX_RATE:
        raise LimitsError(f"{budget}: rate must be 1 to {MAX_RATE} requests per second")
    if not 1 <= burst <= MAX_BURST:
        raise LimitsError(f"{budget}: burst must be 1 to {MAX_BURST} requests")
    return RateLimit(rate, burst)


def parse_limits(text: str, *, partial: bool = False) -> dict[Budget, RateLimit]:
    """`reads=100/200,writes=20/40,...` (rate/burst per budget), as the template passes the
    defaults to the authorizers (every budget must be there) and a tenant's own limits are
    kept (`partial`: only the budgets it changed)."""
    limits: dict[Budget, RateLimit] = {}
    for part in filter(None, (piece.strip() for piece in text.split(","))):
        name, _, numbers = part.partition("=")
        rate, _, burst = numbers.partition("/")
        try:
            limit = check_limit(name.strip(), int(rate), int(burst))
        except ValueError as problem:
            raise LimitsError(f"limit {part!r}: {problem}") from None
        limits[Budget(name.strip())] = limit
    missing = [member.value for member in Budget if member not in limits]
    if missing and not partial:
        raise LimitsError(f"no limit for {', '.join(missing)}")
    return limits


def format_limits(limits: dict[Budget, RateLimit]) -> str:
    """The text parse_limits reads, for the budgets `limits` has."""
    return ",".join(
        f"{budget.value}={limits[budget].rate}/{limits[budget].burst}"
        for budget in Budget
        if budget in limits
    )


def usage_key_value(tenant_id: int) -> str:
    """The value of the tenant's API Gateway API key. Not a secret: the API takes keys only
    from the authorizers (ApiKeySourceType AUTHORIZER), never from a caller, so knowing a
    value grants nothing. Derived, so the authorizer needs no read to name it."""
    digest = hashlib.sha256(f"psap-tenant-usage:{tenant_id}".encode()).hexdigest()
    return f"psaptenant{tenant_id}x{digest[:32]}"


def usage_key_name(tenant_id: int) -> str:
    return f"psap-tenant-{tenant_id}"


# The answer fields of draft-ietf-httpapi-ratelimit-headers: the policy (`q` requests per
# `w` seconds, the bucket's size as an extension parameter) and, on a refusal, what remains.
def policy_field(budget: Budget, limit: RateLimit) -> str:
    return f'"{budget.value}";q={limit.rate};w=1;burst={limit.burst}'


RETRY_AFTER_SECONDS = 1  # a bucket with a rate of at least 1/s holds a token again by then


def exhausted_field(budget: Budget) -> str:
    return f'"{budget.value}";r=0;t={RETRY_AFTER_SECONDS}'
