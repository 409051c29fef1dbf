"""How a delivery is signed, per connector profile.

- baseline (the spec): `X-SVC-Signature` = lowercase hex HMAC-SHA-256 over
  `<X-SVC-Timestamp>.<X-SVC-Delivery-Id>.<raw body>`, the key being the signing secret's
  UTF-8 bytes exactly as shown to the CAD.
- standard-webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>` over
  `<id>.<timestamp>.<body>`, keyed with the base64-decoded `whsec_` secret, as the public
  standardwebhooks libraries verify it.
- raw-body-no-timestamp: the spec's documented exception (Authentication, rule 6) for a CAD
  that cannot check a timestamp: `X-SVC-Signature` over the raw body alone. It cannot stop a
  captured request from being replayed later; the receiver must dedupe by
  `X-SVC-Delivery-Id`. It is a per-connector setting and changes nothing for other connectors.

During a secret rotation, `X-SVC-Signature` stays what the spec defines: one digest, made
with the newest secret that signs; receivers hold both secrets for the overlap and accept
either (docs/webhooks.md, "Rotating a signing secret"). The standard-webhooks profile keeps
that standard's own form: one space-separated `v1,` entry per secret that signs.
"""

import base64
import hashlib
import hmac
from collections.abc import Sequence
from enum import StrEnum
from functools import lru_cache


class SigningProfile(StrEnum):
    BASELINE = "baseline"
    STANDARD_WEBHOOKS = "standard-webhooks"
    RAW_BODY_NO_TIMESTAMP = "raw-body-no-timestamp"


BASELINE_SECRET_PREFIX = "psapsec_"  # noqa: S105 - a readable prefix, not a secret
STANDARD_SECRET_PREFIX = "whsec_"  # noqa: S105 - the Standard Webhooks secret prefix

DELIVERY_ID_HEADER = "X-SVC-Delivery-Id"
TIMESTAMP_HEADER = "X-SVC-Timestamp"
SIGNATURE_HEADER = "X-SVC-Signature"
EVENT_TYPE_HEADER = "X-SVC-Event-Type"
# Keys (and keyed HMAC states) kept per warm container: more than the secrets one dispatcher
# signs with; a retired secret's key leaves as newer ones come in.
_KEYS_KEPT = 64


def presented_secret(raw: bytes, profile: SigningProfile) -> str:
    """The secret as shown once to the CAD, in the form its profile's verifiers expect."""
    if profile is SigningProfile.STANDARD_WEBHOOKS:
        return STANDARD_SECRET_PREFIX + base64.b64encode(raw).decode("ascii")
    return BASELINE_SECRET_PREFIX + base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


@lru_cache(maxsize=_KEYS_KEPT)
def signing_key(raw: bytes, profile: SigningProfile) -> bytes:
    """The HMAC key: the decoded bytes for standard-webhooks, the shown string otherwise."""
    if profile is SigningProfile.STANDARD_WEBHOOKS:
        return raw
    return presented_secret(raw, profile).encode("utf-8")


@lru_cache(maxsize=_KEYS_KEPT)
def _keyed_mac(key: bytes) -> hmac.HMAC:
    """The HMAC state after the key, built once per key and copied for each delivery: making
    it means fetching SHA-256 from OpenSSL and hashing two key blocks, which cost more than
    the whole rest of signing (12 us of 20 per delivery, measured between real POSTs)."""
    return hmac.new(key, digestmod=hashlib.sha256)


def _hmac(key: bytes, *parts: bytes) -> bytes:
    mac = _keyed_mac(key).copy()
    for part in parts:
        mac.update(part)
    return mac.digest()


def baseline_digest(key: bytes, timestamp: int, delivery_id: str, body: bytes) -> str:
    return _hmac(key, f"{timestamp}.{delivery_id}.".encode(), body).hex()


def standard_signature(key: bytes, timestamp: int, delivery_id: str, body: bytes) -> str:
    digest = _hmac(key, f"{delivery_id}.{timestamp}.".encode(), body)
    return "v1," + base64.b64encode(digest).decode("ascii")


def raw_body_digest(key: bytes, body: bytes) -> str:
    return _hmac(key, body).hex()


def signature_headers(
    profile: SigningProfile,
    raw_secrets: Sequence[bytes],
    delivery_id: str,
    timestamp: int,
    body: bytes,
    event_type: str,
) -> dict[str, str]:
    """The headers that authenticate one attempt (not Authorization, not Content-Type).

    `raw_secrets` are the secrets that sign now, newest first; there is at least one."""
    if not raw_secrets:
        raise ValueError("a delivery cannot be signed without a signing secret")
    if profile is SigningProfile.STANDARD_WEBHOOKS:
        keys = [signing_key(raw, profile) for raw in raw_secrets]
        return {
            "webhook-id": delivery_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": " ".join(
                standard_signature(key, timestamp, delivery_id, body) for key in keys
            ),
            EVENT_TYPE_HEADER: event_type,
        }
    # One digest per header (the spec's form), whatever the number of secrets signing.
    newest = signing_key(raw_secrets[0], profile)
    if profile is SigningProfile.RAW_BODY_NO_TIMESTAMP:
        return {
            DELIVERY_ID_HEADER: delivery_id,
            SIGNATURE_HEADER: raw_body_digest(newest, body),
            EVENT_TYPE_HEADER: event_type,
        }
    return {
        DELIVERY_ID_HEADER: delivery_id,
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: baseline_digest(newest, timestamp, delivery_id, body),
        EVENT_TYPE_HEADER: event_type,
    }
