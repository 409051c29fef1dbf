"""Nothing is lost while a connector is disabled (DESIGN section 6): an update for a disabled
connector is a held delivery, listed, and sent when the connector is enabled or recovered,
in creation order, with its original delivery id and body (docs/webhooks.md, "Held
deliveries")."""

from datetime import timedelta

import pytest

from psap.errors import Conflict
from psap.webhooks import dispatcher, store
from psap.webhooks.connectors import ConnectorWithSecret
from psap.webhooks.deliveries import HELD_RETENTION, recover, replay
from psap.webhooks.models import ConnectorStatus, DeliveryStatus
from tests.support.cad import TENANT, CadFunctions, drain, run_delivery_jobs
from tests.support.clock import Clock
from tests.support.receiver import Answer, Receiver
from tests.support.webhooks import (
    add_connector,
    broadcast_update,
    connector_to_a_gone_receiver,
    set_connector_status,
)


def set_status(connector: ConnectorWithSecret, status: ConnectorStatus) -> None:
    """Changes the status; enabling also runs the release job it starts, to its end."""
    set_connector_status(connector, status)
    run_delivery_jobs()


def listed(connector: ConnectorWithSecret) -> dict[str, DeliveryStatus]:
    deliveries, _ = store.list_deliveries(TENANT, connector.connector.connector_id, 50)
    return {delivery.delivery_id: delivery.status for delivery in deliveries}


def test_an_update_for_a_disabled_connector_is_held_and_delivered_in_order_on_enable(
    cad: CadFunctions, receiver: Receiver, fake_clock: Clock
) -> None:
    # Given a disabled connector
    connector = add_connector(receiver.url)
    set_status(connector, ConnectorStatus.DISABLED)
    # When three updates are produced meanwhile
    held = []
    for index in range(3):
        held.append(broadcast_update(f"seed-{index}"))
        fake_clock.advance(1)
    # Then nothing is sent, nothing is queued, and each is a held delivery in the listing
    assert cad.run_dispatcher() == []
    assert receiver.requests == []
    assert listed(connector) == dict.fromkeys(held, DeliveryStatus.HELD)
    bodies = [store.get_delivery(TENANT, d).body for d in held]
    # When the connector is enabled
    set_status(connector, ConnectorStatus.ACTIVE)
    cad.run_dispatcher()
    # Then each is delivered once, in the order the updates were made, same id and body
    assert [r.headers["X-SVC-Delivery-Id"] for r in receiver.requests] == held
    assert [r.body for r in receiver.requests] == bodies
    assert listed(connector) == dict.fromkeys(held, DeliveryStatus.DELIVERED)


def test_a_pending_delivery_whose_connector_was_disabled_is_held_not_cancelled(
    cad: CadFunctions, receiver: Receiver
) -> None:
    # Given a delivery queued while its connector was active, then the connector disabled
    connector = add_connector(receiver.url)
    delivery_id = broadcast_update("seed-1")
    set_status(connector, ConnectorStatus.DISABLED)
    # When its message is processed
    cad.run_dispatcher()
    # Then it is held (not sent, not dead-lettered)
    assert receiver.requests == []
    assert store.get_delivery(TENANT, delivery_id).status is DeliveryStatus.HELD
    assert store.list_dead(TENANT, connector.connector.connector_id, 10)[0] == []
    # And it goes out on enable
    set_status(connector, ConnectorStatus.ACTIVE)
    cad.run_dispatcher()
    assert [r.headers["X-SVC-Delivery-Id"] for r in receiver.requests] == [delivery_id]


def test_a_410_disables_the_connector_with_a_reason_and_later_updates_are_held(
    cad: CadFunctions, receiver: Receiver, fake_clock: Clock
) -> None:
    # Given a receiver that answers 410 Gone
    receiver.default = Answer(410)
    connector = add_connector(receiver.url)
    gone = broadcast_update("seed-gone")
    cad.run_dispatcher()
    # Then the delivery stopped, and the connector is disabled with the reason
    disabled = store.get_connector(TENANT, connector.connector.connector_id)
    assert disabled.status is ConnectorStatus.DISABLED
    assert disabled.flag_reason is not None and "410" in disabled.flag_reason
    assert store.get_delivery(TENANT, gone).status is DeliveryStatus.STOPPED
    # When updates arrive meanwhile, they are held
    fake_clock.advance(60)
    later = broadcast_update("seed-later")
    assert store.get_delivery(TENANT, later).status is DeliveryStatus.HELD
    # When the CAD is back and the operator enables, then recovers since before the 410
    receiver.default = Answer(200)
    set_status(connector, ConnectorStatus.ACTIVE)
    recovered = recover(
        TENANT,
        connector.connector.connector_id,
        fake_clock.now - timedelta(hours=1),
        now=fake_clock.now,
    )
    assert recovered == [gone]
    cad.run_dispatcher()
    # Then both are delivered once, the older first
    delivered = [r.headers["X-SVC-Delivery-Id"] for r in receiver.requests[1:]]
    assert sorted(delivered) == sorted([gone, later])
    assert len(delivered) == 2


def test_recover_since_sends_held_deliveries_in_order_with_dead_ones(
    cad: CadFunctions, receiver: Receiver, fake_clock: Clock
) -> None:
    # Given a dead delivery, then held ones, on a connector made active without a release
    # (as after an enable that stopped half-way)
    _, connector_id = connector_to_a_gone_receiver(receiver)
    dead = broadcast_update("seed-dead")
    cad.run_dispatcher()
    fake_clock.advance(10)
    held = [broadcast_update("seed-a")]
    fake_clock.advance(1)
    held.append(broadcast_update("seed-b"))
    store.set_connector_status(TENANT, connector_id, ConnectorStatus.ACTIVE)
    dispatcher.forget_connectors()
    receiver.default = Answer(200)
    # When the operator recovers since before all of them
    since = fake_clock.now - timedelta(minutes=5)
    assert recover(TENANT, connector_id, since, now=fake_clock.now) == [dead, *held]
    cad.run_dispatcher()
    # Then every one is delivered, in creation order
    assert [r.headers["X-SVC-Delivery-Id"] for r in receiver.requests[1:]] == [dead, *held]


def test_recover_on_a_disabled_connector_is_refused(cad_aws: None, fake_clock: Clock) -> None:
    connector = add_connector("http://127.0.0.1:9/")
    set_status(connector, ConnectorStatus.DISABLED)
    broadcast_update("seed-1")
    with pytest.raises(Conflict):
        recover(
            TENANT,
            connector.connector.connector_id,
            fake_clock.now - timedelta(hours=1),
            now=fake_clock.now,
        )


def test_a_delivery_held_longer_than_the_retention_expires_instead_of_being_sent(
    cad: CadFunctions, receiver: Receiver, fake_clock: Clock
) -> None:
    # Given a delivery held for longer than the retention, and one held for a day
    connector = add_connector(receiver.url)
    set_status(connector, ConnectorStatus.DISABLED)
    old = broadcast_update("seed-old")
    fake_clock.advance((HELD_RETENTION - timedelta(days=1)).total_seconds() + 1)
    recent = broadcast_update("seed-recent")
    fake_clock.advance(timedelta(days=1).total_seconds())
    # When the connector is enabled
    set_status(connector, ConnectorStatus.ACTIVE)
    cad.run_dispatcher()
    # Then only the recent one is sent; the old one is EXPIRED in the dead-letter list
    assert [r.headers["X-SVC-Delivery-Id"] for r in receiver.requests] == [recent]
    assert store.get_delivery(TENANT, old).status is DeliveryStatus.EXPIRED
    dead, _ = store.list_dead(TENANT, connector.connector.connector_id, 10)
    assert [d.delivery_id for d in dead] == [old]
    # And it can still be sent deliberately, with its original id and body
    replay(TENANT, old, fake_clock.now)
    cad.run_dispatcher()
    assert receiver.requests[-1].headers["X-SVC-Delivery-Id"] == old


def test_the_admin_cli_lists_held_deliveries(
    cad_aws: None, capsys: pytest.CaptureFixture[str]
) -> None:
    from psap.config import auth_table, knowledge_table
    from tools import admin

    connector = add_connector("http://127.0.0.1:9/")
    set_status(connector, ConnectorStatus.DISABLED)
    delivery_id = broadcast_update("seed-1")
    drain("WebhookQueue")
    target = ["--auth-table", auth_table(), "--knowledge-table", knowledge_table()]
    command = ["connector", "deliveries", "--tenant", str(TENANT)]
    assert admin.main([*target, *command, "--connector", connector.connector.connector_id]) == 0
    (line,) = capsys.readouterr().out.strip().splitlines()
    assert delivery_id in line
    assert "HELD" in line
