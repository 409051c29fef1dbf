"""The embedded AWS gets every table, queue and bucket of the template, as declared."""

import json

from local.aws import _without_tls_only, dynamodb_client, s3_client, sqs_client


def test_tables_are_created_with_keys_indexes_stream_and_ttl(deployed, moto_endpoint):
    dynamodb = dynamodb_client(moto_endpoint)
    table = deployed.tables["EntryTable"]
    # When the table is described in the embedded AWS
    description = dynamodb.describe_table(TableName=table.name)["Table"]
    # Then it has the template's keys, indexes, billing mode and stream
    assert description["KeySchema"] == table.properties["KeySchema"]
    assert [index["IndexName"] for index in description["GlobalSecondaryIndexes"]] == ["byStatus"]
    assert [index["IndexName"] for index in description["LocalSecondaryIndexes"]] == ["byCreatedAt"]
    assert description["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert description["StreamSpecification"] == {
        "StreamEnabled": True,
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    }
    ttl = dynamodb.describe_time_to_live(TableName=table.name)["TimeToLiveDescription"]
    assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expiresAt"}


def test_a_named_provisioned_table_keeps_its_name_and_throughput(deployed, moto_endpoint):
    table = deployed.tables["NamedTable"]
    description = dynamodb_client(moto_endpoint).describe_table(TableName=table.name)["Table"]
    assert table.name.endswith("-named")
    assert description["ProvisionedThroughput"]["ReadCapacityUnits"] == 1


def test_queues_exist_at_the_urls_the_template_resolves_to(deployed, moto_endpoint):
    sqs = sqs_client(moto_endpoint)
    for queue in deployed.queues.values():
        # Then !Ref Queue (the URL functions get in their environment) is the real URL
        assert sqs.get_queue_url(QueueName=queue.name)["QueueUrl"] == queue.url


def test_queue_attributes_and_redrive_policy_are_applied(deployed, moto_endpoint):
    sqs = sqs_client(moto_endpoint)
    retry = deployed.queues["RetryQueue"]
    attributes = sqs.get_queue_attributes(QueueUrl=retry.url, AttributeNames=["All"])["Attributes"]
    assert attributes["VisibilityTimeout"] == "0"
    assert json.loads(attributes["RedrivePolicy"]) == {
        "deadLetterTargetArn": deployed.queues["RetryDeadLetterQueue"].arn,
        "maxReceiveCount": 2,
    }
    order = deployed.queues["OrderQueue"]
    fifo = sqs.get_queue_attributes(QueueUrl=order.url, AttributeNames=["All"])["Attributes"]
    assert fifo["FifoQueue"] == "true"
    assert fifo["ContentBasedDeduplication"] == "true"


def test_buckets_are_created(deployed, moto_endpoint):
    names = {bucket["Name"] for bucket in s3_client(moto_endpoint).list_buckets()["Buckets"]}
    assert deployed.buckets["UploadBucket"].name in names


def test_a_bucket_policy_keeps_all_but_its_tls_only_statements_on_the_plain_http_stack() -> None:
    # moto evaluates bucket policies, and the embedded AWS is plain HTTP: the template's
    # TLS-only Deny would refuse every request, so that statement alone stays out.
    tls_only = {
        "Effect": "Deny",
        "Principal": "*",
        "Action": "s3:*",
        "Resource": "*",
        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
    }
    other = {"Effect": "Deny", "Principal": "*", "Action": "s3:DeleteBucket", "Resource": "*"}
    assert _without_tls_only({"Version": "2012-10-17", "Statement": [tls_only]}) is None
    kept = _without_tls_only({"Version": "2012-10-17", "Statement": [tls_only, other]})
    assert kept == {"Version": "2012-10-17", "Statement": [other]}
