"""S3's browser-form upload (POST Object, SigV4) judged as S3 judges it.

moto stores a form POST's file without reading its policy: a body of any size, a policy
past its expiry, a form that breaks the policy's conditions and a forged signature were all
stored. S3 checks, in this order, and so does the embedded AWS (local.iam_enforcement wires
this module in, then the signer's IAM policies decide as for a presigned URL):

- the form carries `key`, `policy`, `x-amz-algorithm` (AWS4-HMAC-SHA256), `x-amz-credential`,
  `x-amz-date` and `x-amz-signature`, and exactly one file (400 InvalidArgument);
- the signature is the HMAC of the base64 policy under the credential's signing key
  (403 SignatureDoesNotMatch);
- the policy is JSON with `expiration` and `conditions` (400 InvalidPolicyDocument) and has
  not expired (403 AccessDenied, "Policy expired.");
- every condition holds and every form field is named by one (403 AccessDenied,
  "Invalid according to Policy: ...");
- the file's size is within `content-length-range` (400 EntityTooLarge / EntityTooSmall,
  with ProposedSize and MaxSizeAllowed / MinSizeAllowed).

Field names are case-insensitive, values are not, as in S3.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

ALGORITHM: Final = "AWS4-HMAC-SHA256"
_REQUIRED: Final = ("key", "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-signature")
# Fields S3 never asks a condition for: the policy and signature themselves, the file, and
# the ones a page may add for its own use.
_UNCONDITIONED: Final = frozenset({"policy", "x-amz-signature", "file"})


@dataclass(frozen=True)
class PostRefusal(Exception):
    """What S3 answers for a refused form POST: its error code, message and HTTP status."""

    code: str
    message: str
    status: int


@dataclass(frozen=True)
class PostForm:
    """A form POST to a bucket: its text fields (as sent) and the file's size."""

    bucket: str
    fields: Mapping[str, str]
    file_size: int | None  # None: the form has no file

    def field(self, name: str) -> str | None:
        wanted = name.lower()
        for sent, value in self.fields.items():
            if sent.lower() == wanted:
                return value
        return None


@dataclass(frozen=True)
class SignedBy:
    """Who signed the policy, read from `x-amz-credential` and `x-amz-security-token`."""

    access_key_id: str
    day: str
    region: str
    service: str
    session_token: str | None


def signer_of(form: PostForm) -> SignedBy:
    """The signer a SigV4 form names; refuses a form that is not one (before any secret)."""
    if form.field("policy") is None:
        raise PostRefusal("AccessDenied", "Access Denied", 403)  # anonymous: private buckets
    if form.field("awsaccesskeyid") is not None or form.field("signature") is not None:
        raise PostRefusal(
            "InvalidRequest",
            "The authorization mechanism you have provided is not supported."
            " Please use AWS4-HMAC-SHA256.",
            400,
        )
    for name in _REQUIRED:
        if not form.field(name):
            raise PostRefusal(
                "InvalidArgument",
                f"Bucket POST must contain a field named '{name}'. If it is specified,"
                " please check the order of the fields.",
                400,
            )
    if form.field("x-amz-algorithm") != ALGORITHM:
        raise PostRefusal(
            "InvalidArgument",
            "Only AWS4-HMAC-SHA256 is supported",
            400,
        )
    if form.file_size is None:
        raise PostRefusal(
            "InvalidArgument", "POST requires exactly one file upload per request.", 400
        )
    parts = (form.field("x-amz-credential") or "").split("/")
    if len(parts) != 5 or parts[4] != "aws4_request":
        raise PostRefusal(
            "InvalidArgument",
            "Invalid Argument: x-amz-credential is malformed",
            400,
        )
    return SignedBy(parts[0], parts[1], parts[2], parts[3], form.field("x-amz-security-token"))


def policy_signature(secret_access_key: str, signer: SignedBy, policy: str) -> str:
    """SigV4's signature of the base64 policy text, as the signing client computes it."""
    key = ("AWS4" + secret_access_key).encode()
    for part in (signer.day, signer.region, signer.service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, policy.encode(), hashlib.sha256).hexdigest()


def check_form(
    form: PostForm,
    secret_of: Callable[[SignedBy], str],
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> SignedBy:
    """The form's signer, once S3 would store its file; PostRefusal otherwise. `secret_of`
    gives the signer's secret key (or raises PostRefusal for a key that does not exist)."""
    signer = signer_of(form)
    policy_text = form.field("policy") or ""
    expected = policy_signature(secret_of(signer), signer, policy_text)
    if not hmac.compare_digest(expected, form.field("x-amz-signature") or ""):
        raise PostRefusal(
            "SignatureDoesNotMatch",
            "The request signature we calculated does not match the signature you provided."
            " Check your key and signing method.",
            403,
        )
    expiration, conditions = _policy(policy_text)
    if now() >= expiration:
        raise PostRefusal("AccessDenied", "Invalid according to Policy: Policy expired.", 403)
    size_range: tuple[int, int] | None = None
    named: set[str] = set()
    for condition in conditions:
        found = _condition_holds(form, condition)
        if isinstance(found, tuple):
            size_range = found
        else:
            named.add(found)
    extra = [
        name
        for name in form.fields
        if name.lower() not in named
        and name.lower() not in _UNCONDITIONED
        and not name.lower().startswith("x-ignore-")
    ]
    if extra:
        raise PostRefusal(
            "AccessDenied",
            f"Invalid according to Policy: Extra input fields: {', '.join(extra)}",
            403,
        )
    if size_range is not None and form.file_size is not None:
        _check_size(form.file_size, *size_range)
    return signer


def _policy(text: str) -> tuple[datetime, list[Any]]:
    try:
        document = json.loads(base64.b64decode(text, validate=True))
        expiration = datetime.fromisoformat(document["expiration"])
        conditions = document["conditions"]
    except (binascii.Error, ValueError, KeyError, TypeError) as error:
        raise PostRefusal(
            "InvalidPolicyDocument",
            "Invalid Policy: Invalid JSON, or a missing or bad expiration or conditions.",
            400,
        ) from error
    if not isinstance(conditions, list) or expiration.tzinfo is None:
        raise PostRefusal("InvalidPolicyDocument", "Invalid Policy: Invalid 'conditions'.", 400)
    return expiration, conditions


def _failed(condition: Any) -> PostRefusal:
    return PostRefusal(
        "AccessDenied",
        "Invalid according to Policy: Policy Condition failed: " + json.dumps(condition),
        403,
    )


def _value(form: PostForm, name: str) -> str:
    if name == "bucket":
        return form.bucket
    return form.field(name) or ""


def _condition_holds(form: PostForm, condition: Any) -> str | tuple[int, int]:
    """The field name the condition covers (or the size range); PostRefusal if it fails."""
    if isinstance(condition, dict) and len(condition) == 1:
        name, wanted = next(iter(condition.items()))
        if _value(form, str(name).lower()) != wanted:
            raise _failed(["eq", f"${name}", wanted])
        return str(name).lower()
    if isinstance(condition, list) and len(condition) == 3:
        operator = str(condition[0]).lower()
        if operator == "content-length-range":
            try:
                low, high = int(condition[1]), int(condition[2])
            except (TypeError, ValueError) as error:
                raise _invalid(condition) from error
            return (low, high)
        subject = condition[1]
        if operator in ("eq", "starts-with") and isinstance(subject, str) and subject[:1] == "$":
            name = subject[1:].lower()
            actual, wanted = _value(form, name), str(condition[2])
            if operator == "eq":
                holds = actual == wanted
            elif name == "content-type":  # each of a comma-separated list must match
                holds = all(part.strip().startswith(wanted) for part in actual.split(","))
            else:
                holds = actual.startswith(wanted)
            if not holds:
                raise _failed(condition)
            return name
    raise _invalid(condition)


def _invalid(condition: Any) -> PostRefusal:
    return PostRefusal(
        "InvalidPolicyDocument",
        f"Invalid Policy: Invalid Condition: {json.dumps(condition)}",
        400,
    )


def _check_size(size: int, low: int, high: int) -> None:
    if size > high:
        raise PostRefusal(
            "EntityTooLarge",
            "Your proposed upload exceeds the maximum allowed size",
            400,
        )
    if size < low:
        raise PostRefusal(
            "EntityTooSmall",
            "Your proposed upload is smaller than the minimum allowed size",
            400,
        )
