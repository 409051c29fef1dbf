"""Connectors, deliveries and attempts in the CAD table.

One module per concern: `keys` (the table and its keys), `connectors`, `deliveries`
(leases, attempts, pointers), `log` (the admin API's reads), `reads` (low-level access).
Callers import this package: `from psap.webhooks import store`.

Layout (every key begins with the tenant, except the scheduler's tenant directory):

  T#{t}#CON              / {connectorId}              a connector (no secret values)
  T#{t}#DLV#{deliveryId} / DELIVERY                   a delivery, with its body bytes
  T#{t}#DLV#{deliveryId} / ATTEMPT#{n:04d}            each attempt of it
  T#{t}#CON#{c}#DLV      / {createdAt}#{deliveryId}   a connector's deliveries, by time
  T#{t}#CON#{c}#DEAD     / {deadAt}#{deliveryId}      its dead-letter deliveries, by time
  T#{t}#CON#{c}#HELD     / {createdAt}#{deliveryId}   its held deliveries, in creation order
  T#{t}#DUE              / {nextAttemptAt}#{id}       pending deliveries by due time
  DIRECTORY#WEBHOOK_TENANTS / T#{t:012d}              tenants that have connectors

A delivery, its pointers and its attempt records change in one transaction, conditioned on
the lease the dispatcher took, so two dispatchers can never both record the same attempt.
`nextAttemptAt` in the delivery is the truth; the due pointers let the scheduler find what
is due (SQS delays stop at 15 minutes) with one Query per tenant.
"""

from psap.webhooks.store.connectors import (
    disable_connector,
    get_connector,
    list_connectors,
    mark_connector_slow,
    put_new_connector,
    replace_connector,
    set_connector_status,
    webhook_tenants,
)
from psap.webhooks.store.deliveries import (
    AttemptResult,
    Claim,
    DueDelivery,
    HeldDelivery,
    NewDelivery,
    claim,
    create_delivery,
    dead_since,
    due_deliveries,
    expire_held,
    find_delivery,
    get_delivery,
    held_deliveries,
    hold,
    list_attempts,
    list_dead,
    list_deliveries,
    rearm,
    record_attempt,
    release,
)
from psap.webhooks.store.keys import (
    LEASE_SECONDS,
    TENANT_DIRECTORY,
)
from psap.webhooks.store.log import (
    LogPointer,
    deliveries_by_id,
    delivery_log_pointers,
    recent_attempts,
)

__all__ = [
    "LEASE_SECONDS",
    "TENANT_DIRECTORY",
    "AttemptResult",
    "Claim",
    "DueDelivery",
    "HeldDelivery",
    "LogPointer",
    "NewDelivery",
    "claim",
    "create_delivery",
    "dead_since",
    "deliveries_by_id",
    "delivery_log_pointers",
    "disable_connector",
    "due_deliveries",
    "expire_held",
    "find_delivery",
    "get_connector",
    "get_delivery",
    "held_deliveries",
    "hold",
    "list_attempts",
    "list_connectors",
    "list_dead",
    "list_deliveries",
    "mark_connector_slow",
    "put_new_connector",
    "rearm",
    "recent_attempts",
    "record_attempt",
    "release",
    "replace_connector",
    "set_connector_status",
    "webhook_tenants",
]
