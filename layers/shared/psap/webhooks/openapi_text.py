"""Descriptions of the tenant admin API's connector and delivery-log operations (OpenAPI)."""

from typing import Any

from psap.openapi_answers import ERROR_INFO
from psap.webhooks.administration import (
    ATTEMPTS_SHOWN,
    LOG_EXAMINE_MAX,
    ROTATION_RATE,
)

TAG_CONNECTORS = "Admin: CAD connectors"
TAG_DELIVERIES = "Admin: delivery log"

CREATE_CONNECTOR = """\
Registers the CAD endpoint that receives the service's signed webhook updates. The URL must
be https on port 443 or 8443 and resolve to a public address (loopback, private,
link-local and metadata addresses are refused). `bearerCredential` is the credential the CAD
issued to the service, for this URL's origin only: it is stored in Secrets Manager, sent as
`Authorization: Bearer ...` on every delivery to that origin and never returned. The
response carries the connector's signing secret: it is shown once, in this response only;
give it to the CAD now."""

UPDATE_CONNECTOR = """\
Changes the fields given. `eventTypes: null` sends every kind of update. A new `profile`
needs a secret in its own form: the response then carries a new signing secret, shown once,
and the old one stops signing at once. `bearerCredential` replaces the stored one (never
returned). A `url` on another origin (scheme, host or port) needs `bearerCredential` in the
same request (400 naming it otherwise): the CAD's credential never follows the URL to a
server it was not given for."""

ROTATE_SECRET = f"""\
Makes a new signing secret, shown once in this response. The previous secrets stay valid
until `previousSecretsRetireAt` (`overlapHours`, default 24, at most 720), so the CAD can
switch at any moment within the window. Rate limit: {ROTATION_RATE.describe()} per tenant
(429 with Retry-After beyond it)."""

DISABLE = """\
Stops deliveries to this connector. Deliveries created meanwhile are not lost: they are held
(or cancelled, recoverable) as the dispatcher documents; enable the connector and recover."""

ENABLE = """\
Sends to this connector again; also clears the flag a 410 Gone answer set. The deliveries
held while it was disabled are sent oldest first by a job that starts now and runs after
this request: `deliveryJob` shows its progress (GET the connector to follow it)."""

TEST = """\
Queues a `connector.test` update for this connector only. Follow it with
GET /api/v1/external/admin/deliveries/{deliveryId}. A disabled connector answers 409."""

LIST_DELIVERIES = f"""\
The connector's deliveries, newest first, filtered by `status`, `eventType` and `since`
(created at or after). Cursor pagination: pass `nextCursor` as `cursor`. A request examines
at most {LOG_EXAMINE_MAX} deliveries, so with selective filters a page can be short, even
empty, and still carry a cursor: keep reading until `nextCursor` is null."""

CONNECTOR_STATS = """\
The connector's deliveries per hour by outcome (delivered, retrying, dead, held) and its
attempt latency (p50/p95, read from fixed buckets: a percentile is its bucket's upper bound)
over the last 24 hours (`window=24h`, the default) or 7 days (`window=7d`), from an hourly
rollup the dispatcher keeps for 8 days. Hours without attempts are zeros."""

GET_DELIVERY = f"""\
One delivery with its latest {ATTEMPTS_SHOWN} attempts (newest first): time, status code,
latency, error class and at most the first 1024 characters of what the receiver answered.
Never a secret: attempts are recorded without headers."""

REPLAY = """\
Sends the delivery again, whatever its state, with a fresh retry schedule: the same delivery
id and the exact same body (the CAD deduplicates by delivery id)."""

RECOVER = """\
Re-sends the connector's dead-letter deliveries (failed, stopped by 410, expired) that died
at or after `since`, then its held ones created since then, oldest first, with the same ids
and bodies. However many there are, a job does it after this request answers: the answer is
the job, and GET the connector shows its progress (`deliveryJob`)."""

CONFLICT: dict[int, Any] = {
    409: {
        "description": "The connector changed meanwhile, or is not in a state for this",
        "content": ERROR_INFO,
    }
}
