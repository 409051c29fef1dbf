"""Writes receiver_kit/test_vectors.json: signed deliveries with the verdict a receiver owes.

The vectors are produced by the service's own signer (psap.webhooks.signing), so the kit,
the service and any CAD's verifier are tested against the same bytes. Deterministic: fixed
secrets and times. A unit test fails when the committed file differs from this output.

    python -m tools.webhook_vectors --write
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from psap.webhooks.signing import (
    SignedMessage,
    SigningProfile,
    presented_secret,
    signature_headers,
)

ROOT = Path(__file__).resolve().parent.parent
VECTORS = ROOT / "receiver_kit" / "test_vectors.json"

NOW = 1_795_401_135  # the receiver's clock in every vector (2026-11-23T02:32:15Z)
SECRET = bytes(range(32))
OLD_SECRET = bytes(range(100, 132))
OTHER_SECRET = bytes(range(200, 232))
DELIVERY_ID = "dlv-5f2b7c0d9e8a41f3b6c2d1e0f9a8b7c6"
BODY = (
    '{"specversion":"1.0","id":"evt-0f1e2d3c4b5a69788796a5b4c3d2e1f0",'
    '"source":"urn:psap:tenant:7","type":"incident.accepted",'
    '"time":"2026-11-23T02:32:14.120Z","subject":"2026-000123",'
    '"datacontenttype":"application/json",'
    '"dataschema":"urn:psap:webhooks:v1:incident.accepted","tenantid":7,'
    '"data":{"receiptId":"rcpt-3c9a","cadEventId":"A-1","cadSource":"urn:cad:riverside",'
    '"cadEventType":"incident.created","cadIncidentNumber":"2026-000123",'
    '"incidentId":1001,"eventId":null,"outcome":"CREATED","note":"Caf\u00e9 \u2014 \u00d1"}}'
)
B = SigningProfile.BASELINE
R = SigningProfile.RAW_BODY_NO_TIMESTAMP
S = SigningProfile.STANDARD_WEBHOOKS


def _signed(
    profile: SigningProfile,
    secrets: list[bytes],
    timestamp: int = NOW - 2,
    *,
    body: str = BODY,
) -> dict[str, str]:
    headers = signature_headers(
        profile,
        secrets,
        SignedMessage(DELIVERY_ID, timestamp=timestamp, body=body.encode(), event_type="x"),
    )
    headers.pop("X-SVC-Event-Type")
    return headers


def _vector(
    name: str,
    profile: SigningProfile,
    headers: dict[str, str],
    *,
    expected: str,
    why: str,
    body: str = BODY,
    secrets: tuple[bytes, ...] = (SECRET,),
) -> dict[str, Any]:
    return {
        "name": name,
        "profile": profile.value,
        "secrets": [presented_secret(secret, profile) for secret in secrets],
        "now": NOW,
        "headers": headers,
        "body": body,
        "expected": expected,
        "why": why,
    }


def rotation_vectors() -> list[dict[str, Any]]:
    """A rotation from OLD_SECRET to SECRET: the receiver holds both during the overlap."""
    new, old = _signed(B, [SECRET, OLD_SECRET]), _signed(B, [OLD_SECRET])
    both = (SECRET, OLD_SECRET)
    standard_both = _signed(S, [SECRET, OLD_SECRET])
    return [
        _vector(
            "rotation: signed with the new secret, receiver holds new and old",
            B,
            new,
            expected="accept",
            why="during the overlap the service signs with the new secret only; it is on the list",
            secrets=both,
        ),
        _vector(
            "rotation: signed with the old secret, receiver holds new and old",
            B,
            old,
            expected="accept",
            why="before the new secret's activation time the old one still signs",
            secrets=both,
        ),
        _vector(
            "rotation: signed with the new secret, receiver kept only the old",
            B,
            new,
            expected="reject",
            why="add the new secret to your list before its activation time",
            secrets=(OLD_SECRET,),
        ),
        _vector(
            "rotation: two digests in one header",
            B,
            {**new, "X-SVC-Signature": new["X-SVC-Signature"] + "," + old["X-SVC-Signature"]},
            expected="reject",
            why="X-SVC-Signature is exactly one digest; the service never joins several",
            secrets=both,
        ),
        _vector(
            "standard-webhooks: valid",
            S,
            _signed(S, [SECRET]),
            expected="accept",
            why="webhook-signature v1,<base64 HMAC of id.timestamp.body>, key = the decoded whsec_",
        ),
        _vector(
            "standard-webhooks rotation: receiver holds the new secret",
            S,
            standard_both,
            expected="accept",
            why="Standard Webhooks carries one space-separated v1 entry per signing secret",
        ),
        _vector(
            "standard-webhooks rotation: receiver holds the old secret",
            S,
            standard_both,
            expected="accept",
            why="the old secret's entry is there until the overlap ends",
            secrets=(OLD_SECRET,),
        ),
        _vector(
            "standard-webhooks: wrong secret",
            S,
            standard_both,
            expected="reject",
            why="no entry was made with this secret",
            secrets=(OTHER_SECRET,),
        ),
    ]


def vectors() -> dict[str, Any]:
    good = _signed(B, [SECRET])
    tampered_body = BODY.replace("1001", "1002")
    reserialized = json.dumps(json.loads(BODY), indent=2)
    raw = _signed(R, [SECRET])
    cases = [
        _vector("valid", B, good, expected="accept", why="signature and timestamp are right"),
        _vector(
            "header names in lower case",
            B,
            {key.lower(): value for key, value in good.items()},
            expected="accept",
            why="HTTP header names are case-insensitive",
        ),
        _vector(
            "timestamp exactly 300 s old",
            B,
            _signed(B, [SECRET], NOW - 300),
            expected="accept",
            why="the tolerance is 300 s inclusive",
        ),
        _vector(
            "timestamp 301 s old",
            B,
            _signed(B, [SECRET], NOW - 301),
            expected="reject",
            why="more than 300 s in the past: a possible replay",
        ),
        _vector(
            "timestamp 301 s ahead",
            B,
            _signed(B, [SECRET], NOW + 301),
            expected="reject",
            why="more than 300 s in the future",
        ),
        _vector(
            "wrong secret",
            B,
            good,
            expected="reject",
            why="signed with another key",
            secrets=(OTHER_SECRET,),
        ),
        _vector(
            "body changed",
            B,
            good,
            expected="reject",
            why="one byte of the body differs",
            body=tampered_body,
        ),
        _vector(
            "body re-serialized",
            B,
            good,
            expected="reject",
            why=(
                "the same JSON with other whitespace: verify the raw bytes, never re-serialized "
                "JSON"
            ),
            body=reserialized,
        ),
        _vector(
            "delivery id changed",
            B,
            {**good, "X-SVC-Delivery-Id": "dlv-00000000000000000000000000000000"},
            expected="reject",
            why="the delivery id is part of the signed string",
        ),
        _vector(
            "timestamp changed",
            B,
            {**good, "X-SVC-Timestamp": str(NOW - 1)},
            expected="reject",
            why="the timestamp is part of the signed string",
        ),
        _vector(
            "signature missing",
            B,
            {k: v for k, v in good.items() if k != "X-SVC-Signature"},
            expected="reject",
            why="no signature",
        ),
        _vector(
            "no timestamp on a baseline connector",
            B,
            raw,
            expected="reject",
            why="a raw-body (exception profile) request never passes the baseline check",
        ),
        _vector(
            "timestamp not a number",
            B,
            {**good, "X-SVC-Timestamp": "2026-11-23T02:32:13Z"},
            expected="reject",
            why="the timestamp is unix seconds",
        ),
        _vector(
            "raw-body profile: valid",
            R,
            raw,
            expected="accept",
            why="exception profile: HMAC over the raw body only, no timestamp",
        ),
        _vector(
            "raw-body profile: body changed",
            R,
            raw,
            expected="reject",
            why="one byte of the body differs",
            body=tampered_body,
        ),
        *rotation_vectors(),
    ]
    return {
        "description": (
            "Webhook signature test vectors of the PSAP service. For each vector, verify "
            "`body` (UTF-8 bytes) with `headers` as your receiver would, holding the "
            "`secrets` listed (two during a rotation: accept a digest made with either), "
            "with your clock set to `now` (unix seconds), and expect `expected`. Baseline: "
            "X-SVC-Signature = exactly one lowercase hex HMAC-SHA-256 of "
            "'<X-SVC-Timestamp>.<X-SVC-Delivery-Id>.<body>', keyed with the secret string's "
            "UTF-8 bytes; reject a timestamp more than 300 s from now. raw-body-no-timestamp: "
            "the same HMAC of the body alone. standard-webhooks: as the Standard Webhooks "
            "specification (webhook-signature holds one v1 entry per signing secret)."
        ),
        "toleranceSeconds": 300,
        "vectors": cases,
    }


def render() -> str:
    return json.dumps(vectors(), indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the committed vectors")
    arguments = parser.parse_args()
    text = render()
    if arguments.write:
        VECTORS.write_text(text, encoding="utf-8")
        print(f"wrote {VECTORS.relative_to(ROOT)}")
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
