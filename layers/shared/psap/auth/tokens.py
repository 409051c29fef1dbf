"""Opaque bearer tokens: 256 random bits, stored only as their SHA-256.

A token reads `psap_{kind}_{body}`. The body of a token issued today is 43 base62 characters
(256 random bits) followed by 6 base62 characters of the CRC32 of everything before them, so
the authorizer refuses a mistyped, truncated or made-up token without reading the table (as
GitHub's tokens carry a CRC32). Tokens issued before the checksum have a 43-character
base64url body: the two forms are told apart by the body's length, so the `psap_{kind}_`
prefix that secret scanners and operators already match is unchanged. docs/design.md
("The cheap refusal path") says how an operator retires the legacy form.
"""

import hashlib
import re
import secrets
import string
import zlib
from enum import StrEnum

TOKEN_PREFIX = "psap"  # noqa: S105 - a readable prefix, not a secret

_BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
_RANDOM_CHARS = 43  # 62**43 > 2**256
_CHECKSUM_CHARS = 6  # 62**6 > 2**32
_CHECKSUMMED_BODY = re.compile(rf"[0-9A-Za-z]{{{_RANDOM_CHARS + _CHECKSUM_CHARS}}}")
_LEGACY_BODY = re.compile(r"[0-9A-Za-z_-]{43}")  # secrets.token_urlsafe(32)


class TokenForm(StrEnum):
    """What a presented token's shape says, before anything is read."""

    CHECKSUMMED = "checksummed"  # today's form, checksum verified
    LEGACY = "legacy"  # issued before the checksum: only a read can tell
    BAD_CHECKSUM = "bad-checksum"
    OTHER_KIND = "other-kind"  # a well-formed token of the other direction
    MALFORMED = "malformed"


def _base62(number: int, width: int) -> str:
    digits = []
    for _ in range(width):
        number, digit = divmod(number, 62)
        digits.append(_BASE62[digit])
    return "".join(reversed(digits))


def _checksum(text: str) -> str:
    return _base62(zlib.crc32(text.encode()), _CHECKSUM_CHARS)


def new_token(kind: str) -> str:
    # The readable prefix lets secret scanners and people recognise a leaked token's kind.
    head = f"{TOKEN_PREFIX}_{kind}_" + "".join(
        secrets.choice(_BASE62) for _ in range(_RANDOM_CHARS)
    )
    return head + _checksum(head)


def token_form(token: str, kind: str) -> TokenForm:
    """The form of a token presented to the `kind` interface; no I/O, no secret involved."""
    prefix, _, rest = token.partition("_")
    token_kind, _, body = rest.partition("_")
    if prefix != TOKEN_PREFIX or not token_kind:
        return TokenForm.MALFORMED
    if _CHECKSUMMED_BODY.fullmatch(body):
        head = token[:-_CHECKSUM_CHARS]
        if token[-_CHECKSUM_CHARS:] != _checksum(head):
            return TokenForm.BAD_CHECKSUM
        form = TokenForm.CHECKSUMMED
    elif _LEGACY_BODY.fullmatch(body):
        form = TokenForm.LEGACY
    else:
        return TokenForm.MALFORMED
    return form if token_kind == kind else TokenForm.OTHER_KIND


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
