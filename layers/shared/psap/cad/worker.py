"""The intake worker: a stored submission -> incident and event records -> webhook updates.

For each queue message it reads the raw submission back, maps it (psap.cad.mapping), writes
the incident with the tenant-data store's upsert-by-CAD-number (its ordering guard keeps an
older update from overwriting newer data) and the call's event linked to it, records the
outcome on the submission, and emits `incident.accepted` (with the service ids) or
`incident.rejected` (with reasons) to the tenant's connectors. Running twice for the same
submission is harmless: a processed submission re-emits its stored outcome, and delivery
ids are derived from the receipt, so the CAD never gets two deliveries for one answer.
"""

from enum import StrEnum
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit

from psap import clock
from psap.cad import store
from psap.cad.envelope import CadEventType, Submission, parse_submission
from psap.cad.intake import IntakeMessage
from psap.cad.mapping import carry_forward, map_submission
from psap.cad.store import SubmissionRecord, SubmissionState
from psap.config import cad_intake_max_receives
from psap.errors import DomainError, StoreUnavailable
from psap.events import store as events
from psap.faults import fault_point
from psap.incidents import store as incidents
from psap.observability import logger, metrics
from psap.storage.numbered import StoredRecord
from psap.storage.ordering import SourceOrder, UpsertOutcome
from psap.webhooks.catalogue import (
    IncidentAccepted,
    IncidentOutcome,
    IncidentRejected,
    RejectionReason,
    UpdateKind,
    WebhookUpdate,
)
from psap.webhooks.deliveries import emit_update


def max_receives() -> int:
    """The intake queue's maxReceiveCount (template.yaml): the last try tells the CAD."""
    return cad_intake_max_receives()


type Answer = IncidentAccepted | IncidentRejected


class WorkerResult(StrEnum):
    PROCESSED = "PROCESSED"
    REJECTED = "REJECTED"
    GONE = "GONE"  # no such submission (expired, or a message for another receipt)


def process_submission(message: IntakeMessage, receive_count: int = 1) -> WorkerResult:
    record = store.get(message.key())
    if record is None or record.receipt_id != message.receipt_id:
        logger.warning("no submission for this message", extra={"receipt_id": message.receipt_id})
        return WorkerResult.GONE
    if record.state in (SubmissionState.PROCESSED, SubmissionState.REJECTED):
        # Processed by a run that may have died before emitting: emit the stored answer.
        _emit(record, _stored_answer(record))
        return WorkerResult(record.state.value)
    try:
        state, answer = _apply(record)
    except Exception as error:
        if receive_count >= max_receives():
            _tell_cad_of_failure(record, error)
        raise
    store.mark_done(
        record.key, record.receipt_id, state, outcome=answer.model_dump(mode="json", by_alias=True)
    )
    fault_point("cad.after_outcome_recorded")
    _emit(record, answer)
    logger.info(
        "submission processed", extra={"receipt_id": record.receipt_id, "state": state.value}
    )
    metrics.add_metric(
        name="CadSubmissionsProcessed" if state is SubmissionState.PROCESSED else "CadRejected",
        unit=MetricUnit.Count,
        value=1,
    )
    return WorkerResult(state.value)


def _apply(record: SubmissionRecord) -> tuple[SubmissionState, Answer]:
    try:
        submission = parse_submission(record.raw)
    except DomainError as error:
        return SubmissionState.REJECTED, IncidentRejected(
            **_reference(record, None),
            reasons=[RejectionReason(code="INVALID_SUBMISSION", message=error.info)],
        )
    try:
        return SubmissionState.PROCESSED, _write_records(record, submission)
    except StoreUnavailable:
        raise
    except DomainError as error:
        return SubmissionState.REJECTED, IncidentRejected(
            **_reference(record, submission),
            reasons=[RejectionReason(code="NOT_APPLICABLE", message=error.info)],
        )


def _write_records(record: SubmissionRecord, submission: Submission) -> IncidentAccepted:
    tenant_id = record.key.tenant_id
    now = clock.utc_now()
    mapped = map_submission(submission)
    existing_id = incidents.find_incident_id(tenant_id, submission.incident_number)
    before = (
        incidents.read_incident_record(tenant_id, existing_id) if existing_id is not None else None
    )
    stored = incidents.incident_from_record(before) if before is not None else None
    incident = carry_forward(mapped.incident, stored)
    # An earlier try's note is kept: what it saw is what its write (if made) was judged on.
    earlier = record.prior
    if earlier is None:
        _note_prior(record, before)
    fault_point("cad.before_incident_write")
    result = incidents.upsert_incident(tenant_id, incident, mapped.order, now=now)
    fault_point("cad.after_incident_write")
    event_id: int | None = None
    if mapped.event is not None:
        event_id = events.upsert_event(
            tenant_id, mapped.event, mapped.order, now=now, incident_id=result.id
        ).id
    elif stored is not None and stored.event is not None:
        event_id = stored.event.id
    written = result.outcome
    if written is UpsertOutcome.STALE and earlier is not None:
        written = _earlier_write(earlier, mapped.order)
    if written is UpsertOutcome.STALE:
        outcome = IncidentOutcome.STALE_IGNORED
    elif submission.envelope.type is CadEventType.CLOSED:
        outcome = IncidentOutcome.CLOSED
    elif written is UpsertOutcome.CREATED:
        outcome = IncidentOutcome.CREATED
    else:
        outcome = IncidentOutcome.UPDATED
    return IncidentAccepted(
        **_reference(record, submission), incident_id=result.id, event_id=event_id, outcome=outcome
    )


def _note_prior(record: SubmissionRecord, before: StoredRecord | None) -> None:
    """What the incident held before this submission's first write, kept on the submission:
    a try that dies after the write leaves the incident already holding this update, and the
    try after it must still answer CREATED or UPDATED, not STALE_IGNORED."""
    prior: dict[str, Any] = {"existed": before is not None}
    if before is not None and before.source_order is not None:
        prior["order"] = before.source_order
    store.note_prior(record.key, record.receipt_id, prior)


def _earlier_write(prior: dict[str, Any], order: SourceOrder) -> UpsertOutcome:
    """What an earlier try's write of this submission did, judged on what it saw before."""
    before = prior.get("order")
    if before is not None and str(before) >= order.key():
        return UpsertOutcome.STALE
    return UpsertOutcome.UPDATED if prior.get("existed") else UpsertOutcome.CREATED


def _reference(record: SubmissionRecord, submission: Submission | None) -> dict[str, Any]:
    return {
        "receipt_id": record.receipt_id,
        "cad_event_id": record.key.event_id,
        "cad_source": record.key.source,
        "cad_event_type": submission.envelope.type.value if submission is not None else "",
        "cad_incident_number": submission.incident_number if submission is not None else None,
    }


def _stored_answer(record: SubmissionRecord) -> Answer:
    if record.state is SubmissionState.PROCESSED:
        return IncidentAccepted.model_validate(record.outcome or {})
    return IncidentRejected.model_validate(record.outcome or {})


def _emit(record: SubmissionRecord, answer: Answer, seed: str | None = None) -> None:
    kind = (
        UpdateKind.INCIDENT_ACCEPTED
        if isinstance(answer, IncidentAccepted)
        else UpdateKind.INCIDENT_REJECTED
    )
    emit_update(
        record.key.tenant_id,
        WebhookUpdate(kind, answer, subject=answer.cad_incident_number),
        seed=seed or record.receipt_id,
        now=clock.utc_now(),
    )


def _tell_cad_of_failure(record: SubmissionRecord, error: Exception) -> None:
    """The last try failed too: the message goes to the DLQ for an operator, and the CAD is
    told now rather than never. Best effort: the store may be what is failing."""
    logger.error(
        "submission failed on its last try",
        extra={"receipt_id": record.receipt_id, "error": type(error).__name__},
    )
    answer = IncidentRejected(
        **_reference(record, None),
        reasons=[
            RejectionReason(
                code="PROCESSING_FAILED",
                message="The submission could not be processed yet; an operator will retry it",
            )
        ],
    )
    try:
        _emit(record, answer, seed=f"{record.receipt_id}#failed")
    except Exception:
        logger.exception("could not tell the CAD about the failure")
