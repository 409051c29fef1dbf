"""moto's DynamoDB in O(items touched) time and flat memory (the local stack's moto).

Two costs of moto grow with the data, not with the request:

- A transaction deep-copies every table it names before applying, to restore on a
  cancellation: O(table) time and memory per transaction. Here nothing is copied but the
  transaction's own items (their state before it), and a cancelled transaction puts exactly
  those back; the table object itself is never replaced.
- moto keeps every model object it ever created (`BaseModel.instances_tracked`, for its
  dashboard): each written item, and each table copy, stays in memory until a reset. A stack
  left running grows by every write. DynamoDB's models are not tracked here; nothing in the
  local stack reads that list.

Only for a moto whose DynamoDB requests run one at a time (local.aws serializes them): the
restore is not safe against a concurrent writer otherwise.
"""

import copy
from typing import Any

_MISSING = object()


def stop_tracking_dynamodb_models() -> None:
    from moto.core.common_models import BaseModel  # noqa: PLC0415 - moto loads lazily

    if getattr(BaseModel, "_psap_untracked_dynamodb", False):
        return
    track = BaseModel.__new__

    def new(cls: type[Any], *args: Any, **kwargs: Any) -> Any:
        if cls.__module__.startswith("moto.dynamodb."):
            return object.__new__(cls)
        return track(cls, *args, **kwargs)

    BaseModel.__new__ = staticmethod(new)  # type: ignore[method-assign]
    BaseModel._psap_untracked_dynamodb = True  # type: ignore[attr-defined]


def back_up_only_touched_items() -> None:
    from moto.dynamodb import models as dynamodb_models  # noqa: PLC0415 - moto loads lazily
    from moto.dynamodb.models import DynamoDBBackend  # noqa: PLC0415
    from moto.dynamodb.models.dynamo_type import DynamoType  # noqa: PLC0415
    from moto.dynamodb.models.table import Table  # noqa: PLC0415

    stop_tracking_dynamodb_models()
    if getattr(DynamoDBBackend, "_psap_light_backups", False):
        return
    apply = DynamoDBBackend.transact_write_items

    def transact_write_items(self: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> None:
        # (table, hash value, range value or None, the item before the transaction or _MISSING)
        before: list[tuple[Any, Any, Any, Any]] = []
        for entry in transact_items:
            _, operation = next(iter(entry.items()))
            table = self.tables.get(operation.get("TableName", ""))
            key = operation.get("Key") or operation.get("Item") or {}
            if table is None or table.hash_key_attr not in key:
                continue
            hash_value = DynamoType(key[table.hash_key_attr])
            range_value = (
                DynamoType(key[table.range_key_attr])
                if table.range_key_attr and table.range_key_attr in key
                else None
            )
            partition = table.items.get(hash_value)
            if table.has_range_key:
                item = partition.get(range_value, _MISSING) if partition else _MISSING
            else:
                item = partition if partition is not None else _MISSING
            # moto updates items in place: keep a copy of each touched item's state.
            before.append(
                (
                    table,
                    hash_value,
                    range_value,
                    copy.deepcopy(item) if item is not _MISSING else item,
                )
            )

        def keep_table(value: Any, memo: Any = None) -> Any:
            # moto's own rollback assigns its "backup" back: the same table, a no-op.
            return value if isinstance(value, Table) else copy.deepcopy(value, memo)

        shim = type(
            "TransactionBackup", (), {"deepcopy": staticmethod(keep_table), "copy": copy.copy}
        )
        dynamodb_models.copy = shim  # type: ignore[attr-defined,assignment]
        try:
            apply(self, transact_items)
        except BaseException:
            for table, hash_value, range_value, item in reversed(before):
                _restore(table, hash_value, range_value, item=item)
            raise
        finally:
            dynamodb_models.copy = copy  # type: ignore[attr-defined]

    DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]
    DynamoDBBackend._psap_light_backups = True  # type: ignore[attr-defined]


def _restore(table: Any, hash_value: Any, range_value: Any, *, item: Any) -> None:
    if not table.has_range_key:
        if item is _MISSING:
            table.items.pop(hash_value, None)
        else:
            table.items[hash_value] = item
        return
    partition = table.items[hash_value]  # a defaultdict: created if the put made it
    if item is _MISSING:
        partition.pop(range_value, None)
        if not partition:
            table.items.pop(hash_value, None)
    else:
        partition[range_value] = item
