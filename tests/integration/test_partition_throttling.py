"""The service's own writes through a throttled DynamoDB partition key (local/partition_capacity.py
on the tests' moto): botocore's standard retry mode retries DynamoDB's
ProvisionedThroughputExceededException, and a retried write is neither lost nor doubled."""

import pytest

from local.partition_capacity import PartitionMeter
from tests.support.knowledge import TENANT, KnowledgeApi, card_payload, stored_items

CREATES = 5


pytestmark = pytest.mark.harness(api=KnowledgeApi)


def test_knowledge_creates_through_a_throttled_listing_key_are_each_stored_once(
    api: KnowledgeApi, dynamodb_partition_capacity: PartitionMeter
) -> None:
    # Given partition capacity at SCALE 250: 4 WCU per key and second, which one create's
    # transaction takes on the tenant's listing keys (2 items, transactional)
    meter = dynamodb_partition_capacity
    first = api.created(card_payload(name="First", external_id="first", provider="P"))
    meter.enforce(250)
    # When the tenant creates entries one after another, faster than that
    created = [
        api.created(card_payload(name=f"Card {n}", external_id=f"card-{n}", provider="P"))
        for n in range(CREATES)
    ]
    # Then DynamoDB refused some of the writes, and the SDK's retries got every create through
    report = meter.report()
    assert report["throttled"] > 0, report
    throttled = {
        pattern
        for patterns in report["tables"].values()
        for pattern, entry in patterns.items()
        if entry["throttled"]
    }
    assert "T#{id}#KL#ALL" in throttled
    # And each entry is stored once, at version 1, under its own id, and listed once
    ids = [first["id"]] + [entry["id"] for entry in created]
    assert len(set(ids)) == CREATES + 1
    assert all(entry["version"] == 1 for entry in created)
    stored_entries = {
        item["pk"]["S"] for item in stored_items() if item["pk"]["S"].startswith(f"T#{TENANT}#K#")
    }
    assert stored_entries == {f"T#{TENANT}#K#{n}" for n in ids}
    listed = api.listing()
    assert sorted(entry["id"] for entry in listed["items"]) == sorted(ids)
