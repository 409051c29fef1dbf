"""Descriptions of the tenant admin API's credential operations (OpenAPI)."""

from psap.auth.issuing import (
    ADMIN_EXPIRY_CEILING_DAYS,
    ADMIN_EXPIRY_DEFAULT_DAYS,
    AUTHORIZER_CACHE_SECONDS,
    ISSUE_RATE,
    MAX_EXPIRY_DAYS,
)

TAG_CREDENTIALS = "Admin: credentials"

ISSUE = f"""\
Issues a credential of the caller's tenant: `partner` (the data interface, with
`permissions`) or `cad` (a CAD's key for POST /cad/v1/incidents, no permissions). The token
is in this response only: it is stored as a hash and can never be shown again. You can grant
only permissions your own credential holds, and mint a `cad` key only if yours holds
MANAGE_EVENTS (403 otherwise). `expiresInDays` is required: at most the tenant's setting for a
credential holding ADMIN ({ADMIN_EXPIRY_DEFAULT_DAYS} days unless the operator changed it,
never over {ADMIN_EXPIRY_CEILING_DAYS}), at most {MAX_EXPIRY_DAYS} for the others (400 naming
the field otherwise). The new credential records your credential as its issuer: revoking
yours revokes it too. Rate limit: {ISSUE_RATE.describe()} per tenant (429 with Retry-After
beyond it)."""

LIST = f"""\
The tenant's credentials of both kinds, by id, never with their tokens, each with its issuer.
Cursor pagination: pass `nextCursor` as `cursor`. `authorizerCacheSeconds`
({AUTHORIZER_CACHE_SECONDS}) is how long the data interface may still accept a revoked token
(API Gateway caches the authorizer's answer per token); the admin API refuses it at once."""

REVOKE = f"""\
Revokes a credential of the tenant and every credential it issued, transitively; the answer
lists those in `alsoRevoked` (idempotent: a second call revokes nothing more). The admin API
refuses the revoked tokens at once (every admin call re-reads its credential); the data
interface may still accept them for up to `authorizerCacheSeconds`
({AUTHORIZER_CACHE_SECONDS}) seconds: API Gateway's authorizer cache. 404 for a credential
the tenant does not have."""
