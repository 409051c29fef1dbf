"""Calls the knowledge functions' handlers in-process, as API Gateway and SQS would, for the
knowledge integration tests (moto tables, queue and bucket from template.yaml)."""

from typing import Any

from psap.config import knowledge_content_bucket, knowledge_digest_queue_url, knowledge_table
from psap.storage.dynamodb import dynamodb
from psap.storage.s3 import s3
from psap.storage.sqs import sqs
from tests.support.harness import HandlerHarness, json_body, with_query

TENANT = 7
OTHER_TENANT = 8
MANAGE = "MANAGE_KNOWLEDGE"
VIEW = "VIEW_KNOWLEDGE"

ALL_API = {
    "questionList": True,
    "spokenInstructions": True,
    "cadActions": True,
    "smsMessages": True,
    "dispatchTriggers": True,
    "links": True,
    "media": True,
}


def card_payload(
    name: str = "Chest Pain",
    external_id: str | None = "gc-chest-pain",
    provider: str = "NENA",
    **fields: Any,
) -> dict[str, Any]:
    """A create payload with one item in most sections; `fields` override or add."""
    payload: dict[str, Any] = {
        "name": name,
        "provider": provider,
        "knowledgeType": "GUIDE_CARD",
        "apiControl": dict(ALL_API),
        "questionList": [
            {
                "questionText": "Is the patient breathing?",
                "relatedQuestions": [
                    {
                        "displayCriteria": "answer == 'no'",
                        "questions": [{"questionText": "Is the patient blue?"}],
                    }
                ],
            }
        ],
        "spokenInstructions": [{"instructionText": "Stay on the line."}],
        "actions": {
            "cadActions": [{"actionType": "SET_PRIORITY"}],
            "smsMessages": [{"messageText": "Help is on the way."}],
            "dispatchTriggers": [{"condition": "not breathing"}],
        },
        "media": [{"mediaType": "IMAGE", "url": "https://cdn.example.org/a.png"}],
    }
    if external_id is not None:
        payload["externalId"] = external_id
    payload.update(fields)
    return payload


class KnowledgeApi(HandlerHarness):
    """The knowledge functions, as API Gateway (after the authorizer) and SQS call them."""

    def call(
        self,
        name: str,
        path: dict[str, str] | None = None,
        body: Any = None,
        *,
        query: dict[str, str] | None = None,
        tenant: int = TENANT,
        permissions: str = MANAGE,
        raw_body: str | None = None,
    ) -> tuple[int, Any]:
        event = self.proxy_event(
            name,
            tenant=tenant,
            permissions=permissions,
            path=path,
            body=json_body(body, raw_body),
        )
        with_query(event, query)
        status, parsed, _ = self.answer(name, event)
        return status, parsed

    # ------------------------------------------------------------ operations

    def create(self, payload: dict[str, Any], **options: Any) -> tuple[int, Any]:
        return self.call("knowledge_create", body=payload, **options)

    def created(self, payload: dict[str, Any], **options: Any) -> dict[str, Any]:
        status, body = self.create(payload, **options)
        assert status == 201, body
        result: dict[str, Any] = body
        return result

    def append(self, knowledge_id: int, payload: dict[str, Any], **options: Any) -> tuple[int, Any]:
        return self.call(
            "knowledge_append", path={"knowledgeId": str(knowledge_id)}, body=payload, **options
        )

    def appended(self, knowledge_id: int, payload: dict[str, Any], **options: Any) -> Any:
        status, body = self.append(knowledge_id, payload, **options)
        assert status == 201, body
        return body

    def get(self, knowledge_id: int, version: int | None = None, **options: Any) -> tuple[int, Any]:
        query = {"version": str(version)} if version is not None else None
        options.setdefault("permissions", VIEW)
        return self.call(
            "knowledge_get", path={"knowledgeId": str(knowledge_id)}, query=query, **options
        )

    def read(self, knowledge_id: int, version: int | None = None, **options: Any) -> Any:
        status, body = self.get(knowledge_id, version, **options)
        assert status == 200, body
        return body

    def publish(self, knowledge_id: int, version: int, **options: Any) -> tuple[int, Any]:
        return self.call(
            "knowledge_publish",
            path={"knowledgeId": str(knowledge_id), "version": str(version)},
            **options,
        )

    def unpublish(self, knowledge_id: int, **options: Any) -> tuple[int, Any]:
        return self.call("knowledge_unpublish", path={"knowledgeId": str(knowledge_id)}, **options)

    def delete(self, knowledge_id: int, **options: Any) -> tuple[int, Any]:
        return self.call("knowledge_delete", path={"knowledgeId": str(knowledge_id)}, **options)

    def card(self, knowledge_id: int, **options: Any) -> tuple[int, Any]:
        options.setdefault("permissions", VIEW)
        return self.call("knowledge_card", path={"knowledgeId": str(knowledge_id)}, **options)

    def listing(self, tenant: int = TENANT, **query: str) -> Any:
        status, body = self.call("knowledge_list", query=query or None, tenant=tenant)
        assert status == 200, body
        return body

    # ------------------------------------------------------------ the digest queue

    def pending_digests(self) -> list[dict[str, Any]]:
        """Receives what the digest queue holds (the messages become invisible)."""
        messages: list[dict[str, Any]] = []
        while True:
            answer = sqs().receive_message(
                QueueUrl=knowledge_digest_queue_url(),
                MaxNumberOfMessages=10,
                MessageSystemAttributeNames=["All"],
            )
            batch = answer.get("Messages", [])
            if not batch:
                return messages
            messages.extend(dict(message) for message in batch)

    def run_digests(self) -> dict[str, Any]:
        """What the event source mapping does: the worker gets the queued messages."""
        messages = self.pending_digests()
        records = [
            {
                "messageId": message["MessageId"],
                "receiptHandle": message["ReceiptHandle"],
                "body": message["Body"],
                "attributes": message.get("Attributes", {}),
                "messageAttributes": {},
                "md5OfBody": message["MD5OfBody"],
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:digest",
                "awsRegion": "us-east-1",
            }
            for message in messages
        ]
        return self.digest({"Records": records})

    def digest(self, event: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = self.call_handler("knowledge_digest", event)
        return result


def stored_items() -> list[dict[str, Any]]:
    """Every item of the knowledge table (tests only: a Scan), to see what a call wrote."""
    items: list[dict[str, Any]] = []
    request: dict[str, Any] = {"TableName": knowledge_table()}
    while True:
        answer = dynamodb().scan(**request)
        items.extend(answer.get("Items", []))
        if "LastEvaluatedKey" not in answer:
            return items
        request["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


def stored_objects() -> list[str]:
    answer = s3().list_objects_v2(Bucket=knowledge_content_bucket())
    return [found["Key"] for found in answer.get("Contents", [])]


def writes_of(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The keys of the items, minus the id sequences (drawn before a write is refused)."""
    return sorted(
        (item["pk"]["S"], item["sk"]["S"])
        for item in items
        if not item["pk"]["S"].startswith("SEQ#")
    )
