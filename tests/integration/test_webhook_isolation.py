"""A connector's trouble stays its own (DESIGN section 6; docs/webhooks.md, "Isolation"):
one tenant's hanging endpoint does not hold another tenant's delivery back. Tenants of a
batch are sent side by side; after a timeout a connector's deliveries go to the slow lane
(their own queue) instead of taking the main lane's time."""

import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from psap.webhooks import dispatcher, store
from psap.webhooks.connectors import ConnectorWithSecret
from psap.webhooks.deliveries import DispatchMessage
from psap.webhooks.models import DeliveryStatus, Lane
from psap.webhooks.retry_policy import ErrorClass
from psap.webhooks.transport import OutboundClient
from tests.support.cad import OTHER_TENANT, TENANT, CadFunctions, delayed, drain
from tests.support.clock import Clock
from tests.support.receiver import Receiver
from tests.support.sockets import SocketEndpoint
from tests.support.webhooks import add_connector, send_update

HANGING_TENANT, HEALTHY_TENANT = OTHER_TENANT, TENANT


class HangingEndpoint(SocketEndpoint):
    """Accepts connections and reads requests, and answers nothing until released."""

    def __init__(self) -> None:
        self.release = threading.Event()
        super().__init__()

    def handle(self, connection: socket.socket) -> None:
        with connection:
            connection.recv(65536)
            if self.release.wait(timeout=60):
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")

    def close(self) -> None:
        self.release.set()
        super().close()


@pytest.fixture
def hanging() -> Iterator[HangingEndpoint]:
    endpoint = HangingEndpoint()
    yield endpoint
    endpoint.close()


@pytest.fixture
def short_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Attempts give up after 2 s (the lanes' real budgets are longer; the behaviour is the
    same, the test is quicker)."""
    clients: dict[Any, OutboundClient] = {}

    def client(*lane: Any) -> OutboundClient:
        return clients.setdefault(lane, OutboundClient(connect_timeout=1, total_timeout=2))

    monkeypatch.setattr(dispatcher, "outbound_client", client)


def update(connector: ConnectorWithSecret, tenant: int, seed: str) -> str:
    """A test update of `tenant` to this connector alone; its delivery id."""
    delivery_id = send_update(connector, seed, tenant=tenant)
    return delivery_id


def test_a_hanging_tenant_in_the_same_batch_does_not_hold_another_tenants_delivery_back(
    cad: CadFunctions, receiver: Receiver, hanging: HangingEndpoint, short_timeouts: None
) -> None:
    # Given nine deliveries to a tenant whose endpoint hangs, then one to a healthy tenant,
    # all in one batch of the webhook queue
    slow = add_connector(hanging.url, tenant=HANGING_TENANT)
    healthy = add_connector(receiver.url, tenant=HEALTHY_TENANT)
    for index in range(9):
        update(slow, HANGING_TENANT, f"hang-{index}")
    wanted = update(healthy, HEALTHY_TENANT, "healthy")
    batch = drain("WebhookQueue")
    assert len(batch) == 10
    # When the dispatcher runs the batch
    running = threading.Thread(target=cad.dispatch, args=(batch,), daemon=True)
    running.start()
    # Then the healthy tenant's delivery arrives while the other endpoint still hangs
    # (one after another, it would wait for nine timeouts first)
    arrived = threading.Event()

    def watch() -> None:
        while not any(r.headers.get("X-SVC-Delivery-Id") == wanted for r in receiver.requests):
            if not running.is_alive():
                return
            threading.Event().wait(0.05)
        arrived.set()

    threading.Thread(target=watch, daemon=True).start()
    assert arrived.wait(timeout=8), "the healthy tenant's delivery waited for the hanging one"
    assert not hanging.release.is_set()
    running.join(timeout=60)
    assert not running.is_alive()


def test_after_a_timeout_a_connectors_deliveries_go_to_the_slow_lane_without_an_attempt(
    cad: CadFunctions, hanging: HangingEndpoint, short_timeouts: None, fake_clock: Clock
) -> None:
    # Given a connector whose endpoint just timed out once
    slow = add_connector(hanging.url, tenant=HANGING_TENANT)
    first = update(slow, HANGING_TENANT, "first")
    cad.run_dispatcher()
    (attempt,) = store.list_attempts(HANGING_TENANT, first)
    assert attempt.error_class is ErrorClass.TIMEOUT
    connector = store.get_connector(HANGING_TENANT, slow.connector.connector_id)
    assert connector.slow_until is not None and connector.slow_until > fake_clock.now
    tried = hanging.connections
    # When its next deliveries reach the main lane
    later = [update(slow, HANGING_TENANT, f"later-{index}") for index in range(3)]
    cad.run_dispatcher()
    # Then they are passed to the slow lane's queue at once, without an attempt
    assert hanging.connections == tried
    assert all(store.list_attempts(HANGING_TENANT, d) == [] for d in later)
    # (the first delivery's own retry may show up there too once its 60 s delay is over)
    diverted = [m for m in drain("WebhookSlowQueue") if m["deliveryId"] != first]
    assert sorted(m["deliveryId"] for m in diverted) == sorted(later)
    assert all(m["lane"] == "slow" for m in diverted)
    # And the slow lane sends them once the endpoint answers again
    hanging.release.set()
    cad.dispatch(diverted, queue="WebhookSlowQueue")
    assert all(
        store.get_delivery(HANGING_TENANT, d).status is DeliveryStatus.DELIVERED for d in later
    )
    # ... and a quick success brings the connector back to the main lane
    connector = store.get_connector(HANGING_TENANT, slow.connector.connector_id)
    assert connector.slow_until is None


def test_a_retry_after_a_timeout_is_queued_on_the_slow_lane(
    cad: CadFunctions, hanging: HangingEndpoint, short_timeouts: None
) -> None:
    slow = add_connector(hanging.url, tenant=HANGING_TENANT)
    delivery_id = update(slow, HANGING_TENANT, "first")
    cad.run_dispatcher()
    assert store.get_delivery(HANGING_TENANT, delivery_id).next_attempt_at
    assert drain("WebhookQueue") == []
    # The retry (60 s later) rides on the slow lane's queue as a delayed message
    assert delayed("WebhookSlowQueue") == 1
    assert delayed("WebhookQueue") == 0


def test_a_message_without_its_connector_is_diverted_after_its_claim_is_given_back(
    cad: CadFunctions, hanging: HangingEndpoint, short_timeouts: None
) -> None:
    # Given a connector in the slow lane and a delivery whose message does not name it
    # (as the scheduler's messages do not)
    slow = add_connector(hanging.url, tenant=HANGING_TENANT)
    first = update(slow, HANGING_TENANT, "first")
    cad.run_dispatcher()
    tried = hanging.connections
    later = update(slow, HANGING_TENANT, "later")
    drain("WebhookQueue")
    drain("WebhookSlowQueue")
    # When the main lane gets it
    result = dispatcher.dispatch(DispatchMessage.of(HANGING_TENANT, later, 0))
    # Then it is passed to the slow lane without an attempt, and its lease is given back
    assert result is dispatcher.DispatchResult.DIVERTED
    assert hanging.connections == tried
    passed_on = [m["deliveryId"] for m in drain("WebhookSlowQueue") if m["deliveryId"] != first]
    assert passed_on == [later]
    hanging.release.set()
    slow_lane = DispatchMessage.of(HANGING_TENANT, later, 0, lane=Lane.SLOW)
    assert dispatcher.dispatch(slow_lane) is dispatcher.DispatchResult.DELIVERED
