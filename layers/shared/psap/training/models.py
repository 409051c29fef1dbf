"""Phase enrollment and task list shapes of the spec, field for field.

Absent values are null; arrays are always arrays (empty when there is nothing). Where the
spec gives no type, numeric-looking fields are numbers (see the README's type notes).
"""

from datetime import date
from enum import StrEnum

from pydantic import Field

from psap.models import Number, Timestamp, WireModel
from psap.users.models import PersonReference, User


class EnrollmentStatus(StrEnum):
    SCHEDULED = "SCHEDULED"
    IN_PROGRESS = "IN_PROGRESS"
    SUBMITTED = "SUBMITTED"
    WAITING_SIGNOFF = "WAITING_SIGNOFF"
    COMPLETE = "COMPLETE"
    CANCELLED = "CANCELLED"


class PhaseEnrollmentSummary(WireModel):
    """The reduced form (id through signoffId), nested in task lists and evaluations."""

    id: int
    tenant_id: int | None = None
    phase_id: int | None = None
    phase_name: str | None = None
    user: User | None = None
    primary_training_officer: User | None = None
    start_date: date | None = None
    original_planned_end_date: date | None = None
    projected_end_date: date | None = None
    actual_end_date: date | None = None
    status: EnrollmentStatus | None = None
    status_reason: str | None = None
    signoff_id: int | None = None


class TemplateEntry(WireModel):
    """An item or group of a task list template version."""

    id: int | None = None
    identifier: str | None = None
    name: str | None = None
    order_index: int | None = None
    parent_id: int | None = None


class ColumnLabel(WireModel):
    id: int | None = None
    column_position: int | None = None
    column_name: str | None = None


class TaskListTemplateVersion(WireModel):
    id: int | None = None
    active: bool | None = None
    version: int | None = None
    column_count: int | None = None
    training_officer_only: bool | None = None
    name: str | None = None
    has_observations: bool | None = None
    items: list[TemplateEntry] = Field(default_factory=list)
    groups: list[TemplateEntry] = Field(default_factory=list)
    column_labels: list[ColumnLabel] = Field(default_factory=list)


class AuditHistoryEntry(WireModel):
    id: int | None = None
    user: PersonReference | None = None
    position_type: str | None = None
    old_position: int | None = None
    new_position: int | None = None
    checked_at: Timestamp | None = None
    created_at: Timestamp | None = None
    updated_at: Timestamp | None = None


class TaskListItem(WireModel):
    id: int | None = None
    task_list_template_version_item: TemplateEntry | None = None
    is_complete: bool | None = None
    trainee_column_position: int | None = None
    trainer_column_position: int | None = None
    trainer_id: int | None = None
    audit_history: list[AuditHistoryEntry] = Field(default_factory=list)


class TaskListGroup(WireModel):
    id: int | None = None
    task_list_template_version_item_group: TemplateEntry | None = None
    is_complete: bool | None = None


class TaskList(WireModel):
    id: int
    subject: PersonReference | None = None
    primary_training_officer: PersonReference | None = None
    end_date: Timestamp | None = None
    start_date: Timestamp | None = None
    enrollment_date: Timestamp | None = None
    status: str | None = Field(default=None, description="e.g. NOT_STARTED, IN_PROGRESS")
    task_list_template_version: TaskListTemplateVersion | None = None
    items: list[TaskListItem] = Field(default_factory=list)
    groups: list[TaskListGroup] = Field(default_factory=list)
    total_items: int = 0
    not_started_item_count: int = 0
    explained_item_count: int = 0
    demonstrated_item_count: int = 0
    proficient_item_count: int = 0
    phase_names: list[str] = Field(default_factory=list)
    phase_enrollments: list[PhaseEnrollmentSummary] = Field(default_factory=list)
    primary_phase_enrollment_id: int | None = None
    primary_phase_id: int | None = None
    primary_phase_name: str | None = None


class PhaseEnrollment(PhaseEnrollmentSummary):
    """The full form: the reduced form's fields, then task lists, hours and sign-off."""

    has_signoff_flow: bool | None = None
    task_lists: list[TaskList] = Field(default_factory=list)
    min_training_hours: Number | None = None
    has_incomplete_training_reports: bool | None = None
    has_incomplete_task_lists: bool | None = None
    can_start_signoff: bool | None = None
    is_progression_disabled: bool | None = None
    existing_in_progress_enrollment_id: int | None = None
    total_training_hours: Number | None = None
    signoff_created_at: Timestamp | None = None
