"""Verify webhook deliveries from the PSAP service: a single file, standard library only.

Copy this file into your CAD's code base (Python 3.10+). For the baseline profile:

    from psap_webhooks import Deduplicator, VerificationError, verify_delivery

    SIGNING_SECRETS = ["psapsec_..."]           # during a rotation: [new, old]
    seen = Deduplicator()                       # or your database, keyed by delivery id

    def handle(request):                        # whatever your web framework gives you
        body = request.get_data()               # the RAW bytes: before any JSON parsing
        try:
            delivery = verify_delivery(SIGNING_SECRETS, request.headers, body)
        except VerificationError as error:
            return 401, error.reason            # never process an unverified body
        if not seen.first_time(delivery.delivery_id):
            return 200, "duplicate"             # already handled: acknowledge, do nothing
        process(json.loads(delivery.body))      # parse only after verifying
        return 200, "ok"

What verify_delivery checks (the service's baseline profile):
- `X-SVC-Signature` is exactly one lowercase hex HMAC-SHA-256 (64 characters), keyed with
  the signing secret's UTF-8 bytes exactly as you were given it, of
  `<X-SVC-Timestamp>.<X-SVC-Delivery-Id>.<raw body>`. Comparison is constant-time.
- Secret rotation: pass every secret you accept (a list). During a rotation's overlap hold
  the new and the old secret; a digest made with either is accepted. The service signs with
  one of them only (the new one from the rotation's activation time), never with both.
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
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import NamedTuple, Union

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
_DIGEST = re.compile(r"[0-9a-f]{64}")
_MAX_SECRETS = 8

# One secret, or every secret accepted during a rotation (e.g. [new, old]).
Secrets = Union[str, bytes, Sequence[Union[str, bytes]]]  # noqa: UP007 - Python 3.10 callers


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


def _keys(secrets: Secrets) -> list[bytes]:
    listed = [secrets] if isinstance(secrets, (str, bytes, bytearray)) else list(secrets)
    if not listed:
        raise ValueError("no signing secret given")
    if len(listed) > _MAX_SECRETS:
        raise ValueError(f"more than {_MAX_SECRETS} signing secrets given")
    keys = [item.encode("utf-8") if isinstance(item, str) else bytes(item) for item in listed]
    if not all(keys):
        raise ValueError("a signing secret is empty")
    return keys


def _matches(keys: list[bytes], message: bytes, header_value: str) -> bool:
    # The header is one digest (the spec's form); anything else is refused before any HMAC.
    if not _DIGEST.fullmatch(header_value):
        raise VerificationError("the signature header is not one lowercase hex digest")
    presented = header_value.encode("ascii")
    matched = False
    for key in keys:
        expected = hmac.new(key, message, hashlib.sha256).hexdigest().encode("ascii")
        # Every secret is tried, so the time taken does not tell which one matched.
        matched |= hmac.compare_digest(expected, presented)
    return matched


# The kit's published signature: receivers copy this file and call it positionally, so the
# argument list stays as released (its test vectors pin it too).
def verify_delivery(  # noqa: PLR0917
    secrets: Secrets,
    headers: Mapping[str, str],
    body: bytes,
    now: float | None = None,
    tolerance: int = TOLERANCE_SECONDS,
) -> VerifiedDelivery:
    """Verifies a baseline-profile delivery; raises VerificationError to reject it.

    `secrets` is the signing secret, or a list of the secrets you accept (during a rotation:
    the new and the old). `body` must be the raw request body bytes, exactly as received."""
    keys = _keys(secrets)
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
    if not _matches(keys, message, signature):
        raise VerificationError("the signature does not match")
    return VerifiedDelivery(delivery_id, timestamp, bytes(body))


def verify_raw_body(secrets: Secrets, headers: Mapping[str, str], body: bytes) -> VerifiedDelivery:
    """Verifies a delivery of the raw-body-no-timestamp exception profile (no replay window:
    deduplicate by delivery id)."""
    if not isinstance(body, (bytes, bytearray)):
        raise TypeError("pass the raw body bytes, not parsed or decoded text")
    keys = _keys(secrets)
    delivery_id = _required(headers, DELIVERY_ID_HEADER)
    signature = _required(headers, SIGNATURE_HEADER)
    if not _matches(keys, bytes(body), signature):
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
