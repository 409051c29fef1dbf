"""Connectors and the updates the service sends them: a connector to a receiver on loopback,
updates emitted as the admin API's test or the CAD worker emits them, a connector's status
changed, and a delivery attempted at once."""

from typing import Any

from psap import clock
from psap.webhooks import dispatcher
from psap.webhooks import store as webhook_store
from psap.webhooks.catalogue import ConnectorTest, UpdateKind, WebhookUpdate
from psap.webhooks.connectors import (
    ConnectorChanges,
    ConnectorWithSecret,
    NewConnector,
    create_connector,
    update_connector,
)
from psap.webhooks.deliveries import DispatchMessage, emit_update
from psap.webhooks.models import ConnectorStatus
from psap.webhooks.signing import SigningProfile
from tests.support.cad import TENANT, CadFunctions
from tests.support.receiver import Answer, Receiver

BEARER = "cad-issued-token-for-the-service"


def add_connector(
    url: str,
    tenant: int = TENANT,
    profile: SigningProfile = SigningProfile.BASELINE,
    *,
    event_types: list[str] | None = None,
    bearer: str | None = BEARER,
) -> ConnectorWithSecret:
    return create_connector(
        tenant,
        NewConnector(
            name="Riverside CAD",
            url=url,
            profile=profile,
            event_types=event_types,
            bearer_credential=bearer,
            local_dev=True,
        ),
        now=clock.utc_now(),
    )


def connector_to_a_gone_receiver(receiver: Receiver) -> tuple[ConnectorWithSecret, str]:
    """A connector whose receiver answers 410 Gone from now on (its next delivery dies and
    disables it), and the connector's id."""
    receiver.default = Answer(410)
    connector = add_connector(receiver.url)
    return connector, connector.connector.connector_id


def send_update(
    connector: ConnectorWithSecret, seed: str = "seed-1", *, tenant: int = TENANT
) -> str:
    """A test update to this connector alone (as `connector test` sends one), its seed as its
    message; the delivery's id."""
    (delivery_id,) = emit_update(
        tenant,
        WebhookUpdate(
            UpdateKind.CONNECTOR_TEST,
            ConnectorTest(connector_id=connector.connector.connector_id, message=seed),
        ),
        seed=seed,
        now=clock.utc_now(),
        only_connector=connector.connector,
    )
    return delivery_id


def an_update(seed: str, *, subject: str | None = None) -> WebhookUpdate:
    """An update whose message is its seed, about `subject` (an incident number)."""
    return WebhookUpdate(
        UpdateKind.CONNECTOR_TEST,
        ConnectorTest(connector_id="any", message=seed),
        subject=subject,
    )


def broadcast_update(seed: str, *, subject: str | None = None, tenant: int = TENANT) -> str:
    """An update as the CAD worker emits it: to every connector of the tenant that wants it
    (the tests give each tenant one); the delivery's id."""
    (delivery_id,) = emit_update(
        tenant, an_update(seed, subject=subject), seed=seed, now=clock.utc_now()
    )
    return delivery_id


def set_connector_status(connector: ConnectorWithSecret, status: ConnectorStatus) -> None:
    """Changes the status, and the dispatcher forgets the connectors it had read (as the
    next container would not have them)."""
    update_connector(
        TENANT,
        connector.connector.connector_id,
        ConnectorChanges(status=status),
        now=clock.utc_now(),
    )
    dispatcher.forget_connectors()


def attempt_now(cad: CadFunctions, delivery_id: str) -> dict[str, Any]:
    """Runs the dispatcher for the delivery's pending attempt, as its queue message would."""
    delivery = webhook_store.get_delivery(TENANT, delivery_id)
    message = DispatchMessage.of(TENANT, delivery_id, delivery.attempt_count)
    return cad.dispatch([message.body()])
