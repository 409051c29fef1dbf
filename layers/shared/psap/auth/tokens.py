"""Opaque bearer tokens: 256 random bits, stored only as their SHA-256."""

import hashlib
import secrets

TOKEN_PREFIX = "psap"  # noqa: S105 - a readable prefix, not a secret


def new_token(kind: str) -> str:
    # The readable prefix lets secret scanners and people recognise a leaked token's kind.
    return f"{TOKEN_PREFIX}_{kind}_{secrets.token_urlsafe(32)}"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, or None."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        return None
    return token
