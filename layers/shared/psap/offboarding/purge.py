"""Deleting what an offboarding archived: one recorded target (a partition, an item, the
objects under a prefix, a connector's secret) at a time."""

from collections.abc import Mapping
from typing import Any

from psap.storage.aws_errors import translated
from psap.storage.dynamodb import dynamodb
from psap.storage.queries import partition_request, query_pages
from psap.storage.s3 import s3
from psap.webhooks.secrets import secrets_manager


def purge_target(target: Mapping[str, Any]) -> int:
    """Deletes one recorded target; the number of items, objects or secrets deleted."""
    if "secret" in target:
        try:
            with translated("connector secret"):
                secrets_manager().delete_secret(
                    SecretId=target["secret"], ForceDeleteWithoutRecovery=True
                )
        except Exception as error:
            if "ResourceNotFound" in type(error.__cause__ or error).__name__ + str(error):
                return 0
            raise
        return 1
    if "bucket" in target:
        return _purge_objects(str(target["bucket"]), str(target["prefix"]))
    table = str(target["table"])
    if "sk" in target:
        with translated("delete item"):
            removed = dynamodb().delete_item(
                TableName=table,
                Key={"pk": {"S": target["pk"]}, "sk": {"S": target["sk"]}},
                ReturnValues="ALL_OLD",
            )
        return 1 if removed.get("Attributes") else 0
    deleted = 0
    request = {**partition_request(table, str(target["pk"])), "ProjectionExpression": "pk, sk"}
    for page in query_pages(request, f"partition {target['pk']}"):
        for first in range(0, len(page), 25):
            batch = [{"DeleteRequest": {"Key": key}} for key in page[first : first + 25]]
            pending: dict[str, Any] = {table: batch}
            while pending:
                with translated("batch delete"):
                    answer = dynamodb().batch_write_item(RequestItems=pending)
                pending = dict(answer.get("UnprocessedItems") or {})
            deleted += len(batch)
    return deleted


def _purge_objects(bucket: str, prefix: str) -> int:
    deleted = 0
    with translated(f"objects under {prefix}"):
        pages = s3().get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix=prefix)
        for page in pages:
            versions: list[Any] = [
                {"Key": found["Key"], "VersionId": found["VersionId"]}
                for found in [*page.get("Versions", []), *page.get("DeleteMarkers", [])]
            ]
            if versions:
                s3().delete_objects(Bucket=bucket, Delete={"Objects": versions, "Quiet": True})
                deleted += sum(1 for found in page.get("Versions", []))
    return deleted
