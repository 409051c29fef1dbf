"""moto transactions that back up only the items they touch (the local stack's moto).

moto deep-copies every table a transaction names before applying it, to restore on a
cancellation: O(table) per transaction. With the demo tenant data loaded that is seconds per
transaction, enough for an import or the CAD worker to time out. The backup here copies the
table's partition dicts (references only) and deep-copies just the transaction's own items
(moto updates items in place), which restores exactly the same state on a cancellation.

Only for a moto whose DynamoDB requests run one at a time (local.aws serializes them): the
swap of moto's `copy` module for the duration of a transaction is not safe otherwise.
"""

import copy
from typing import Any


def back_up_only_touched_items() -> None:
    from moto.dynamodb import models as dynamodb_models  # noqa: PLC0415 - moto loads lazily
    from moto.dynamodb.models import DynamoDBBackend  # noqa: PLC0415
    from moto.dynamodb.models.dynamo_type import DynamoType  # noqa: PLC0415
    from moto.dynamodb.models.table import Table  # noqa: PLC0415

    if getattr(DynamoDBBackend, "_psap_light_backups", False):
        return
    apply = DynamoDBBackend.transact_write_items

    def transact_write_items(self: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> None:
        touched: dict[str, list[tuple[Any, Any]]] = {}
        for entry in transact_items:
            _, operation = next(iter(entry.items()))
            table = self.tables.get(operation.get("TableName", ""))
            key = operation.get("Key") or operation.get("Item") or {}
            if table is None or table.hash_key_attr not in key:
                continue
            range_value = (
                DynamoType(key[table.range_key_attr])
                if table.range_key_attr and table.range_key_attr in key
                else None
            )
            touched.setdefault(table.name, []).append(
                (DynamoType(key[table.hash_key_attr]), range_value)
            )

        def back_up(value: Any, memo: Any = None) -> Any:
            if not isinstance(value, Table):
                return copy.deepcopy(value, memo)
            backup = copy.copy(value)
            backup.items = copy.copy(value.items)  # the same defaultdict type
            if value.has_range_key:
                for hash_value in list(value.items):
                    backup.items[hash_value] = dict(value.items[hash_value])
            for hash_value, range_value in touched.get(value.name, []):
                partition = value.items.get(hash_value)
                if value.has_range_key and partition and range_value in partition:
                    backup.items[hash_value][range_value] = copy.deepcopy(partition[range_value])
                elif not value.has_range_key and partition is not None:
                    backup.items[hash_value] = copy.deepcopy(partition)
            return backup

        shim = type("TransactionBackup", (), {"deepcopy": staticmethod(back_up), "copy": copy.copy})
        dynamodb_models.copy = shim  # type: ignore[attr-defined,assignment]
        try:
            apply(self, transact_items)
        finally:
            dynamodb_models.copy = copy  # type: ignore[attr-defined]

    DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]
    DynamoDBBackend._psap_light_backups = True  # type: ignore[attr-defined]
