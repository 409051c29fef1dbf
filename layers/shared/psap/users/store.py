"""Users in the tenant-data table.

Layout (every key begins with the tenant):

  T#{t}#U#{id}                 / USER          the user (plain attributes) and `rev`
  T#{t}#UL#{scope}             / #COUNT        how many users the scope holds
  T#{t}#UL#{scope}#{sort}      / P#{value}{US}{id:019d}
                                               a pointer, sorted by the sort field's value
                                               (casefolded), then id

The user's partition also holds the user's enrollments and task lists (psap.training).
A scope is a combination of the list filters (email, loginEnabled, isSupervisor): a user
has a pointer in each combination its values match (8 at most) for each sort field (id,
lastName, firstName, email), so any filter combination and sort is one Query. Pointers and
counters change in the same transaction as the user, conditional on the revision read.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import combinations
from typing import Any
from urllib.parse import quote

from psap.config import tenant_data_table
from psap.paging import PageRequest
from psap.storage import listing
from psap.storage.attributes import to_item
from psap.storage.dynamodb import batch_get, read_item, transact_write
from psap.storage.listing import Key, key
from psap.storage.optimistic import optimistic_write, revised_put, revision_of
from psap.storage.ordering import UpsertOutcome
from psap.users.models import User


def _table() -> str:
    """This store's table, from the settings read at cold start (psap.config)."""
    return tenant_data_table()


USER_SK = "USER"
_COUNTER_SK = "#COUNT"
_POINTER_PREFIX = "P#"
_SEPARATOR = "\x1f"  # below every printable character: "Smith" sorts before "Smith Jr"
_ALL_POINTERS = listing.KeyRange(_POINTER_PREFIX, _POINTER_PREFIX + "\U0010ffff")


class UserSortField(StrEnum):
    ID = "id"
    LAST_NAME = "lastName"
    FIRST_NAME = "firstName"
    EMAIL = "email"


@dataclass(frozen=True)
class UserFilters:
    email: str | None = None  # exact, case-insensitive
    login_enabled: bool | None = None
    is_supervisor: bool | None = None


def user_pk(tenant_id: int, user_id: int) -> str:
    return f"T#{tenant_id}#U#{user_id}"


def user_key(tenant_id: int, user_id: int) -> Key:
    return key(user_pk(tenant_id, user_id), USER_SK)


def _flag(value: bool) -> str:
    return "true" if value else "false"


def scope_name(filters: UserFilters) -> str:
    parts = []
    if filters.email is not None:
        parts.append("E=" + quote(filters.email.strip().casefold(), safe=""))
    if filters.login_enabled is not None:
        parts.append("L=" + _flag(filters.login_enabled))
    if filters.is_supervisor is not None:
        parts.append("S=" + _flag(filters.is_supervisor))
    return "|".join(parts) or "ALL"


def _scopes(user: User) -> list[str]:
    """Every filter combination this user matches (a null value matches no filter on it)."""
    present: list[tuple[str, Any]] = [
        (name, value)
        for name, value in (
            ("email", user.email),
            ("login_enabled", user.login_enabled),
            ("is_supervisor", user.is_supervisor),
        )
        if value is not None
    ]
    scopes = []
    for size in range(len(present) + 1):
        for chosen in combinations(present, size):
            scopes.append(scope_name(UserFilters(**dict(chosen))))
    return scopes


def _sort_value(user: User, field: UserSortField) -> str:
    if field is UserSortField.ID:
        return ""
    raw = {
        UserSortField.LAST_NAME: user.last_name,
        UserSortField.FIRST_NAME: user.first_name,
        UserSortField.EMAIL: user.email,
    }[field]
    text = (raw or "").casefold()
    return "".join(character for character in text if character >= " ")


def counter_pk(tenant_id: int, scope: str) -> str:
    return f"T#{tenant_id}#UL#{scope}"


def pointer_pk(tenant_id: int, scope: str, field: UserSortField) -> str:
    return f"T#{tenant_id}#UL#{scope}#{field.value}"


def _pointers(tenant_id: int, user: User) -> list[Key]:
    return [
        key(
            pointer_pk(tenant_id, scope, field),
            f"{_POINTER_PREFIX}{_sort_value(user, field)}{_SEPARATOR}{listing.padded(user.id)}",
        )
        for scope in _scopes(user)
        for field in UserSortField
    ]


def _counters(tenant_id: int, user: User) -> list[listing.Counter]:
    return [listing.Counter(counter_pk(tenant_id, scope), _COUNTER_SK) for scope in _scopes(user)]


def listing_partitions(tenant_id: int, user: User) -> list[str]:
    """Every listing partition (pointers and counters) this user is in: what a tenant's
    offboarding purges beside the user's own partition."""
    return sorted(
        {pointer["pk"]["S"] for pointer in _pointers(tenant_id, user)}
        | {counter.pk for counter in _counters(tenant_id, user)}
    )


def _stored_form(tenant_id: int, user: User) -> User:
    # The target tenant is the one written to, whatever the record said.
    return user.model_copy(update={"tenant_id": tenant_id})


def _item(tenant_id: int, user: User, revision: int) -> dict[str, Any]:
    attributes = user.model_dump(mode="json", by_alias=True)
    return {**user_key(tenant_id, user.id), **to_item(attributes), "rev": {"N": str(revision)}}


def user_from_item(item: dict[str, Any]) -> User:
    return User.model_validate({k: v for k, v in item.items() if k not in {"pk", "sk", "rev"}})


def write_plan(tenant_id: int, old: User | None, new: User) -> listing.WritePlan:
    plan = listing.WritePlan()
    listing.pointer_changes(
        plan, _pointers(tenant_id, old) if old else [], _pointers(tenant_id, new)
    )
    listing.counter_changes(
        plan, _counters(tenant_id, old) if old else [], _counters(tenant_id, new)
    )
    return plan


def read_user_item(tenant_id: int, user_id: int) -> dict[str, Any] | None:
    return read_item(_table(), user_key(tenant_id, user_id), "user")


def get_users(tenant_id: int, user_ids: Sequence[int]) -> dict[int, User]:
    """The tenant's users among `user_ids` (unknown ids are left out), one BatchGetItem per
    100 ids."""
    wanted = sorted(set(user_ids))
    if not wanted:
        return {}
    items = batch_get(_table(), [user_key(tenant_id, user_id) for user_id in wanted])
    users = [user_from_item(item) for item in items]
    return {user.id: user for user in users}


def put_user(tenant_id: int, user: User) -> UpsertOutcome:
    """Creates or replaces the user with this id (imports), with its pointers and counters,
    in one transaction conditional on the revision read: never a partial write."""
    new = _stored_form(tenant_id, user)

    def attempt() -> UpsertOutcome:
        old_item = read_user_item(tenant_id, new.id)
        old = user_from_item(old_item) if old_item else None
        put = revised_put(_table(), _item(tenant_id, new, revision_of(old_item) + 1), old_item)
        transact_write([{"Put": put}, *write_plan(tenant_id, old, new).transaction_items(_table())])
        return UpsertOutcome.CREATED if old is None else UpsertOutcome.UPDATED

    return optimistic_write(f"user {user.id}", attempt)


def bulk_load_users(tenant_id: int, users: Sequence[User]) -> None:
    """Loads NEW users fast (BatchWriteItem; counters once per scope): the same items as
    put_user, for operator loads into an empty tenant (demo data, benchmarks)."""
    plans = []
    for user in users:
        stored = _stored_form(tenant_id, user)
        plan = write_plan(tenant_id, None, stored)
        plan.puts.insert(0, _item(tenant_id, stored, 1))
        plans.append(plan)
    listing.bulk_write(_table(), plans)


def list_users(
    tenant_id: int,
    filters: UserFilters,
    *,
    sort: UserSortField,
    ascending: bool,
    page: PageRequest,
) -> tuple[list[User], int]:
    """One page of users and the total for the filters: a counter read, a pointer Query and
    a BatchGetItem of the page's users."""
    scope = scope_name(filters)
    total = listing.read_counter(_table(), counter_pk(tenant_id, scope), _COUNTER_SK)
    if page.offset >= total:
        return [], total
    ids = listing.page_of_pointers(
        _table(),
        pointer_pk(tenant_id, scope, sort),
        _ALL_POINTERS,
        forward=ascending,
        page=page,
    )
    found = get_users(tenant_id, ids)
    # A user replaced between the pointer read and the batch read is left out of this page.
    return [found[user_id] for user_id in ids if user_id in found], total
