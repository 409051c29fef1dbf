"""Signing profiles, the receiver kit and its JSON test vectors (spec: "Service to CAD",
rules 2-6; the 300-second timestamp tolerance of "Errors" and "Limits")."""

import hashlib
import hmac
import json
import re
from pathlib import Path
from typing import Any

import pytest
from standardwebhooks import Webhook

from psap.webhooks.signing import (
    SignedMessage,
    SigningProfile,
    presented_secret,
    signature_headers,
)
from receiver_kit.psap_webhooks import (
    Deduplicator,
    VerificationError,
    verify_delivery,
    verify_raw_body,
)
from tools import webhook_vectors

VECTORS_FILE = Path(__file__).resolve().parents[2] / "receiver_kit" / "test_vectors.json"
VECTORS: list[dict[str, Any]] = json.loads(VECTORS_FILE.read_text())["vectors"]
RAW = bytes(range(32))
BODY = b'{"type":"incident.accepted","data":{"note":"Caf\xc3\xa9"}}'


def kit_verdict(vector: dict[str, Any]) -> str:
    body = vector["body"].encode("utf-8")
    try:
        if vector["profile"] == "raw-body-no-timestamp":
            verify_raw_body(vector["secrets"], vector["headers"], body)
        else:
            verify_delivery(vector["secrets"], vector["headers"], body, now=vector["now"])
    except VerificationError:
        return "reject"
    return "accept"


KIT_VECTORS = [v for v in VECTORS if v["profile"] != "standard-webhooks"]


@pytest.mark.parametrize("vector", KIT_VECTORS, ids=[v["name"] for v in KIT_VECTORS])
@pytest.mark.spec("webhook-profile-rule-3", "webhook-profile-rule-4")
def test_the_receiver_kit_gives_every_vector_its_expected_verdict(vector: dict[str, Any]) -> None:
    assert kit_verdict(vector) == vector["expected"]


@pytest.mark.spec("webhook-profile-rule-3")
def test_the_committed_vectors_are_what_the_service_signer_produces() -> None:
    # Regenerate with `python -m tools.webhook_vectors --write` after a signing change.
    assert VECTORS_FILE.read_text(encoding="utf-8") == webhook_vectors.render()


def test_vectors_cover_accept_and_reject_for_both_profiles() -> None:
    seen = {(v["profile"], v["expected"]) for v in VECTORS}
    assert seen == {
        ("baseline", "accept"),
        ("baseline", "reject"),
        ("raw-body-no-timestamp", "accept"),
        ("raw-body-no-timestamp", "reject"),
        ("standard-webhooks", "accept"),
        ("standard-webhooks", "reject"),
    }


@pytest.mark.spec("webhook-profile-rule-2", "webhook-profile-rule-3", "events-delivery-headers")
def test_baseline_signature_is_lowercase_hex_hmac_sha256_of_timestamp_id_and_raw_body() -> None:
    headers = signature_headers(
        SigningProfile.BASELINE,
        [RAW],
        SignedMessage("dlv-1", timestamp=1700000000, body=BODY, event_type="x"),
    )
    key = presented_secret(RAW, SigningProfile.BASELINE).encode()
    expected = hmac.new(key, b"1700000000.dlv-1." + BODY, hashlib.sha256).hexdigest()
    assert headers["X-SVC-Signature"] == expected
    assert headers["X-SVC-Timestamp"] == "1700000000"
    assert headers["X-SVC-Delivery-Id"] == "dlv-1"


@pytest.mark.spec("webhook-profile-rule-4", "limits-timestamp-tolerance", "webhook-profile-rule-2")
def test_a_timestamp_more_than_300_s_from_now_is_rejected_either_way() -> None:
    secret = presented_secret(RAW, SigningProfile.BASELINE)
    for offset, verdict in [(-300, True), (300, True), (-301, False), (301, False)]:
        headers = signature_headers(
            SigningProfile.BASELINE,
            [RAW],
            SignedMessage("d", timestamp=1000 + offset, body=BODY, event_type="x"),
        )
        try:
            verify_delivery(secret, headers, BODY, now=1000)
            accepted = True
        except VerificationError:
            accepted = False
        assert accepted is verdict, offset


@pytest.mark.spec("webhook-profile-rule-6")
def test_profile_isolation_a_no_timestamp_request_fails_on_a_baseline_receiver() -> None:
    secret = presented_secret(RAW, SigningProfile.BASELINE)
    raw_headers = signature_headers(
        SigningProfile.RAW_BODY_NO_TIMESTAMP,
        [RAW],
        SignedMessage("dlv-1", timestamp=1000, body=BODY, event_type="x"),
    )
    assert "X-SVC-Timestamp" not in raw_headers
    with pytest.raises(VerificationError):
        verify_delivery(secret, raw_headers, BODY, now=1000)
    # Adding a timestamp header does not help: the signature does not cover it.
    with pytest.raises(VerificationError):
        verify_delivery(secret, {**raw_headers, "X-SVC-Timestamp": "1000"}, BODY, now=1000)


def test_standard_webhooks_profile_verifies_with_the_public_library() -> None:
    import time

    now = int(time.time())
    secret = presented_secret(RAW, SigningProfile.STANDARD_WEBHOOKS)
    headers = signature_headers(
        SigningProfile.STANDARD_WEBHOOKS,
        [RAW],
        SignedMessage("dlv-9", timestamp=now, body=BODY, event_type="x"),
    )
    assert headers["webhook-signature"].startswith("v1,")
    assert Webhook(secret).verify(BODY, headers) == json.loads(BODY)


def test_standard_webhooks_rotation_sends_one_signature_per_active_secret() -> None:
    import time

    now = int(time.time())
    old = bytes(range(50, 82))
    headers = signature_headers(
        SigningProfile.STANDARD_WEBHOOKS,
        [RAW, old],
        SignedMessage("dlv-9", timestamp=now, body=BODY, event_type="x"),
    )
    assert len(headers["webhook-signature"].split(" ")) == 2
    for secret in (RAW, old):
        Webhook(presented_secret(secret, SigningProfile.STANDARD_WEBHOOKS)).verify(BODY, headers)


@pytest.mark.spec("webhook-profile-rule-4")
def test_the_kit_refuses_parsed_text_instead_of_raw_bytes() -> None:
    secret = presented_secret(RAW, SigningProfile.BASELINE)
    headers = signature_headers(
        SigningProfile.BASELINE,
        [RAW],
        SignedMessage("d", timestamp=1000, body=BODY, event_type="x"),
    )
    with pytest.raises(TypeError):
        verify_delivery(secret, headers, BODY.decode(), now=1000)  # type: ignore[arg-type]


@pytest.mark.spec("events-duplicates-by-delivery-id")
def test_the_deduplicator_reports_a_repeated_delivery_id_as_a_duplicate() -> None:
    seen = Deduplicator(window_seconds=60)
    assert seen.first_time("dlv-1", now=0)
    assert not seen.first_time("dlv-1", now=30)
    assert seen.first_time("dlv-2", now=30)
    # Forgotten after the window (the service stops retrying long before 48 h)
    assert seen.first_time("dlv-1", now=200)


# ---------------------------------------------------------------- rotation (one digest per header)

NEW = bytes(range(32))
OLD = bytes(range(100, 132))
HEX_DIGEST = re.compile(r"^[0-9a-f]{64}$")


def spec_receiver_accepts(secrets: list[bytes], headers: dict[str, str], body: bytes) -> bool:
    """A receiver written from the specification alone: X-SVC-Signature is the digest; it
    holds both secrets during a rotation and accepts when either computes that digest."""
    message = f"{headers['X-SVC-Timestamp']}.{headers['X-SVC-Delivery-Id']}.".encode() + body
    header = headers["X-SVC-Signature"]
    return any(
        hmac.compare_digest(
            hmac.new(presented_secret(raw, SigningProfile.BASELINE).encode(), message, "sha256")
            .hexdigest()
            .encode(),
            header.encode(),
        )
        for raw in secrets
    )


def test_baseline_signature_during_a_rotation_is_one_digest_of_the_newest_secret() -> None:
    # Given two secrets signing (newest first), as during a rotation's overlap
    headers = signature_headers(
        SigningProfile.BASELINE,
        [NEW, OLD],
        SignedMessage("dlv-1", timestamp=1000, body=BODY, event_type="x"),
    )
    # Then the header is exactly one lowercase hex HMAC-SHA-256, made with the new secret
    assert HEX_DIGEST.match(headers["X-SVC-Signature"])
    assert spec_receiver_accepts([NEW], headers, BODY)
    assert not spec_receiver_accepts([OLD], headers, BODY)
    # And a spec-following receiver holding both secrets accepts it
    assert spec_receiver_accepts([OLD, NEW], headers, BODY)


def test_raw_body_signature_during_a_rotation_is_one_digest_too() -> None:
    headers = signature_headers(
        SigningProfile.RAW_BODY_NO_TIMESTAMP,
        [NEW, OLD],
        SignedMessage("dlv-1", timestamp=1000, body=BODY, event_type="x"),
    )
    assert HEX_DIGEST.match(headers["X-SVC-Signature"])


def test_the_kit_takes_a_list_of_secrets_and_accepts_a_digest_of_either() -> None:
    both = [presented_secret(raw, SigningProfile.BASELINE) for raw in (NEW, OLD)]
    for signer in (NEW, OLD):
        headers = signature_headers(
            SigningProfile.BASELINE,
            [signer],
            SignedMessage("d", timestamp=1000, body=BODY, event_type="x"),
        )
        assert verify_delivery(both, headers, BODY, now=1000).delivery_id == "d"
    only_old = signature_headers(
        SigningProfile.BASELINE,
        [OLD],
        SignedMessage("d", timestamp=1000, body=BODY, event_type="x"),
    )
    with pytest.raises(VerificationError):
        verify_delivery(both[:1], only_old, BODY, now=1000)


def test_the_kit_refuses_a_header_that_is_not_exactly_one_digest() -> None:
    secret = presented_secret(NEW, SigningProfile.BASELINE)
    headers = signature_headers(
        SigningProfile.BASELINE,
        [NEW],
        SignedMessage("d", timestamp=1000, body=BODY, event_type="x"),
    )
    digest = headers["X-SVC-Signature"]
    for value in (f"{digest},{digest}", f"{digest} {digest}", digest.upper(), "v1=" + digest):
        with pytest.raises(VerificationError):
            verify_delivery(secret, {**headers, "X-SVC-Signature": value}, BODY, now=1000)


def test_no_secret_is_a_programming_error_not_an_acceptance() -> None:
    headers = signature_headers(
        SigningProfile.BASELINE,
        [NEW],
        SignedMessage("d", timestamp=1000, body=BODY, event_type="x"),
    )
    with pytest.raises(ValueError):
        verify_delivery([], headers, BODY, now=1000)


def test_rotation_vectors_cover_both_secrets_and_the_receiver_that_kept_only_the_old() -> None:
    rotation = [v for v in VECTORS if "rotation" in v["name"]]
    verdicts = {(len(v["secrets"]), v["expected"]) for v in rotation}
    assert (2, "accept") in verdicts
    assert (1, "reject") in verdicts
    for vector in rotation:
        if vector["profile"] == "baseline" and vector["expected"] == "accept":
            assert HEX_DIGEST.match(vector["headers"]["X-SVC-Signature"])


def test_standard_webhooks_rotation_vectors_verify_with_the_public_library(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import datetime as dt

    import standardwebhooks.webhooks as library

    standard = [v for v in VECTORS if v["profile"] == "standard-webhooks"]
    assert standard
    for vector in standard:
        # The library checks the timestamp against its own clock: set it to the vector's.
        frozen = dt.datetime.fromtimestamp(vector["now"], tz=dt.UTC)
        clock = type("Frozen", (dt.datetime,), {"now": staticmethod(lambda tz, at=frozen: at)})
        monkeypatch.setattr(library, "datetime", clock)
        verdicts = []
        for secret in vector["secrets"]:
            try:
                Webhook(secret).verify(vector["body"].encode(), vector["headers"])
                verdicts.append("accept")
            except Exception:
                verdicts.append("reject")
        assert ("accept" if "accept" in verdicts else "reject") == vector["expected"], vector[
            "name"
        ]
