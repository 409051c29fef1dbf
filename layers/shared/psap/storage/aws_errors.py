"""AWS errors in the domain's words: the one place a store catches a botocore exception.

A store wraps each AWS call in `translated(what)`. What the caller cannot cause (throttling,
timeouts, an endpoint that does not answer, a refused permission) becomes StoreUnavailable.
The outcomes a store may expect get subclasses of it, so a store that does not catch one
fails as unavailable, as it always did, and a store that does decides what it means (a
conflict, a retry, None).
"""

from collections.abc import Iterator
from contextlib import contextmanager

from botocore.exceptions import BotoCoreError, ClientError

from psap.errors import StoreUnavailable

# S3 says a missing object in three ways (GetObject, HeadObject, a missing version);
# Secrets Manager in a fourth.
_MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound", "ResourceNotFoundException"})
_VERSION_CODES = frozenset({"412", "PreconditionFailed"})


class ConditionFailed(StoreUnavailable):
    """A conditional write's condition did not hold (DynamoDB wrote nothing)."""


class TransactionCancelled(ConditionFailed):
    """DynamoDB cancelled a transaction; `codes` holds each item's reason, in order ('None'
    for an item that was fine)."""

    def __init__(self, info: str, codes: list[str]) -> None:
        super().__init__(info)
        self.codes = codes

    def item_failed(self, index: int) -> bool:
        """Whether the condition of the item at `index` (of the write list) failed."""
        return len(self.codes) > index and self.codes[index] == "ConditionalCheckFailed"


class ObjectMissing(StoreUnavailable):
    """The object (or secret) does not exist."""


class VersionChanged(Exception):
    """The object is no longer the version the caller pinned (an If-Match failed). Not a
    StoreUnavailable: reading again cannot succeed, so no caller may treat it as transient."""


def error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def cancellation_codes(error: ClientError) -> list[str]:
    """Per-item outcome of a cancelled transaction ('None' for items that were fine)."""
    return [
        str(reason.get("Code", "None")) for reason in error.response.get("CancellationReasons", [])
    ]


def _detail(error: Exception, codes_only: bool) -> str:
    if not codes_only:
        return str(error)
    if isinstance(error, ClientError):
        return error_code(error) or "error"
    return type(error).__name__


@contextmanager
def translated(what: str, *, codes_only: bool = False) -> Iterator[None]:
    """Runs an AWS call, raising the errors of this module in place of botocore's. The
    message is `what: detail`; `codes_only` keeps the AWS message out of it (a message can
    echo a request parameter, which for a secret holds the secret)."""
    try:
        yield
    except ClientError as error:
        info = f"{what}: {_detail(error, codes_only)}"
        code = error_code(error)
        if code == "ConditionalCheckFailedException":
            raise ConditionFailed(info) from error
        if code == "TransactionCanceledException":
            raise TransactionCancelled(info, cancellation_codes(error)) from error
        if code in _MISSING_CODES:
            raise ObjectMissing(info) from error
        if code in _VERSION_CODES:
            raise VersionChanged(info) from error
        raise StoreUnavailable(info) from error
    except BotoCoreError as error:
        raise StoreUnavailable(f"{what}: {_detail(error, codes_only)}") from error
