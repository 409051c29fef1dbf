"""Descriptions of the tenant admin API's credential operations (OpenAPI)."""

from psap.auth.issuing import AUTHORIZER_CACHE_SECONDS, ISSUE_RATE, MAX_EXPIRY_DAYS

TAG_CREDENTIALS = "Admin: credentials"

ISSUE = f"""\
Issues a credential of the caller's tenant: `partner` (the data interface, with
`permissions`) or `cad` (a CAD's key for POST /cad/v1/incidents, no permissions). The token
is in this response only: it is stored as a hash and can never be shown again. You can grant
only permissions your own credential holds (403 otherwise). `expiresInDays`: 1 to
{MAX_EXPIRY_DAYS}, or null for no expiry. Rate limit: {ISSUE_RATE.describe()} per tenant
(429 with Retry-After beyond it)."""

LIST = f"""\
The tenant's credentials of both kinds, by id, never with their tokens. Cursor pagination:
pass `nextCursor` as `cursor`. `authorizerCacheSeconds` ({AUTHORIZER_CACHE_SECONDS}) is how
long a revoked token may still pass: API Gateway caches the authorizer's answer per token."""

REVOKE = f"""\
Revokes a credential of the tenant (idempotent). The token may still pass for up to
`authorizerCacheSeconds` ({AUTHORIZER_CACHE_SECONDS}) seconds: API Gateway's authorizer
cache."""
