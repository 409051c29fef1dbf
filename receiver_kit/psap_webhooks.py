"""Verify webhook deliveries from the PSAP service: a single file, standard library only.

Copy this file into your CAD's code base (Python 3.10+). For the baseline profile:

    from psap_webhooks import Deduplicator, VerificationError, verify_delivery

    seen = Deduplicator()                       # or your database, keyed by delivery id

    def handle(request):                        # whatever your web framework gives you
        body = request.get_data()               # the RAW bytes: before any JSON parsing
        try:
            delivery = verify_delivery(SIGNING_SECRET, request.headers, body)
        except VerificationError as error:
            return 401, error.reason            # never process an unverified body
        if not seen.first_time(delivery.delivery_id):
            return 200, "duplicate"             # already handled: acknowledge, do nothing
        process(json.loads(delivery.body))      # parse only after verifying
        return 200, "ok"

What verify_delivery checks (the service's baseline profile):
- `X-SVC-Signature` is the lowercase hex HMAC-SHA-256, keyed with the signing secret's UTF-8
  bytes exactly as you were given it, of `<X-SVC-Timestamp>.<X-SVC-Delivery-Id>.<raw body>`;
  during a secret rotation the header holds several digests separated by commas, and one
  matching digest is enough. Comparison is constant-time.
- `X-SVC-Timestamp` (unix seconds) is within 300 seconds of your clock, either way.
Also check `Authorization: Bearer <the credential you issued to the service>` in your usual
way; this module does not see it. A retry of the same delivery has the same delivery id and
the same body with a new timestamp and signature: deduplicate by `X-SVC-Delivery-Id`.

For a connector on the `raw-body-no-timestamp` exception profile use verify_raw_body: the
signature covers the body only, so a captured request can be replayed later; deduplicating by
delivery id is then your only replay defence.

Test vectors for any language: test_vectors.json beside this file.
"""

import hashlib
import hmac
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import NamedTuple

__all__ = [
    "TOLERANCE_SECONDS",
    "Deduplicator",
    "VerificationError",
    "VerifiedDelivery",
    "verify_delivery",
    "verify_raw_body",
]

TOLERANCE_SECONDS = 300
DELIVERY_ID_HEADER = "X-SVC-Delivery-Id"
TIMESTAMP_HEADER = "X-SVC-Timestamp"
SIGNATURE_HEADER = "X-SVC-Signature"
_MAX_SIGNATURES = 8


class VerificationError(Exception):
    """The delivery must be rejected; `reason` says why (safe to log, never secret)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class VerifiedDelivery(NamedTuple):
    delivery_id: str
    timestamp: int | None  # None on the raw-body-no-timestamp profile
    body: bytes


def _header(headers: Mapping[str, str], name: str) -> str | None:
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            return value
    return None


def _required(headers: Mapping[str, str], name: str) -> str:
    value = _header(headers, name)
    if value is None or not value.strip():
        raise VerificationError(f"missing header {name}")
    return value.strip()


def _key(secret: str | bytes) -> bytes:
    key = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    if not key:
        raise ValueError("the signing secret is empty")
    return key


def _matches(key: bytes, message: bytes, header_value: str) -> bool:
    expected = hmac.new(key, message, hashlib.sha256).hexdigest().encode("ascii")
    candidates = [part.strip() for part in header_value.split(",")][:_MAX_SIGNATURES]
    matched = False
    for candidate in candidates:
        # Every candidate is compared, so the time taken does not tell which one matched.
        matched |= hmac.compare_digest(expected, candidate.encode("ascii", "replace"))
    return matched


def verify_delivery(
    secret: str | bytes,
    headers: Mapping[str, str],
    body: bytes,
    now: float | None = None,
    tolerance: int = TOLERANCE_SECONDS,
) -> VerifiedDelivery:
    """Verifies a baseline-profile delivery; raises VerificationError to reject it.

    `body` must be the raw request body bytes, exactly as received."""
    if not isinstance(body, (bytes, bytearray)):
        raise TypeError("pass the raw body bytes, not parsed or decoded text")
    delivery_id = _required(headers, DELIVERY_ID_HEADER)
    stamp = _required(headers, TIMESTAMP_HEADER)
    signature = _required(headers, SIGNATURE_HEADER)
    if not stamp.isdigit() or len(stamp) > 12:
        raise VerificationError("the timestamp is not unix seconds")
    timestamp = int(stamp)
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise VerificationError(f"the timestamp is more than {tolerance} seconds from now")
    message = f"{stamp}.{delivery_id}.".encode() + bytes(body)
    if not _matches(_key(secret), message, signature):
        raise VerificationError("the signature does not match")
    return VerifiedDelivery(delivery_id, timestamp, bytes(body))


def verify_raw_body(
    secret: str | bytes, headers: Mapping[str, str], body: bytes
) -> VerifiedDelivery:
    """Verifies a delivery of the raw-body-no-timestamp exception profile (no replay window:
    deduplicate by delivery id)."""
    if not isinstance(body, (bytes, bytearray)):
        raise TypeError("pass the raw body bytes, not parsed or decoded text")
    delivery_id = _required(headers, DELIVERY_ID_HEADER)
    signature = _required(headers, SIGNATURE_HEADER)
    if not _matches(_key(secret), bytes(body), signature):
        raise VerificationError("the signature does not match")
    return VerifiedDelivery(delivery_id, None, bytes(body))


class Deduplicator:
    """Remembers delivery ids seen in the last `window_seconds` (in memory, thread-safe).

    Retries of one delivery span about 24 hours; keep ids at least that long. Several
    receiver processes need a shared store instead (a unique key in your database)."""

    def __init__(self, window_seconds: int = 48 * 3600, max_ids: int = 1_000_000) -> None:
        self.window_seconds = window_seconds
        self.max_ids = max_ids
        self._seen: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def first_time(self, delivery_id: str, now: float | None = None) -> bool:
        """True the first time an id is offered; False for a duplicate."""
        current = time.time() if now is None else now
        with self._lock:
            while self._seen:
                oldest_id, seen_at = next(iter(self._seen.items()))
                if current - seen_at <= self.window_seconds and len(self._seen) < self.max_ids:
                    break
                del self._seen[oldest_id]
            if delivery_id in self._seen:
                return False
            self._seen[delivery_id] = current
            return True
