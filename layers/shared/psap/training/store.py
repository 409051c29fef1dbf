"""Phase enrollments and task lists in the tenant-data table, in their trainee's partition.

Layout (every key begins with the tenant):

  T#{t}#U#{user}  / USER            the user (psap.users.store)
  T#{t}#U#{user}  / ENR#{id:019d}   an enrollment: compressed document without its task
                                    lists, and `taskListIds`
  T#{t}#U#{user}  / TL#{id:019d}    a task list: compressed document, counters computed

So a page of a user's enrollments is one Query of the enrollment items from a cursor, and
one BatchGetItem of the user item (does the user exist) and the page's task lists. The
people an enrollment names (the user, training officers, audit history authors, nested
enrollments' users) are stored as the source gave them and replaced at read
time by the tenant's current user records (one BatchGetItem), so a renamed user reads renamed
everywhere; a person who is not (or no longer) a user of the tenant reads as stored.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from psap.config import tenant_data_table
from psap.errors import InvalidInput
from psap.storage.attributes import from_item
from psap.storage.aws_errors import TransactionCancelled
from psap.storage.documents import CHUNK_BYTES, decode_document, encode_document, with_tenant
from psap.storage.dynamodb import batch_get, batch_put, read_item, transact_write
from psap.storage.listing import ID_WIDTH, key, padded
from psap.storage.ordering import UpsertOutcome
from psap.storage.queries import query_page
from psap.training.models import (
    AuditHistoryEntry,
    PhaseEnrollment,
    PhaseEnrollmentSummary,
    TaskList,
    TaskListItem,
)
from psap.training.progress import with_counters
from psap.users.models import PersonReference, User
from psap.users.store import USER_SK, get_users, user_key, user_pk


def _table() -> str:
    """This store's table, from the settings read at cold start (psap.config)."""
    return tenant_data_table()


ENROLLMENT_PREFIX = "ENR#"
TASK_LIST_PREFIX = "TL#"
# One transaction: the enrollment, the user check and its task lists.
MAX_TASK_LISTS = 98
_SUMMARY_FIELDS = frozenset(PhaseEnrollmentSummary.model_fields)


def _blob(document: dict[str, Any], what: str) -> bytes:
    blob = encode_document(document)
    if len(blob) > CHUNK_BYTES:
        raise InvalidInput(f"{what} is too large: {len(blob) // 1000} kB compressed")
    return blob


def _validated_owner(enrollment: PhaseEnrollment) -> int:
    if enrollment.user is None:
        raise InvalidInput(f"enrollment {enrollment.id} needs its user")
    owner = enrollment.user.id
    if len(enrollment.task_lists) > MAX_TASK_LISTS:
        raise InvalidInput(f"enrollment {enrollment.id} has more than {MAX_TASK_LISTS} task lists")
    for task_list in enrollment.task_lists:
        if task_list.subject is not None and task_list.subject.id != owner:
            raise InvalidInput(
                f"task list {task_list.id} of enrollment {enrollment.id} belongs to user "
                f"{task_list.subject.id}, not to the enrollment's user {owner}"
            )
    return owner


def enrollment_key(tenant_id: int, user_id: int, enrollment_id: int) -> dict[str, Any]:
    return key(user_pk(tenant_id, user_id), ENROLLMENT_PREFIX + padded(enrollment_id))


def _items(tenant_id: int, owner: int, enrollment: PhaseEnrollment) -> list[dict[str, Any]]:
    """The enrollment item, then one item per task list (counters computed)."""
    document = enrollment.model_copy(update={"task_lists": []})
    items: list[dict[str, Any]] = [
        {
            **enrollment_key(tenant_id, owner, enrollment.id),
            "id": {"N": str(enrollment.id)},
            "doc": {
                "B": _blob(
                    with_tenant(document.model_dump(mode="json", by_alias=True), tenant_id),
                    f"enrollment {enrollment.id}",
                )
            },
            "taskListIds": {"L": [{"N": str(task_list.id)} for task_list in enrollment.task_lists]},
        }
    ]
    for task_list in enrollment.task_lists:
        counted = with_counters(task_list)
        items.append(
            {
                **key(user_pk(tenant_id, owner), TASK_LIST_PREFIX + padded(task_list.id)),
                "id": {"N": str(task_list.id)},
                "doc": {
                    "B": _blob(
                        with_tenant(counted.model_dump(mode="json", by_alias=True), tenant_id),
                        f"task list {task_list.id}",
                    )
                },
            }
        )
    return items


def put_enrollment(tenant_id: int, enrollment: PhaseEnrollment) -> UpsertOutcome:
    """Creates or replaces the enrollment with this id and its task lists (imports), in one
    transaction. Its user must already be a user of the tenant; task list counters are
    computed from the items."""
    owner = _validated_owner(enrollment)
    existed = _exists(enrollment_key(tenant_id, owner, enrollment.id))
    writes: list[dict[str, Any]] = [
        {
            "ConditionCheck": {
                "TableName": _table(),
                "Key": user_key(tenant_id, owner),
                "ConditionExpression": "attribute_exists(pk)",
            }
        }
    ]
    writes.extend(
        {"Put": {"TableName": _table(), "Item": item}}
        for item in _items(tenant_id, owner, enrollment)
    )
    try:
        transact_write(writes)
    except TransactionCancelled as cancelled:
        if cancelled.item_failed(0):
            raise InvalidInput(
                f"user {owner} of enrollment {enrollment.id} is not a user of this tenant "
                "(import users first)"
            ) from cancelled
        raise
    return UpsertOutcome.UPDATED if existed else UpsertOutcome.CREATED


def bulk_load_enrollments(tenant_id: int, enrollments: Sequence[PhaseEnrollment]) -> None:
    """Loads NEW enrollments fast (BatchWriteItem): the same items as put_enrollment, for
    operator loads whose users were just loaded (demo data, benchmarks)."""
    items: list[dict[str, Any]] = []
    for enrollment in enrollments:
        items.extend(_items(tenant_id, _validated_owner(enrollment), enrollment))
    batch_put(_table(), items)


def _exists(item_key: dict[str, Any]) -> bool:
    return read_item(_table(), item_key, "enrollment", projection="pk") is not None


@dataclass(frozen=True)
class EnrollmentSlice:
    """Enrollments by id from a cursor, and the cursor of the rest (None: there is none)."""

    enrollments: list[PhaseEnrollment]
    next_after: int | None


def list_enrollments(
    tenant_id: int, user_id: int, after: int | None, *, size: int, budget_bytes: int
) -> EnrollmentSlice | None:
    """The user's enrollments with ids above `after`, by id, in full form: at most `size`,
    and fewer when the next would take their JSON past `budget_bytes` (never none while
    any is left). None when the user does not exist.

    Reads O(size): one Query of the enrollment items from the cursor, one BatchGetItem of
    the user item and the page's task lists, one of the people they name."""
    low = ENROLLMENT_PREFIX + (padded(after + 1) if after is not None else "")
    request = {
        "TableName": _table(),
        "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
        "ExpressionAttributeValues": {
            ":pk": {"S": user_pk(tenant_id, user_id)},
            ":low": {"S": low},
            ":high": {"S": ENROLLMENT_PREFIX + "9" * ID_WIDTH},
        },
        "ConsistentRead": True,
        "Limit": size + 1,  # one more: whether there is a next page
    }
    found = [from_item(raw) for raw in query_page(request, "enrollments").get("Items", [])]
    more = len(found) > size
    enrollments = [
        (
            PhaseEnrollment.model_validate(decode_document(bytes(item["doc"]))),
            [int(value) for value in item.get("taskListIds", [])],
        )
        for item in found[:size]
    ]
    wanted = {task_list_id for _, ids in enrollments for task_list_id in ids}
    keys = [user_key(tenant_id, user_id)] + [
        key(user_pk(tenant_id, user_id), TASK_LIST_PREFIX + padded(task_list_id))
        for task_list_id in sorted(wanted)
    ]
    items = batch_get(_table(), keys, consistent=True)
    if not any(item["sk"] == USER_SK for item in items):
        return None
    task_lists: dict[int, TaskList] = {}
    for item in items:
        if str(item["sk"]).startswith(TASK_LIST_PREFIX):
            task_list = TaskList.model_validate(decode_document(bytes(item["doc"])))
            task_lists[task_list.id] = task_list
    people = _people(
        tenant_id,
        [enrollment for enrollment, _ in enrollments],
        task_lists.values(),
    )
    live = _LiveReferences(people)
    summaries = {enrollment.id: live.summary(_summary(enrollment)) for enrollment, _ in enrollments}
    answered: list[PhaseEnrollment] = []
    spent = 0
    for enrollment, task_list_ids in enrollments:
        full = live.enrollment(enrollment).model_copy(
            update={
                "task_lists": [
                    live.task_list(task_lists[task_list_id], summaries)
                    for task_list_id in task_list_ids
                    if task_list_id in task_lists
                ]
            }
        )
        spent += len(full.model_dump_json(by_alias=True)) + 1
        if answered and spent > budget_bytes:
            more = True
            break
        answered.append(full)
    return EnrollmentSlice(answered, answered[-1].id if more and answered else None)


def _summary(enrollment: PhaseEnrollmentSummary) -> PhaseEnrollmentSummary:
    return PhaseEnrollmentSummary.model_validate(
        {name: getattr(enrollment, name) for name in _SUMMARY_FIELDS}
    )


def _people(
    tenant_id: int,
    enrollments: Iterable[PhaseEnrollment],
    task_lists: Iterable[TaskList],
) -> dict[int, User]:
    """Every user the documents name, read in one BatchGetItem."""
    ids: set[int] = set()

    def add_summary(summary: PhaseEnrollmentSummary) -> None:
        ids.update(user.id for user in (summary.user, summary.primary_training_officer) if user)

    for enrollment in enrollments:
        add_summary(enrollment)
    for task_list in task_lists:
        ids.update(
            person.id
            for person in (task_list.subject, task_list.primary_training_officer)
            if person
        )
        for item in task_list.items:
            ids.update(entry.user.id for entry in item.audit_history if entry.user)
        for summary in task_list.phase_enrollments:
            add_summary(summary)
    return get_users(tenant_id, sorted(ids))


class _LiveReferences:
    """Replaces stored people by the tenant's current user records where they exist."""

    def __init__(self, people: dict[int, User]) -> None:
        self.people = people

    def user(self, user: User | None) -> User | None:
        return self.people.get(user.id, user) if user is not None else None

    def person(self, person: PersonReference | None) -> PersonReference | None:
        if person is None or person.id not in self.people:
            return person
        return PersonReference.of(self.people[person.id])

    def summary(self, summary: PhaseEnrollmentSummary) -> PhaseEnrollmentSummary:
        return summary.model_copy(
            update={
                "user": self.user(summary.user),
                "primary_training_officer": self.user(summary.primary_training_officer),
            }
        )

    def enrollment(self, enrollment: PhaseEnrollment) -> PhaseEnrollment:
        return enrollment.model_copy(
            update={
                "user": self.user(enrollment.user),
                "primary_training_officer": self.user(enrollment.primary_training_officer),
            }
        )

    def _entry(self, entry: AuditHistoryEntry) -> AuditHistoryEntry:
        return entry.model_copy(update={"user": self.person(entry.user)})

    def _item(self, item: TaskListItem) -> TaskListItem:
        history = [self._entry(entry) for entry in item.audit_history]
        return item.model_copy(update={"audit_history": history})

    def task_list(
        self, task_list: TaskList, summaries: dict[int, PhaseEnrollmentSummary]
    ) -> TaskList:
        """Nested enrollments read live from the same partition when they are there."""
        nested = [
            summaries.get(summary.id) or self.summary(summary)
            for summary in task_list.phase_enrollments
        ]
        return task_list.model_copy(
            update={
                "subject": self.person(task_list.subject),
                "primary_training_officer": self.person(task_list.primary_training_officer),
                "items": [self._item(item) for item in task_list.items],
                "phase_enrollments": nested,
            }
        )
