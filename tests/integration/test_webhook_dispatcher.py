"""The webhook dispatcher against a real HTTP receiver on loopback (spec: "Service to CAD",
"Events"; DESIGN section 6). The clock is moved by the test; retry waits are not slept."""

import base64
import hashlib
import hmac
import json
import re
from datetime import timedelta
from typing import Any

import pytest
from standardwebhooks import Webhook

from psap.webhooks import dispatcher, store
from psap.webhooks.connectors import (
    ConnectorChanges,
    ConnectorWithSecret,
    RotationSchedule,
    rotate_secret,
    update_connector,
)
from psap.webhooks.deliveries import DispatchMessage, recover, replay
from psap.webhooks.dispatcher import DispatchResult, dispatch, enqueue_due
from psap.webhooks.models import ConnectorStatus, DeliveryStatus
from psap.webhooks.retry_policy import MAX_ATTEMPTS, ErrorClass
from psap.webhooks.signing import SigningProfile
from psap.webhooks.transport import OutboundClient
from receiver_kit.psap_webhooks import VerificationError, verify_delivery, verify_raw_body
from tests.support.cad import TENANT, CadFunctions, delayed, drain, table_items
from tests.support.clock import Clock
from tests.support.receiver import Answer, Receiver
from tests.support.webhooks import (
    BEARER,
    add_connector,
    attempt_now,
    connector_to_a_gone_receiver,
    send_update,
)


def wait_for_next_attempt(clock: Clock, delivery_id: str) -> float:
    delivery = store.get_delivery(TENANT, delivery_id)
    assert delivery.next_attempt_at is not None
    waited = (delivery.next_attempt_at - clock.now).total_seconds()
    clock.now = delivery.next_attempt_at
    return waited


def verify(connector: ConnectorWithSecret, headers: dict[str, str], body: bytes) -> int:
    timestamp = int(headers["X-SVC-Timestamp"])
    verified = verify_delivery(connector.signing_secret, headers, body, now=timestamp)
    assert verified.timestamp is not None
    return verified.timestamp


@pytest.mark.spec(
    "webhook-profile-rule-1",
    "webhook-profile-rule-2",
    "webhook-profile-rule-5",
    "events-delivery-headers",
    "events-retry-keeps-id-and-body",
)
def test_500_twice_then_200_is_three_attempts_same_id_and_body_new_valid_signatures(
    cad: CadFunctions, receiver: Receiver, fake_clock: Clock
) -> None:
    # Given a receiver that fails twice, then accepts
    receiver.script = [Answer(500, body=b"boom"), Answer(500), Answer(200)]
    connector = add_connector(receiver.url)
    delivery_id = send_update(connector)
    # When the dispatcher runs the first attempt and each scheduled retry
    (first,) = drain("WebhookQueue")
    cad.dispatch([first])
    assert delayed("WebhookQueue") == 1  # the 5 s retry rides on an SQS delay
    waits = []
    for _ in range(2):
        waits.append(wait_for_next_attempt(fake_clock, delivery_id))
        attempt_now(cad, delivery_id)
    # Then three requests arrived, with one delivery id and byte-identical bodies ...
    requests = receiver.requests
    assert len(requests) == 3
    assert {r.headers["X-SVC-Delivery-Id"] for r in requests} == {delivery_id}
    assert len({r.body for r in requests}) == 1
    # ... each with a new timestamp and a signature the receiver kit accepts
    stamps = [verify(connector, r.headers, r.body) for r in requests]
    assert len(set(stamps)) == 3
    assert len({r.headers["X-SVC-Signature"] for r in requests}) == 3
    assert all(r.headers["Authorization"] == f"Bearer {BEARER}" for r in requests)
    assert all(r.headers["Content-Type"] == "application/json" for r in requests)
    # ... on the schedule (5 s then 30 s, +-20%)
    assert 4 <= waits[0] <= 6
    assert 24 <= waits[1] <= 36
    # ... and every attempt is recorded
    delivery = store.get_delivery(TENANT, delivery_id)
    assert delivery.status is DeliveryStatus.DELIVERED
    attempts = store.list_attempts(TENANT, delivery_id)
    assert [a.status_code for a in attempts] == [500, 500, 200]
    assert [a.error_class for a in attempts] == [ErrorClass.HTTP, ErrorClass.HTTP, None]
    assert attempts[0].response_excerpt == "boom"
    assert [a.signed_timestamp for a in attempts] == stamps
    assert all(a.latency_ms >= 0 for a in attempts)


@pytest.mark.spec("webhook-profile-rule-5")
def test_the_body_is_serialized_once_and_sent_as_stored(
    cad: CadFunctions, receiver: Receiver
) -> None:
    connector = add_connector(receiver.url)
    delivery_id = send_update(connector)
    cad.run_dispatcher()
    stored = store.get_delivery(TENANT, delivery_id).body
    assert receiver.requests[0].body == stored
    assert json.loads(stored)["type"] == "connector.test"


def test_410_stops_the_delivery_and_disables_the_connector_with_a_reason(
    cad: CadFunctions, receiver: Receiver
) -> None:
    receiver.default = Answer(410, body=b"gone")
    connector = add_connector(receiver.url)
    delivery_id = send_update(connector)
    cad.run_dispatcher()
    delivery = store.get_delivery(TENANT, delivery_id)
    assert delivery.status is DeliveryStatus.STOPPED
    assert delivery.next_attempt_at is None
    flagged = store.get_connector(TENANT, connector.connector.connector_id)
    assert flagged.status is ConnectorStatus.DISABLED
    assert flagged.flag_reason is not None and "410" in flagged.flag_reason
    assert delayed("WebhookQueue") == 0
    dead, _ = store.list_dead(TENANT, connector.connector.connector_id, 10)
    assert [d.delivery_id for d in dead] == [delivery_id]
    # Nothing more is sent to it: its new updates are held (tests/.../test_webhook_held.py).
    assert not flagged.active


def test_a_timeout_is_recorded_and_the_next_attempt_waits_at_least_60_s(
    cad_aws: None, receiver: Receiver, fake_clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    receiver.default = Answer(200, delay=1.5)
    connector = add_connector(receiver.url)
    delivery_id = send_update(connector)
    monkeypatch.setattr(
        dispatcher, "outbound_client", lambda *lane: OutboundClient(total_timeout=0.5)
    )
    result = dispatch(DispatchMessage.of(TENANT, delivery_id, 0))
    assert result is DispatchResult.RETRY_SCHEDULED
    (attempt,) = store.list_attempts(TENANT, delivery_id)
    assert attempt.error_class is ErrorClass.TIMEOUT
    assert attempt.status_code is None
    assert wait_for_next_attempt(fake_clock, delivery_id) >= 60


@pytest.mark.parametrize("status", [429, 502, 503, 504])
def test_overload_answers_wait_at_least_60_s(
    cad: CadFunctions, receiver: Receiver, fake_clock: Clock, status: int
) -> None:
    receiver.default = Answer(status)
    delivery_id = send_update(add_connector(receiver.url))
    cad.run_dispatcher()
    assert wait_for_next_attempt(fake_clock, delivery_id) >= 60


def test_retry_after_is_honoured(cad: CadFunctions, receiver: Receiver, fake_clock: Clock) -> None:
    receiver.default = Answer(503, headers={"Retry-After": "600"})
    delivery_id = send_update(add_connector(receiver.url))
    cad.run_dispatcher()
    assert wait_for_next_attempt(fake_clock, delivery_id) >= 600


def test_retry_after_is_capped_at_one_hour(
    cad: CadFunctions, receiver: Receiver, fake_clock: Clock
) -> None:
    receiver.default = Answer(429, headers={"Retry-After": "999999"})
    delivery_id = send_update(add_connector(receiver.url))
    cad.run_dispatcher()
    assert wait_for_next_attempt(fake_clock, delivery_id) <= 3600


def test_a_redirect_is_not_followed(cad: CadFunctions, receiver: Receiver) -> None:
    receiver.default = Answer(302, headers={"Location": receiver.url + "/elsewhere"})
    delivery_id = send_update(add_connector(receiver.url))
    cad.run_dispatcher()
    assert [r.path for r in receiver.requests] == ["/cad/webhooks"]
    (attempt,) = store.list_attempts(TENANT, delivery_id)
    assert (attempt.status_code, attempt.error_class) == (302, ErrorClass.HTTP)
    assert store.get_delivery(TENANT, delivery_id).status is DeliveryStatus.PENDING


def test_a_refused_connection_is_a_connect_error(cad: CadFunctions) -> None:
    delivery_id = send_update(add_connector("http://127.0.0.1:9/closed"))
    cad.run_dispatcher()
    (attempt,) = store.list_attempts(TENANT, delivery_id)
    assert attempt.error_class is ErrorClass.CONNECT


def test_every_attempt_of_the_schedule_failing_leaves_a_dead_letter_delivery(
    cad: CadFunctions, receiver: Receiver, fake_clock: Clock
) -> None:
    receiver.default = Answer(500)
    connector = add_connector(receiver.url)
    delivery_id = send_update(connector)
    started = fake_clock.now
    cad.run_dispatcher()
    for _ in range(MAX_ATTEMPTS - 1):
        wait_for_next_attempt(fake_clock, delivery_id)
        attempt_now(cad, delivery_id)
    delivery = store.get_delivery(TENANT, delivery_id)
    assert delivery.status is DeliveryStatus.FAILED
    assert delivery.attempt_count == MAX_ATTEMPTS == 12
    hours = (fake_clock.now - started).total_seconds() / 3600
    assert 18 <= hours <= 30  # about a day
    dead, _ = store.list_dead(TENANT, connector.connector.connector_id, 10)
    assert [d.delivery_id for d in dead] == [delivery_id]


@pytest.mark.spec("events-retry-keeps-id-and-body")
def test_recover_since_resends_dead_deliveries_with_the_same_id_and_body(
    cad: CadFunctions, receiver: Receiver, fake_clock: Clock
) -> None:
    connector, connector_id = connector_to_a_gone_receiver(receiver)
    delivery_id = send_update(connector)
    cad.run_dispatcher()
    # The CAD fixed its endpoint; the operator re-enables the connector and recovers.
    receiver.default = Answer(200)
    update_connector(
        TENANT, connector_id, ConnectorChanges(status=ConnectorStatus.ACTIVE), now=fake_clock.now
    )
    dispatcher.forget_connectors()
    recovered = recover(TENANT, connector_id, fake_clock.now.replace(hour=0), now=fake_clock.now)
    assert recovered == [delivery_id]
    cad.run_dispatcher()
    first, again = receiver.requests
    assert again.headers["X-SVC-Delivery-Id"] == first.headers["X-SVC-Delivery-Id"]
    assert again.body == first.body
    assert store.get_delivery(TENANT, delivery_id).status is DeliveryStatus.DELIVERED
    assert store.list_dead(TENANT, connector_id, 10)[0] == []


@pytest.mark.spec("events-retry-keeps-id-and-body")
def test_replay_of_a_delivered_delivery_keeps_its_id_and_body(
    cad: CadFunctions, receiver: Receiver, fake_clock: Clock
) -> None:
    connector = add_connector(receiver.url)
    delivery_id = send_update(connector)
    cad.run_dispatcher()
    fake_clock.advance(3600)
    replay(TENANT, delivery_id, fake_clock.now)
    cad.run_dispatcher()
    first, again = receiver.requests
    assert again.headers["X-SVC-Delivery-Id"] == delivery_id
    assert again.body == first.body
    assert verify(connector, again.headers, again.body) > verify(
        connector, first.headers, first.body
    )
    assert store.get_delivery(TENANT, delivery_id).attempt_count == 2


def test_standard_webhooks_profile_verifies_with_the_public_library(
    cad: CadFunctions, receiver: Receiver
) -> None:
    connector = add_connector(receiver.url, profile=SigningProfile.STANDARD_WEBHOOKS)
    assert connector.signing_secret.startswith("whsec_")
    delivery_id = send_update(connector)
    cad.run_dispatcher()
    (request,) = receiver.requests
    assert request.headers["webhook-id"] == delivery_id
    payload = Webhook(connector.signing_secret).verify(request.body, request.headers)
    assert payload["type"] == "connector.test"
    assert "X-SVC-Signature" not in request.headers


@pytest.mark.spec("webhook-profile-rule-6", "versioning-rule-4")
def test_raw_body_profile_signs_the_body_only_and_fails_a_baseline_check(
    cad: CadFunctions, receiver: Receiver
) -> None:
    connector = add_connector(receiver.url, profile=SigningProfile.RAW_BODY_NO_TIMESTAMP)
    send_update(connector)
    cad.run_dispatcher()
    (request,) = receiver.requests
    assert "X-SVC-Timestamp" not in request.headers
    assert verify_raw_body(connector.signing_secret, request.headers, request.body)
    with pytest.raises(VerificationError):
        verify_delivery(connector.signing_secret, request.headers, request.body)


@pytest.mark.spec("webhook-profile-rule-6", "versioning-rule-4")
def test_an_exception_profile_does_not_weaken_other_connectors(
    cad: CadFunctions, receiver: Receiver
) -> None:
    add_connector(receiver.url, profile=SigningProfile.RAW_BODY_NO_TIMESTAMP)
    baseline = add_connector(receiver.url)
    send_update(baseline)
    cad.run_dispatcher()
    (request,) = receiver.requests
    assert "X-SVC-Timestamp" in request.headers
    verify(baseline, request.headers, request.body)


def test_a_duplicate_message_never_sends_twice(cad: CadFunctions, receiver: Receiver) -> None:
    delivery_id = send_update(add_connector(receiver.url))
    (message,) = drain("WebhookQueue")
    cad.dispatch([message, message])
    assert len(receiver.requests) == 1
    assert store.get_delivery(TENANT, delivery_id).attempt_count == 1


def test_a_message_for_an_attempt_already_made_is_dropped(
    cad_aws: None, receiver: Receiver
) -> None:
    delivery_id = send_update(add_connector(receiver.url))
    dispatch(DispatchMessage.of(TENANT, delivery_id, 0))
    stale = dispatch(DispatchMessage.of(TENANT, delivery_id, 0))
    assert stale is DispatchResult.STALE
    assert len(receiver.requests) == 1


def test_long_waits_live_in_dynamodb_and_the_scheduler_enqueues_them_when_due(
    cad_aws: None, receiver: Receiver, fake_clock: Clock
) -> None:
    receiver.default = Answer(500)
    delivery_id = send_update(add_connector(receiver.url))
    drain("WebhookQueue")
    # Attempts 1-6 (waits of 5 s .. 15 min ride on SQS delays)
    for _ in range(6):
        dispatch(
            DispatchMessage.of(
                TENANT,
                delivery_id,
                store.get_delivery(TENANT, delivery_id).attempt_count,
            ),
        )
        if _ < 5:
            wait_for_next_attempt(fake_clock, delivery_id)
    # The next wait is 30 min: more than SQS can delay, so no message carries it.
    drain("WebhookQueue")
    before = delayed("WebhookQueue")
    delivery = store.get_delivery(TENANT, delivery_id)
    assert delivery.next_attempt_at is not None
    assert (delivery.next_attempt_at - fake_clock.now).total_seconds() > 900
    assert enqueue_due(fake_clock.now) == 0
    # When it is due, the scheduler enqueues it for that attempt
    fake_clock.now = delivery.next_attempt_at
    assert enqueue_due(fake_clock.now) == 1
    # (The earlier retries' messages, delayed in real seconds, may show up meanwhile:
    # the scheduler's own message is the one without a connector.)
    scheduled = [m for m in drain("WebhookQueue") if "connectorId" not in m]
    assert scheduled == [{"tenantId": TENANT, "deliveryId": delivery_id, "attemptCount": 6}]
    assert delayed("WebhookQueue") <= before


def test_a_message_arriving_early_goes_back_with_the_remaining_delay(
    cad_aws: None, receiver: Receiver
) -> None:
    receiver.default = Answer(500)
    delivery_id = send_update(add_connector(receiver.url))
    drain("WebhookQueue")
    dispatch(DispatchMessage.of(TENANT, delivery_id, 0))
    early = dispatch(DispatchMessage.of(TENANT, delivery_id, 1))
    assert early is DispatchResult.REQUEUED
    assert len(receiver.requests) == 1


def test_no_attempt_record_or_item_holds_the_secret_or_the_bearer_credential(
    cad: CadFunctions, receiver: Receiver
) -> None:
    receiver.default = Answer(500, body=b"nope")
    connector = add_connector(receiver.url)
    send_update(connector)
    cad.run_dispatcher()
    everything = json.dumps(table_items(), default=str)
    secret = connector.signing_secret
    raw = secret.removeprefix("psapsec_")
    assert secret not in everything
    assert raw not in everything
    assert base64.b64encode(base64.urlsafe_b64decode(raw + "=")).decode() not in everything
    assert BEARER not in everything


def test_a_local_dev_connector_is_refused_where_local_dev_is_not_allowed(
    cad: CadFunctions, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    delivery_id = send_update(add_connector(receiver.url))
    monkeypatch.setenv("WEBHOOK_LOCAL_DEV", "false")
    cad.run_dispatcher()
    assert receiver.requests == []
    (attempt,) = store.list_attempts(TENANT, delivery_id)
    assert attempt.error_class is ErrorClass.BLOCKED


def test_a_certificate_that_does_not_verify_is_a_tls_error(
    cad: CadFunctions, tmp_path: Any
) -> None:
    import datetime as dt
    import socket
    import ssl
    import threading

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    # Given an https endpoint on loopback with a self-signed certificate
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    (tmp_path / "cert.pem").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve_one() -> None:
        connection, _ = listener.accept()
        try:
            context.wrap_socket(connection, server_side=True).close()
        except (ssl.SSLError, OSError):
            connection.close()

    server = threading.Thread(target=serve_one, daemon=True)
    server.start()
    # When a delivery goes there
    delivery_id = send_update(add_connector(f"https://127.0.0.1:{port}/hook"))
    cad.run_dispatcher()
    server.join(timeout=5)
    listener.close()
    # Then the attempt failed as tls, and is retried
    (attempt,) = store.list_attempts(TENANT, delivery_id)
    assert attempt.error_class is ErrorClass.TLS
    assert store.get_delivery(TENANT, delivery_id).status is DeliveryStatus.PENDING


# ---------------------------------------------------------------- secret rotation


def spec_receiver_accepts(secrets: list[str], headers: dict[str, str], body: bytes) -> bool:
    """A receiver written from the specification alone, holding several secrets: the header
    is the digest, compared in constant time with the digest of each secret."""
    message = f"{headers['X-SVC-Timestamp']}.{headers['X-SVC-Delivery-Id']}.".encode() + body
    return any(
        hmac.compare_digest(
            hmac.new(secret.encode(), message, hashlib.sha256).hexdigest(),
            headers["X-SVC-Signature"],
        )
        for secret in secrets
    )


@pytest.mark.spec("webhook-profile-rule-3", "webhook-profile-rule-5")
def test_during_a_rotation_a_spec_receiver_holding_both_secrets_accepts_every_delivery(
    cad: CadFunctions, receiver: Receiver, fake_clock: Clock
) -> None:
    # Given a connector whose secret was just rotated, with a 24 h overlap
    connector = add_connector(receiver.url)
    connector_id = connector.connector.connector_id
    rotated = rotate_secret(
        TENANT, connector_id, RotationSchedule(timedelta(hours=24)), now=fake_clock.now
    )
    both = [rotated.signing_secret, connector.signing_secret]
    # When deliveries go out during the overlap (first attempts and retries)
    receiver.script = [Answer(500)]
    first = send_update(connector, "seed-a")
    second = send_update(connector, "seed-b")
    cad.run_dispatcher()
    fake_clock.advance(3600)
    for delivery_id in (first, second):
        if store.get_delivery(TENANT, delivery_id).status is DeliveryStatus.PENDING:
            wait_for_next_attempt(fake_clock, delivery_id)
            attempt_now(cad, delivery_id)
    # Then each carries exactly one digest, which the receiver holding both secrets accepts
    assert len(receiver.requests) == 3
    for request in receiver.requests:
        assert re.fullmatch(r"[0-9a-f]{64}", request.headers["X-SVC-Signature"])
        assert spec_receiver_accepts(both, request.headers, request.body)
        verify_delivery(
            both, request.headers, request.body, now=int(request.headers["X-SVC-Timestamp"])
        )
    # ... made with the new secret only
    assert not any(
        spec_receiver_accepts([connector.signing_secret], r.headers, r.body)
        for r in receiver.requests
    )


def test_standard_webhooks_profile_verifies_with_the_public_library_during_a_rotation(
    cad: CadFunctions, receiver: Receiver, fake_clock: Clock
) -> None:
    connector = add_connector(receiver.url, profile=SigningProfile.STANDARD_WEBHOOKS)
    connector_id = connector.connector.connector_id
    rotated = rotate_secret(
        TENANT, connector_id, RotationSchedule(timedelta(hours=24)), now=fake_clock.now
    )
    send_update(connector)
    cad.run_dispatcher()
    (request,) = receiver.requests
    # One v1 entry per signing secret, as that standard defines; either secret verifies
    assert len(request.headers["webhook-signature"].split(" ")) == 2
    for secret in (connector.signing_secret, rotated.signing_secret):
        assert Webhook(secret).verify(request.body, request.headers)["type"] == "connector.test"
