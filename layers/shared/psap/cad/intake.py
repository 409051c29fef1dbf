"""POST /cad/v1/incidents: validate, check the tenant, store the raw submission, enqueue, 202.

Nothing is processed on the request path: the submission is stored as received (so nothing a
CAD sent is lost, whatever happens after), a message goes to the intake queue, and the CAD
gets `{"receiptId", "status": "ACCEPTED"}`. The worker maps it later and answers with a
webhook update (`incident.accepted` or `incident.rejected`) naming the same receiptId.

Idempotency per (tenant, source, id): a replay with the same body (compared as canonical
JSON, so key order and whitespace do not matter) gets the first answer again; the same id
with a different body is 422; a duplicate arriving while the first is still being stored
is 409. Checks run in this order: media type (415), size (413), JSON and envelope (400),
tenant cross-check (403), incident document (400), idempotency (422/409).
"""

import hashlib
import json
import uuid
from typing import Literal

from psap import clock
from psap.cad import store
from psap.cad.envelope import parse_document, parse_envelope, parse_incident
from psap.cad.store import SubmissionKey, SubmissionState
from psap.config import cad_intake_queue_url
from psap.errors import (
    IdempotencyKeyReused,
    PayloadTooLarge,
    PermissionDenied,
    RequestInFlight,
    StoreUnavailable,
    UnsupportedMediaType,
)
from psap.limits import CAD_BODY_LIMIT
from psap.models import WireModel
from psap.observability import logger
from psap.storage.sqs import send_message

MEDIA_TYPES = frozenset({"application/json", "application/cloudevents+json"})


class IntakeReceipt(WireModel):
    receipt_id: str
    status: Literal["ACCEPTED"] = "ACCEPTED"


class IntakeMessage(WireModel):
    """What the intake queue carries to the worker."""

    tenant_id: int
    source: str
    event_id: str
    receipt_id: str

    def key(self) -> SubmissionKey:
        return SubmissionKey(self.tenant_id, self.source, self.event_id)


def check_media_type(content_type: str | None) -> None:
    media_type, _, parameters = (content_type or "").partition(";")
    if media_type.strip().lower() not in MEDIA_TYPES:
        raise UnsupportedMediaType(
            "Content-Type must be application/json or application/cloudevents+json"
        )
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() not in (
            "utf-8",
            "utf8",
        ):
            raise UnsupportedMediaType("The body must be UTF-8 JSON")


def canonical_hash(document: object) -> str:
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def accept_submission(tenant_id: int, content_type: str | None, body: bytes) -> IntakeReceipt:
    check_media_type(content_type)
    if len(body) > CAD_BODY_LIMIT:
        raise PayloadTooLarge(f"The body is larger than {CAD_BODY_LIMIT // 1024} KB")
    document = parse_document(body)
    envelope, claimed_tenant = parse_envelope(document)
    if claimed_tenant is not None and claimed_tenant != tenant_id:
        logger.warning("envelope names another tenant", extra={"claimed_tenant": claimed_tenant})
        raise PermissionDenied("Access denied — the envelope's tenantId is not the credential's")
    parse_incident(envelope)
    key = SubmissionKey(tenant_id, envelope.source, envelope.id)
    payload_hash = canonical_hash(document)
    receipt_id = f"rcpt-{uuid.uuid4().hex}"
    record = store.begin(key, receipt_id, payload_hash, raw=body, now=clock.utc_now())
    if record is None:
        return _answer_again(key, payload_hash)
    message = IntakeMessage(
        tenant_id=tenant_id, source=envelope.source, event_id=envelope.id, receipt_id=receipt_id
    )
    try:
        send_message(cad_intake_queue_url(), message.model_dump(mode="json", by_alias=True))
    except StoreUnavailable:
        store.abandon(key, receipt_id)
        raise
    store.mark_accepted(key, receipt_id)
    logger.info(
        "submission accepted",
        extra={"receipt_id": receipt_id, "cad_event_id": envelope.id, "type": envelope.type},
    )
    return IntakeReceipt(receipt_id=receipt_id)


def _answer_again(key: SubmissionKey, payload_hash: str) -> IntakeReceipt:
    existing = store.get(key)
    if existing is None:
        # Expired between our write and this read: the CAD's retry will start afresh.
        raise RequestInFlight("The submission is being processed; retry shortly")
    if existing.payload_hash != payload_hash:
        raise IdempotencyKeyReused(
            f"Submission id {key.event_id!r} from this source was already used with another body"
        )
    if existing.state is SubmissionState.IN_FLIGHT:
        raise RequestInFlight(f"Submission {key.event_id!r} is still being stored; retry shortly")
    logger.info("submission replayed", extra={"receipt_id": existing.receipt_id})
    return IntakeReceipt(receipt_id=existing.receipt_id)
