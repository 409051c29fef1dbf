"""The template's resources made once, their data emptied between tests.

Creating the template's keys, tables, queues and buckets (and the operator) costs about
half a second per test, most of a short test's time. moto keeps its state in process-wide
backends, shared by `mock_aws` and the threaded moto server alike, so the resources can
outlive a test: between tests only the data goes (items, messages, objects) and every
other service is reset as moto resets it.

A test may change the resources themselves (drop a table, narrow a role's policy, replace a
key policy) or reset moto itself (its own `mock_aws()`). A fingerprint of what the
template made, taken when it was made and compared before each test, catches both: then
everything is reset and made again, so no test sees another's changes.
"""

from collections.abc import Callable
from typing import Any

from moto.core.base_backend import BackendDict
from moto.core.model_instances import reset_model_data
from moto.dynamodb.models import dynamodb_backends
from moto.iam.models import iam_backends
from moto.kms.models import kms_backends
from moto.s3.models import MultipartDict, s3_backends
from moto.s3.utils import _VersionedKeyStore
from moto.sqs.models import sqs_backends

from local.template import ACCOUNT_ID, REGION

# The services whose resources the template makes (and the role sessions STS handed out):
# kept between tests, data emptied. Every other service is reset.
_KEPT = frozenset({"dynamodb", "sqs", "s3", "kms", "iam", "sts"})


def _fingerprint() -> tuple[Any, ...]:
    """What a test could have changed of the made resources: each object's identity (a
    dropped and made-again table is another object) and the settings tests change."""
    tables = dynamodb_backends[ACCOUNT_ID][REGION].tables
    queues = sqs_backends[ACCOUNT_ID][REGION].queues
    buckets = s3_backends[ACCOUNT_ID]["aws"].buckets
    keys = kms_backends[ACCOUNT_ID][REGION].keys
    roles = iam_backends[ACCOUNT_ID]["aws"].roles
    return (
        tuple((name, id(table)) for name, table in tables.items()),
        tuple(
            (
                name,
                id(queue),
                # moto sets these from the queue's attributes, untyped
                getattr(queue, "visibility_timeout", None),
                queue.redrive_policy,
                getattr(queue, "kms_master_key_id", None),
            )
            for name, queue in queues.items()
        ),
        tuple(
            (name, id(bucket), bucket.policy, repr(bucket.encryption))
            for name, bucket in buckets.items()
        ),
        tuple((key_id, id(key), key.policy, key.key_state) for key_id, key in keys.items()),
        tuple(
            (
                role.name,
                id(role),
                repr(sorted(role.policies.items())),
                tuple(sorted(role.managed_policies)),
            )
            for role in roles.values()
        ),
    )


def _empty_data() -> None:
    for table in dynamodb_backends[ACCOUNT_ID][REGION].tables.values():
        table.items.clear()
        if table.stream_shard is not None:
            table.stream_shard.items = []
    dynamodb_backends[ACCOUNT_ID][REGION].backups.clear()
    for queue in sqs_backends[ACCOUNT_ID][REGION].queues.values():
        with queue._messages_lock:  # emptied as PurgeQueue empties it
            queue._messages = []
            queue._pending_messages = set()
            queue.deleted_messages = set()
    for bucket in s3_backends[ACCOUNT_ID]["aws"].buckets.values():
        bucket.keys = _VersionedKeyStore()
        bucket.multiparts = MultipartDict()
    for backends in BackendDict._instances:  # type: ignore[misc]
        if backends.service_name not in _KEPT:
            for account in backends.values():
                account.reset()
            backends.clear()


def reset_all() -> None:
    """moto's own full reset (what `mock_aws` does when it starts)."""
    BackendDict.reset()
    reset_model_data()


class TemplateResources:
    """Makes the template's resources when they are missing or changed, else empties them."""

    def __init__(self) -> None:
        self._made: tuple[Any, ...] | None = None

    def prepare(self, make: Callable[[], None]) -> bool:
        """Empties the data of the resources if they are as made; otherwise resets moto and
        calls `make`. True when the resources were made anew (role sessions are gone)."""
        if self._made is not None and self._made == _fingerprint():
            _empty_data()
            return False
        reset_all()
        make()
        self._made = _fingerprint()
        return True
