"""A tenant's connectors and delivery log, administered: the operations the admin CLI
(tools/admin_cad.py) and the tenant admin API (/api/v1/external/admin/...) both call.

The connector rules themselves (URL and SSRF checks, event types, the bearer credential,
secrets shown once) live in psap.webhooks.connectors and psap.webhooks.deliveries; this
module adds what both front doors need around them: the delivery log's filters and cursor,
bounded attempt excerpts, the rotation rate limit, the local-dev allowance and the test
event. The wire shapes (none of which can carry a secret after its creation) are in
psap.webhooks.admin_models.
"""

import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from psap.clock import parse_timestamp
from psap.config import webhook_local_dev_allowed
from psap.errors import Conflict, InvalidField, InvalidParameter
from psap.storage.rate_limits import RateLimit
from psap.webhooks import store
from psap.webhooks.admin_models import (
    RESPONSE_EXCERPT_CHARS,
    CreateConnectorBody,
    UpdateConnectorBody,
)
from psap.webhooks.catalogue import ConnectorTest, UpdateKind, WebhookUpdate
from psap.webhooks.connectors import (
    BearerCredentialMissing,
    ConnectorChanges,
    ConnectorWithSecret,
    NewConnector,
    create_connector,
    update_connector,
)
from psap.webhooks.deliveries import emit_update, replay
from psap.webhooks.jobs import latest_job, start_recover
from psap.webhooks.models import (
    Attempt,
    Connector,
    ConnectorStatus,
    Delivery,
    DeliveryJob,
    DeliveryStatus,
)

# Per tenant, over the API: a leaked admin token must not churn every connector's secret.
ROTATION_RATE = RateLimit("signing secret rotation", limit=10, window_seconds=3600)
LOG_PAGE_DEFAULT = 25
LOG_PAGE_MAX = 100
# Pointers one delivery-log request may examine when filters skip most of them: a request
# stays O(page) however large the log; a short page with a cursor says "keep reading".
LOG_EXAMINE_MAX = 500
ATTEMPTS_SHOWN = 50  # the latest attempts of a delivery (replays add attempts without end)
CURSOR_PATTERN = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z#dlv-[0-9a-f]{1,64}$"
)
_CURSOR = re.compile(CURSOR_PATTERN)


def _check_local_dev(requested: bool | None) -> None:
    # Over the API a tenant may ask for http on loopback only where the deployment allows
    # it (the local stack); the dispatcher refuses it elsewhere anyway, so refuse it early.
    if requested and not webhook_local_dev_allowed():
        raise InvalidField("localDev", "this deployment does not allow local-dev connectors")


def _kind_values(kinds: list[UpdateKind] | None) -> list[str] | None:
    return [kind.value for kind in kinds] if kinds is not None else None


def create(tenant_id: int, body: CreateConnectorBody, now: datetime) -> ConnectorWithSecret:
    """Over the API: a new connector and its signing secret (shown once)."""
    _check_local_dev(body.local_dev)
    return create_connector(
        tenant_id,
        NewConnector(
            name=body.name,
            url=body.url,
            profile=body.profile,
            event_types=_kind_values(body.event_types),
            bearer_credential=body.bearer_credential,
            local_dev=body.local_dev,
        ),
        now=now,
    )


def update(
    tenant_id: int, connector_id: str, body: UpdateConnectorBody, *, now: datetime
) -> ConnectorWithSecret | Connector:
    """Over the API: changes the fields given; `eventTypes: null` given means every kind."""
    _check_local_dev(body.local_dev)
    given = body.model_fields_set
    try:
        return update_connector(
            tenant_id,
            connector_id,
            ConnectorChanges(
                name=body.name,
                url=body.url,
                profile=body.profile,
                event_types=_kind_values(body.event_types),
                all_event_types="event_types" in given and body.event_types is None,
                bearer_credential=body.bearer_credential,
                local_dev=body.local_dev,
            ),
            now=now,
        )
    except BearerCredentialMissing as error:
        if body.bearer_credential is not None:
            raise
        # The request is well formed: the connector holds no bearer credential for the
        # baseline profile to send (a state of the connector, not a fault of the request).
        raise Conflict(
            f"Connector {connector_id} holds no bearer credential, which the baseline profile "
            "needs: send bearerCredential with the profile"
        ) from error


def set_status(
    tenant_id: int, connector_id: str, status: ConnectorStatus, *, now: datetime
) -> tuple[Connector, DeliveryJob | None]:
    """Disable (deliveries are held, see the dispatcher) or enable again (which also clears
    a 410 Gone flag, and starts the job that sends what was held); with the latest job."""
    changed = connector_of(
        update_connector(tenant_id, connector_id, ConnectorChanges(status=status), now=now)
    )
    return changed, latest_job(tenant_id, connector_id)


def send_test(tenant_id: int, connector_id: str, now: datetime) -> str:
    """Queues a connector.test update for this connector only; returns the delivery id."""
    connector = store.get_connector(tenant_id, connector_id)
    if connector.status is not ConnectorStatus.ACTIVE:
        raise Conflict(f"Connector {connector_id} is {connector.status}; enable it first")
    (delivery_id,) = emit_update(
        tenant_id,
        WebhookUpdate(
            UpdateKind.CONNECTOR_TEST,
            ConnectorTest(connector_id=connector.connector_id, message="test delivery"),
        ),
        seed=f"test#{uuid.uuid4().hex}",
        now=now,
        only_connector=connector,
    )
    return delivery_id


def replay_one(tenant_id: int, delivery_id: str, now: datetime) -> Delivery:
    """The same delivery id and body again, with a fresh schedule."""
    return replay(tenant_id, delivery_id, now)


def recover_since(
    tenant_id: int, connector_id: str, since: datetime, *, now: datetime
) -> DeliveryJob:
    """Starts the job that sends again what died (and what was held) since `since`: the
    request answers at once, however many there are."""
    return start_recover(tenant_id, connector_id, since, now=now)


def connector_with_job(tenant_id: int, connector_id: str) -> tuple[Connector, DeliveryJob | None]:
    """A connector and its latest delivery job (a release or recovery), to show progress."""
    return store.get_connector(tenant_id, connector_id), latest_job(tenant_id, connector_id)


# ---------------------------------------------------------------- the delivery log


@dataclass(frozen=True)
class DeliveryFilters:
    """Which deliveries of a connector's log to show; None matches any."""

    status: DeliveryStatus | None = None
    event_type: str | None = None
    since: datetime | None = None  # created at or after


def delivery_log(
    tenant_id: int,
    connector_id: str,
    *,
    limit: int,
    cursor: str | None = None,
    filters: DeliveryFilters,
) -> tuple[list[Delivery], str | None]:
    """A connector's deliveries, newest first, filtered; and the cursor of what follows.

    Reads at most LOG_EXAMINE_MAX pointers per call, so a filter that matches little in a
    large log answers a short (even empty) page with a cursor rather than reading it all."""
    status, event_type, since = filters.status, filters.event_type, filters.since
    if not 1 <= limit <= LOG_PAGE_MAX:
        raise InvalidParameter("limit", f"from 1 to {LOG_PAGE_MAX}")
    if event_type is not None and event_type not in {kind.value for kind in UpdateKind}:
        known = ", ".join(kind.value for kind in UpdateKind)
        raise InvalidParameter("eventType", f"unknown event type; known: {known}")
    before = decode_cursor(cursor) if cursor is not None else None
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)  # a time without an offset is UTC, as everywhere
    store.get_connector(tenant_id, connector_id)  # 404 for another tenant's connector
    found: list[Delivery] = []
    examined = 0
    while True:
        chunk = min(max(limit - len(found), 1) * 2, LOG_EXAMINE_MAX - examined, LOG_PAGE_MAX)
        pointers, more = store.delivery_log_pointers(
            tenant_id, connector_id, limit=chunk, before=before, since=since
        )
        examined += len(pointers)
        by_id = store.deliveries_by_id(tenant_id, [p.delivery_id for p in pointers])
        for index, pointer in enumerate(pointers):
            delivery = by_id.get(pointer.delivery_id)
            if delivery is None or not _matches(delivery, status, event_type):
                continue
            found.append(delivery)
            if len(found) == limit:
                rest = index + 1 < len(pointers) or more
                return found, encode_cursor(pointer.sort_key) if rest else None
        if pointers:
            before = pointers[-1].sort_key
        if not more or not pointers:
            return found, None
        if examined >= LOG_EXAMINE_MAX:
            return found, encode_cursor(before) if before else None


def _matches(delivery: Delivery, status: DeliveryStatus | None, event_type: str | None) -> bool:
    return (status is None or delivery.status is status) and (
        event_type is None or delivery.event_type == event_type
    )


def encode_cursor(sort_key: str) -> str:
    """The cursor is the sort key of the last delivery read (its time and id: no secret)."""
    return sort_key


def decode_cursor(cursor: str) -> str:
    if not _CURSOR.match(cursor):
        raise InvalidParameter("cursor", "not a cursor this API returned")
    return cursor


def delivery_detail(tenant_id: int, delivery_id: str) -> tuple[Delivery, list[Attempt]]:
    """A delivery and its latest attempts (newest first), each answer excerpt bounded."""
    delivery = store.get_delivery(tenant_id, delivery_id)
    attempts = store.recent_attempts(tenant_id, delivery_id, ATTEMPTS_SHOWN)
    return delivery, [_bounded(attempt) for attempt in attempts]


def _bounded(attempt: Attempt) -> Attempt:
    excerpt = attempt.response_excerpt
    if excerpt is None or len(excerpt) <= RESPONSE_EXCERPT_CHARS:
        return attempt
    return attempt.model_copy(update={"response_excerpt": excerpt[:RESPONSE_EXCERPT_CHARS]})


def parse_since(text: str, field: str = "since") -> datetime:
    try:
        return parse_timestamp(text)
    except ValueError as error:
        example = "e.g. 2026-11-23T00:00:00Z"
        raise InvalidField(field, f"an ISO 8601 time, {example} ({error})") from error


def connector_of(result: ConnectorWithSecret | Connector) -> Connector:
    return result.connector if isinstance(result, ConnectorWithSecret) else result
