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
from dataclasses import dataclass
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


def signing_key(raw: bytes, profile: SigningProfile) -> bytes:
    """The HMAC key: the decoded bytes for standard-webhooks, the shown string otherwise."""
    if profile is SigningProfile.STANDARD_WEBHOOKS:
        return raw
    return presented_secret(raw, profile).encode("utf-8")


@lru_cache(maxsize=_KEYS_KEPT)
def _keyed_mac(raw: bytes, profile: SigningProfile) -> hmac.HMAC:
    """The HMAC state after the secret's key, built once per secret and copied for each
    delivery: building it means encoding the key, fetching SHA-256 from OpenSSL and hashing
    two key blocks, which cost more than the rest of signing (measured between real POSTs:
    12 us of 20 for the HMAC object alone)."""
    return hmac.new(signing_key(raw, profile), digestmod=hashlib.sha256)


def _mac(raw: bytes, profile: SigningProfile, *parts: bytes) -> hmac.HMAC:
    mac = _keyed_mac(raw, profile).copy()
    for part in parts:
        mac.update(part)
    return mac


@dataclass(frozen=True)
class SignedMessage:
    """What one attempt's signature covers: the delivery, the attempt's time and the exact
    body bytes (the event type travels beside them, unsigned)."""

    delivery_id: str
    timestamp: int  # unix seconds
    body: bytes
    event_type: str


def _standard_signature(raw: bytes, message: SignedMessage) -> str:
    signed = f"{message.delivery_id}.{message.timestamp}.".encode()
    digest = _mac(raw, SigningProfile.STANDARD_WEBHOOKS, signed, message.body).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def signature_headers(
    profile: SigningProfile, raw_secrets: Sequence[bytes], message: SignedMessage
) -> dict[str, str]:
    """The headers that authenticate one attempt (not Authorization, not Content-Type).

    `raw_secrets` are the secrets that sign now, newest first; there is at least one."""
    delivery_id, timestamp, body = message.delivery_id, message.timestamp, message.body
    event_type = message.event_type
    if not raw_secrets:
        raise ValueError("a delivery cannot be signed without a signing secret")
    if profile is SigningProfile.STANDARD_WEBHOOKS:
        return {
            "webhook-id": delivery_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": " ".join(_standard_signature(raw, message) for raw in raw_secrets),
            EVENT_TYPE_HEADER: event_type,
        }
    # One digest per header (the spec's form), whatever the number of secrets signing.
    newest = raw_secrets[0]
    if profile is SigningProfile.RAW_BODY_NO_TIMESTAMP:
        return {
            DELIVERY_ID_HEADER: delivery_id,
            SIGNATURE_HEADER: _mac(newest, profile, body).hexdigest(),
            EVENT_TYPE_HEADER: event_type,
        }
    signed = f"{timestamp}.{delivery_id}.".encode()
    return {
        DELIVERY_ID_HEADER: delivery_id,
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: _mac(newest, profile, signed, body).hexdigest(),
        EVENT_TYPE_HEADER: event_type,
    }
