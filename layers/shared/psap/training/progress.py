"""Task list progress counters, computed from the items so that they always agree.

An item's level is the trainer's column position (the trainer signs off a level; the
trainee's own mark is not progress): none or 0 is not started, 1 explained, the template's
last column (`columnCount`, 3 when the template does not say) proficient, any column in
between demonstrated.
"""

from enum import StrEnum

from psap.training.models import TaskList

DEFAULT_COLUMN_COUNT = 3


class Level(StrEnum):
    NOT_STARTED = "NOT_STARTED"
    EXPLAINED = "EXPLAINED"
    DEMONSTRATED = "DEMONSTRATED"
    PROFICIENT = "PROFICIENT"


def level(position: int | None, column_count: int | None) -> Level:
    last_column = column_count if column_count and column_count > 0 else DEFAULT_COLUMN_COUNT
    if position is None or position <= 0:
        return Level.NOT_STARTED
    if position >= last_column:
        return Level.PROFICIENT
    if position == 1:
        return Level.EXPLAINED
    return Level.DEMONSTRATED


def with_counters(task_list: TaskList) -> TaskList:
    """The task list with totalItems and the four level counters computed from its items
    (values supplied by a source are replaced)."""
    template = task_list.task_list_template_version
    column_count = template.column_count if template is not None else None
    levels = [level(item.trainer_column_position, column_count) for item in task_list.items]
    return task_list.model_copy(
        update={
            "total_items": len(levels),
            "not_started_item_count": levels.count(Level.NOT_STARTED),
            "explained_item_count": levels.count(Level.EXPLAINED),
            "demonstrated_item_count": levels.count(Level.DEMONSTRATED),
            "proficient_item_count": levels.count(Level.PROFICIENT),
        }
    )
