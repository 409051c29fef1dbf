"""Demo tenant data: users, phase enrollments with task lists, QA evaluations, incidents and
events for a realistic emergency-communications center, generated from a seed.

The same seed gives the same data (no clock, no global random state), so tests and the
benchmark can rely on it. The local stack loads it into each demo tenant (`seed_tenant_data`,
called from local.demo.seed) with the stores' bulk loaders; `python -m local.demo_tenant_data
--out DIR` writes it as the JSON Lines files the admin `import` command reads. The
vocabularies it draws from are local/demo_data/tenant_vocabulary.jsonl.

    psap-demo-data --out /tmp/demo --users 50 --evaluations 200
    psap-admin import --tenant 1 /tmp/demo/*.jsonl
"""

import argparse
import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from local.demo_data import read_records
from psap.clock import format_timestamp
from psap.events.models import Event
from psap.events.store import bulk_load_events
from psap.incidents.models import Incident
from psap.incidents.store import bulk_load_incidents
from psap.qa.models import EvaluationStatus, QaEvaluation
from psap.qa.store import bulk_load_evaluations
from psap.training.models import EnrollmentStatus, PhaseEnrollment, PhaseEnrollmentSummary
from psap.training.store import bulk_load_enrollments
from psap.users.models import User
from psap.users.store import bulk_load_users

# The demo's "now": fixed, so that the data is the same on every run.
BASE = datetime(2026, 1, 5, 14, 0, tzinfo=UTC)

# The vocabularies the generator draws from (names, phases, task lists, call types, ...).
_VOCABULARY: dict[str, list[Any]] = {
    record["table"]: record["rows"] for record in read_records("tenant_vocabulary")
}
FIRST_NAMES: tuple[str, ...] = tuple(_VOCABULARY["firstNames"])
LAST_NAMES: tuple[str, ...] = tuple(_VOCABULARY["lastNames"])
# (phase id, name, minimum training hours)
PHASES: tuple[tuple[int, str, int], ...] = tuple(
    (int(phase_id), str(name), int(hours)) for phase_id, name, hours in _VOCABULARY["phases"]
)
# (group name, its task names)
TASKS: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    (str(group), tuple(tasks)) for group, tasks in _VOCABULARY["tasks"]
)
COLUMNS: tuple[str, ...] = tuple(_VOCABULARY["columns"])
# (template id, name, color, identifier)
EVALUATION_TEMPLATES: tuple[tuple[int, str, str, str], ...] = tuple(
    (int(template_id), str(name), str(color), str(identifier))
    for template_id, name, color, identifier in _VOCABULARY["evaluationTemplates"]
)
# (criterion description, skill)
CRITERIA: tuple[tuple[str, str], ...] = tuple(
    (str(description), str(skill)) for description, skill in _VOCABULARY["criteria"]
)
# (knowledge id, guide card name)
GUIDE_CARDS: tuple[tuple[int, str], ...] = tuple(
    (int(card_id), str(name)) for card_id, name in _VOCABULARY["guideCards"]
)
# (kind, incident type, agency type)
INCIDENT_TYPES: tuple[tuple[str, str, str], ...] = tuple(
    (str(kind), str(incident_type), str(agency))
    for kind, incident_type, agency in _VOCABULARY["incidentTypes"]
)
STREETS: tuple[str, ...] = tuple(_VOCABULARY["streets"])
CALLER_LINES: tuple[str, ...] = tuple(_VOCABULARY["callerLines"])
TAKER_LINES: tuple[str, ...] = tuple(_VOCABULARY["takerLines"])


@dataclass(frozen=True)
class TenantDataset:
    users: list[User]
    enrollments: list[PhaseEnrollment]
    evaluations: list[QaEvaluation]
    incidents: list[Incident]
    events: list[Event]

    def records(self) -> dict[str, Sequence[Any]]:
        """Per kind, in import order (users before what names them)."""
        return {
            "users": self.users,
            "enrollments": self.enrollments,
            "evaluations": self.evaluations,
            "incidents": self.incidents,
            "events": self.events,
        }


def _ts(moment: datetime) -> str:
    return format_timestamp(moment)


class _Generator:
    def __init__(self, seed: int, tenant_id: int, id_base: int, *, domain: str) -> None:
        self.rng = random.Random(seed)  # noqa: S311 - demo data, not security
        self.tenant_id = tenant_id
        self.base = id_base
        self.domain = domain

    # ------------------------------------------------------------ users

    def users(self, count: int) -> list[dict[str, Any]]:
        rng = self.rng
        users = []
        for n in range(count):
            first = FIRST_NAMES[n % len(FIRST_NAMES)]
            last = LAST_NAMES[(n * 7 + n // len(LAST_NAMES)) % len(LAST_NAMES)]
            handle = f"{first}.{last}".lower().replace(" ", "").replace("'", "")
            email = f"{handle}{n}@{self.domain}"
            system = n == count - 1
            users.append(
                {
                    "id": self.base + n + 1,
                    "tenantId": self.tenant_id,
                    "email": email,
                    "firstName": "CAD" if system else first,
                    "lastName": "Integration" if system else last,
                    "notificationEmail": None if n % 4 else f"alerts+{handle}@{self.domain}",
                    "loginEnabled": not system and n % 9 != 8,
                    "idpSub": f"auth0|{rng.getrandbits(64):016x}",
                    "personnelId": f"P{4000 + n:05d}",
                    "roleId": 1 if n < 2 else (2 if n < 8 else 3),
                    "isSuperAdmin": n == 0,
                    "isSystemUser": system,
                    "mfaEnabled": n % 3 != 0,
                    "lastLoginAt": None
                    if system
                    else _ts(BASE - timedelta(hours=rng.randint(1, 900))),
                    "isSupervisor": 2 <= n < 8 or n == 0,
                    "isTemplatePublishingAllowed": n < 4,
                    "vlrIdentifier": None if n % 5 else f"VLR-{n:04d}",
                    "passwordExpiresAt": _ts(BASE + timedelta(days=rng.randint(-10, 90))),
                    "isPasswordExpired": n % 11 == 10,
                    "isSupportUser": n == 1,
                    "investmentTrainingPipeline": n % 6 == 0,
                }
            )
        return users

    # ------------------------------------------------------------ training

    def _template(self, phase_index: int) -> dict[str, Any]:
        base = self.base * 10 + phase_index * 100
        groups, items = [], []
        order = 0
        for g, (group_name, tasks) in enumerate(TASKS):
            group_id = base + g + 1
            groups.append(
                {
                    "id": group_id,
                    "identifier": f"G{g + 1}",
                    "name": group_name,
                    "orderIndex": g,
                    "parentId": None,
                }
            )
            for task in tasks:
                order += 1
                items.append(
                    {
                        "id": base + 10 + order,
                        "identifier": f"T{order:02d}",
                        "name": task,
                        "orderIndex": order,
                        "parentId": group_id,
                    }
                )
        return {
            "id": base,
            "active": True,
            "version": 3,
            "columnCount": len(COLUMNS),
            "trainingOfficerOnly": False,
            "name": f"{PHASES[phase_index][1]} Task List",
            "hasObservations": phase_index % 2 == 0,
            "items": items,
            "groups": groups,
            "columnLabels": [
                {"id": base + 90 + c, "columnPosition": c + 1, "columnName": name}
                for c, name in enumerate(COLUMNS)
            ],
        }

    def enrollments(
        self, users: list[dict[str, Any]], trainees: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        rng = self.rng
        officers = [user for user in users if user["roleId"] == 2] or users[:1]
        statuses = list(EnrollmentStatus)
        enrollments: list[dict[str, Any]] = []
        next_id = self.base + 1001
        next_task_list = self.base + 2001
        next_item = self.base * 100 + 1
        for t, trainee in enumerate(trainees):
            officer = officers[t % len(officers)]
            phase_count = 1 + t % 3
            start = (BASE - timedelta(days=40 * phase_count + rng.randint(0, 30))).date()
            in_progress_id = None
            for p in range(phase_count):
                phase_id, phase_name, min_hours = PHASES[(t + p) % len(PHASES)]
                # Every state appears: the first trainees walk through all six.
                if len(enrollments) < len(statuses):
                    status = statuses[len(enrollments)]
                elif p < phase_count - 1:
                    status = EnrollmentStatus.COMPLETE
                else:
                    status = rng.choice(statuses)
                enrollment_id = next_id
                next_id += 1
                phase_start = start + timedelta(days=45 * p)
                planned_end = phase_start + timedelta(days=42)
                done = status in (EnrollmentStatus.COMPLETE, EnrollmentStatus.CANCELLED)
                summary = {
                    "id": enrollment_id,
                    "tenantId": self.tenant_id,
                    "phaseId": phase_id,
                    "phaseName": phase_name,
                    "user": trainee,
                    "primaryTrainingOfficer": officer,
                    "startDate": phase_start.isoformat(),
                    "originalPlannedEndDate": planned_end.isoformat(),
                    "projectedEndDate": (
                        planned_end + timedelta(days=rng.randint(0, 14))
                    ).isoformat(),
                    "actualEndDate": (planned_end + timedelta(days=3)).isoformat()
                    if done
                    else None,
                    "status": status.value,
                    "statusReason": "Left the agency"
                    if status is EnrollmentStatus.CANCELLED
                    else None,
                    "signoffId": enrollment_id + 50_000
                    if status in (EnrollmentStatus.WAITING_SIGNOFF, EnrollmentStatus.COMPLETE)
                    else None,
                }
                progress = {
                    EnrollmentStatus.SCHEDULED: 0,
                    EnrollmentStatus.IN_PROGRESS: 1,
                    EnrollmentStatus.SUBMITTED: 2,
                    EnrollmentStatus.WAITING_SIGNOFF: 3,
                    EnrollmentStatus.COMPLETE: 3,
                    EnrollmentStatus.CANCELLED: 1,
                }[status]
                task_list, next_item = self._task_list(
                    next_task_list,
                    next_item,
                    p,
                    trainee=trainee,
                    officer=officer,
                    summary=summary,
                    progress=progress,
                    phase_start=phase_start,
                )
                next_task_list += 1
                hours = min_hours * (0.2 + 0.3 * progress)
                if status is EnrollmentStatus.IN_PROGRESS:
                    in_progress_id = enrollment_id
                enrollments.append(
                    {
                        **summary,
                        "hasSignoffFlow": phase_id != 105,
                        "taskLists": [task_list],
                        "minTrainingHours": min_hours,
                        "hasIncompleteTrainingReports": progress < 3 and p % 2 == 0,
                        "hasIncompleteTaskLists": progress < 3,
                        "canStartSignoff": status is EnrollmentStatus.SUBMITTED,
                        "isProgressionDisabled": status is EnrollmentStatus.CANCELLED,
                        "existingInProgressEnrollmentId": in_progress_id
                        if status is EnrollmentStatus.SCHEDULED
                        else None,
                        "totalTrainingHours": round(hours, 1),
                        "signoffCreatedAt": _ts(BASE - timedelta(days=2, hours=p))
                        if summary["signoffId"]
                        else None,
                    }
                )
        return enrollments

    def _task_list(
        self,
        task_list_id: int,
        next_item: int,
        phase_index: int,
        *,
        trainee: dict[str, Any],
        officer: dict[str, Any],
        summary: dict[str, Any],
        progress: int,
        phase_start: date,
    ) -> tuple[dict[str, Any], int]:
        rng = self.rng
        template = self._template(phase_index % len(PHASES))
        started = datetime.combine(phase_start, datetime.min.time(), tzinfo=UTC)

        def person(user: dict[str, Any]) -> dict[str, Any]:
            fields = ("id", "firstName", "lastName", "email", "notificationEmail")
            return {name: user[name] for name in fields}

        items = []
        for entry in template["items"]:
            # Progress 0..3: how far this trainee has come, with some spread per item.
            level = max(0, min(3, progress + rng.choice((-1, 0, 0, 1)))) if progress else 0
            history = []
            for position in range(1, level + 1):
                checked = started + timedelta(days=7 * position, hours=rng.randint(8, 18))
                history.append(
                    {
                        "id": next_item * 10 + position,
                        "user": person(officer),
                        "positionType": "TRAINER",
                        "oldPosition": position - 1,
                        "newPosition": position,
                        "checkedAt": _ts(checked),
                        "createdAt": _ts(checked),
                        "updatedAt": _ts(checked + timedelta(minutes=5)),
                    }
                )
            items.append(
                {
                    "id": next_item,
                    "taskListTemplateVersionItem": entry,
                    "isComplete": level == 3,
                    "traineeColumnPosition": min(3, level + 1) if level else None,
                    "trainerColumnPosition": level or None,
                    "trainerId": officer["id"] if level else None,
                    "auditHistory": history,
                }
            )
            next_item += 1
        groups = []
        for group in template["groups"]:
            members = [
                item
                for item in items
                if item["taskListTemplateVersionItem"]["parentId"] == group["id"]
            ]
            groups.append(
                {
                    "id": group["id"] * 10 + summary["id"] % 10,
                    "taskListTemplateVersionItemGroup": group,
                    "isComplete": all(item["isComplete"] for item in members),
                }
            )
        status = {0: "NOT_STARTED", 3: "COMPLETE"}.get(progress, "IN_PROGRESS")
        task_list = {
            "id": task_list_id,
            "subject": person(trainee),
            "primaryTrainingOfficer": person(officer),
            "endDate": _ts(started + timedelta(days=42)),
            "startDate": _ts(started),
            "enrollmentDate": _ts(started - timedelta(days=3)),
            "status": status,
            "taskListTemplateVersion": template,
            "items": items,
            "groups": groups,
            # Deliberately wrong: the store computes the counters from the items.
            "totalItems": 0,
            "phaseNames": [summary["phaseName"]],
            "phaseEnrollments": [summary],
            "primaryPhaseEnrollmentId": summary["id"],
            "primaryPhaseId": summary["phaseId"],
            "primaryPhaseName": summary["phaseName"],
        }
        return task_list, next_item

    # ------------------------------------------------------------ incidents and events

    def incidents_and_events(
        self, count: int, call_takers: list[dict[str, Any]], officers: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        rng = self.rng
        incidents, events = [], []
        for n in range(count):
            incident_id = self.base + 5001 + n
            event_id = self.base + 6001 + n
            number = f"{BASE.year % 100}-{self.tenant_id:02d}{n + 1:05d}"
            event_number = f"EV-{BASE.year}-{self.tenant_id:02d}{n + 1:05d}"
            kind, incident_type, agency_type = INCIDENT_TYPES[n % len(INCIDENT_TYPES)]
            received = BASE - timedelta(days=n, minutes=rng.randint(0, 600))
            taker = call_takers[n % len(call_takers)]
            address = f"{rng.randint(100, 9999)} {rng.choice(STREETS)}"
            closed = received + timedelta(minutes=rng.randint(25, 140)) if n > 2 else None
            responders = []
            for r in range(1 + n % 3):
                dispatched = received + timedelta(seconds=60 + 30 * r)
                responders.append(
                    {
                        "personnelId": f"U{rng.randint(100, 999)}",
                        "personnelFirstName": rng.choice(FIRST_NAMES),
                        "personnelLastName": rng.choice(LAST_NAMES),
                        "unitName": f"{agency_type[0]}{rng.randint(1, 40)}",
                        "dispatchedBy": f"{taker['firstName']} {taker['lastName']}",
                        "dispatchedAt": _ts(dispatched),
                        "enrouteAt": _ts(dispatched + timedelta(seconds=45)),
                        "arrivedAt": _ts(dispatched + timedelta(minutes=rng.randint(4, 11))),
                        "clearedAt": _ts(closed) if closed else None,
                    }
                )
            incidents.append(
                {
                    "id": incident_id,
                    "number": number,
                    "sysId": f"{rng.getrandbits(128):032x}",
                    "caseNumber": f"C{BASE.year}-{n + 1:06d}" if kind == "LAW" else None,
                    "priority": f"P{1 + n % 4}",
                    "incidentType": incident_type,
                    "initialIncidentType": "UNKNOWN PROBLEM" if n % 7 == 0 else incident_type,
                    "initialLocation": address,
                    "callerNumber": f"+1555{rng.randint(1000000, 9999999)}",
                    "callerName": f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}",
                    "agency": f"{agency_type} District {1 + n % 3}",
                    "agencyType": agency_type,
                    "location": address,
                    "responseArea": f"RA-{1 + n % 6:02d}",
                    "disposition": "TRANSPORTED"
                    if closed and kind == "MEDICAL"
                    else ("CLEARED" if closed else None),
                    "additionalContext": "Gate code 4411" if n % 5 == 0 else None,
                    "latitude": f"{33.95 + rng.random() / 10:.6f}",
                    "longitude": f"{-117.40 + rng.random() / 10:.6f}",
                    "callPosition": f"CT-{1 + n % 8:02d}",
                    "callTakerId": taker["personnelId"],
                    "callTakerName": f"{taker['firstName']} {taker['lastName']}",
                    "callSource": "911" if n % 6 else "ADMIN",
                    "radioChannel": f"{agency_type}-DISPATCH-{1 + n % 2}",
                    "incidentDate": _ts(received),
                    "dispatchQueueAt": _ts(received + timedelta(seconds=50)),
                    "callReceivedTime": _ts(received),
                    "callPickupTime": _ts(received + timedelta(seconds=rng.randint(2, 12))),
                    "callHangupTime": _ts(received + timedelta(minutes=rng.randint(2, 9))),
                    "closedAt": _ts(closed) if closed else None,
                    "createdAt": _ts(received + timedelta(seconds=5)),
                    "notes": [
                        {
                            "noteId": f"N{incident_id}-{k + 1}",
                            "note": text,
                            "noteBy": taker["personnelId"],
                            "noteAt": _ts(received + timedelta(seconds=40 * (k + 1))),
                        }
                        for k, text in enumerate(
                            ("Caller on scene", CALLER_LINES[n % len(CALLER_LINES)])[: 1 + n % 2]
                        )
                    ],
                    "responders": responders,
                    "event": {"id": event_id, "number": event_number},
                }
            )
            supervisor = officers[n % len(officers)]
            events.append(
                {
                    "id": event_id,
                    "number": event_number,
                    "eventType": "911_CALL" if n % 6 else "ADMIN_CALL",
                    "summary": f"{incident_type.title()} at {address}",
                    "location": address,
                    "eventDate": _ts(received),
                    "createdAt": _ts(received + timedelta(seconds=2)),
                    "personnel": [
                        {
                            "id": event_id * 10 + 1,
                            "userId": taker["id"],
                            "firstName": taker["firstName"],
                            "lastName": taker["lastName"],
                            "personnelId": taker["personnelId"],
                            "type": "CALL_TAKER",
                        },
                        {
                            "id": event_id * 10 + 2,
                            "userId": supervisor["id"],
                            "firstName": supervisor["firstName"],
                            "lastName": supervisor["lastName"],
                            "personnelId": supervisor["personnelId"],
                            "type": "DISPATCHER",
                        },
                    ],
                    "incident": {"id": incident_id, "number": number},
                    "media": [
                        {"id": event_id * 10 + 1, "type": "AUDIO"},
                        *([{"id": event_id * 10 + 2, "type": "SRT"}] if n % 2 == 0 else []),
                    ],
                }
            )
        return incidents, events

    # ------------------------------------------------------------ evaluations

    def segment(self, index: int, start: float, speaker: str, *, text: str) -> dict[str, Any]:
        rng = self.rng
        words = []
        moment = start
        for word in text.split():
            length = 0.18 + len(word) * 0.04
            words.append(
                {
                    "word": word,
                    "start": round(moment, 2),
                    "end": round(moment + length, 2),
                    "score": round(0.78 + rng.random() * 0.22, 3),
                }
            )
            moment += length + 0.06
        smoothed = [
            {
                "wordIndex": 0,
                "original": text.split(maxsplit=1)[0],
                "smoothed": text.split(maxsplit=1)[0].capitalize(),
            }
        ]
        caller = speaker == "Caller"
        return {
            "id": f"seg-{index:05d}",
            "start": round(start, 2),
            "end": round(moment, 2),
            "sentimentScore": round(-0.6 + rng.random() * 0.5 if caller else rng.random() * 0.4, 3),
            "speakerIdx": 1 if caller else 0,
            "channel": 1 if caller else 0,
            "audioOffset": round(start, 2),
            "transcriptionText": text.capitalize() + ".",
            "sentiment": "NEGATIVE" if caller else "NEUTRAL",
            "speaker": speaker,
            "segmentKind": "SPEECH",
            "objectKey": f"media/{self.tenant_id}/calls/{index // 1000:04d}.wav",
            "originalText": text,
            "words": words,
            "smoothedWords": smoothed,
            "identifiedUserId": None,
        }

    def transcript(self, segments: int, taker_id: int) -> list[dict[str, Any]]:
        rng = self.rng
        moment = 0.0
        result = []
        for index in range(segments):
            caller = index % 2 == 1
            text = rng.choice(CALLER_LINES if caller else TAKER_LINES)
            segment = self.segment(index, moment, "Caller" if caller else "Call taker", text=text)
            if not caller:
                segment["identifiedUserId"] = taker_id
            moment = float(segment["end"]) + 0.4
            result.append(segment)
        return result

    def _context(self, segment: dict[str, Any], media_id: int, order: int) -> dict[str, Any]:
        return {
            "speakerSegment": segment,
            "mediaId": media_id,
            "identifiedSpeaker": segment["identifiedUserId"] is not None,
            "identifiedUserId": segment["identifiedUserId"],
            "id": order + 1,
            "type": "TRANSCRIPT",
            "content": segment["originalText"],
            "start": segment["start"],
            "order": order,
            "contentWithSpeaker": f"{segment['speaker']}: {segment['originalText']}",
        }

    def _answer(self, segment: dict[str, Any], media_id: int, order: int) -> dict[str, Any]:
        context = self._context(segment, media_id, order)
        context.pop("speakerSegment")
        return {
            **context,
            "timestamp": _ts(BASE + timedelta(seconds=float(segment["start"]))),
            "speakerSegment": segment,
        }

    def _protocol_result(
        self, result_id: int, transcript: list[dict[str, Any]], media_id: int, *, reviewer: str
    ) -> dict[str, Any]:
        rng = self.rng
        card_id, card_name = rng.choice(GUIDE_CARDS)
        correct = rng.random() < 0.85
        ai_card = card_id if correct else GUIDE_CARDS[0][0]
        questions = []
        for q in range(4):
            asked = transcript[min(len(transcript) - 1, 2 * q)]
            answer = transcript[min(len(transcript) - 1, 2 * q + 1)]
            answered = rng.random() < 0.85
            questions.append(
                {
                    "questionId": 7000 + q,
                    "parentQuestionId": None if q < 3 else 7002,
                    "askedAtSeconds": asked["start"],
                    "answeredAtSeconds": answer["start"] if answered else None,
                    "aiScore": 1 if answered else 0,
                    "overrideBy": None,
                    "referenceId": f"q-{card_id:04x}{q:04x}",
                    "questionText": (
                        "Is the patient awake?",
                        "Is the patient breathing normally?",
                        "How old is the patient?",
                        "Does the patient have a history of heart problems?",
                    )[q],
                    "answer": answer["originalText"] if answered else None,
                    "displayCriteria": None if q < 3 else "patient is conscious",
                    "lowQualityCriteria": "Question paraphrased so that the meaning changed",
                    "highQualityCriteria": "Asked verbatim and confirmed the answer",
                    "aiSummary": "Asked and answered" if answered else "Not asked",
                    "source": "GUIDE_CARD",
                    "overrideByName": None,
                    "overrideReason": None,
                    "isCritical": q < 2,
                    "isOptional": q == 3,
                    "answered": answered,
                    "conditionMet": True,
                    "answeredUnprompted": q == 2 and answered,
                    "scoring": {
                        "includesInScore": q != 3,
                        "exclusionReason": "Optional question" if q == 3 else None,
                        "questionWeight": 2 if q < 2 else 1,
                        "percentContribution": 33.3 if q < 2 else 16.7,
                        "pointValue": 2 if q < 2 else 1,
                    },
                    "askedSegment": asked,
                    "answerSegment": answer if answered else None,
                    "overrideAt": None,
                }
            )
        critical_answered = sum(1 for q in questions[:2] if q["answered"])
        other_answered = sum(1 for q in questions[2:3] if q["answered"])
        breakdown = {
            "totalQuestions": 4,
            "criticalQuestions": 2,
            "nonCriticalQuestions": 2,
            "criticalAnswered": critical_answered,
            "nonCriticalAnswered": other_answered,
            "criticalWeight": 4,
            "nonCriticalWeight": 1,
            "totalPossibleWeight": 5,
            "earnedWeight": 2 * critical_answered + other_answered,
            "optionalQuestions": 1,
            "conditionNotMetQuestions": 0,
        }
        instructions = []
        for i, text in enumerate(("Unlock the front door", "Do not give anything to eat")):
            delivered = rng.random() < 0.8
            segment = transcript[min(len(transcript) - 1, 4 + 2 * i)]
            instructions.append(
                {
                    "instructionId": 8000 + i,
                    "referenceId": f"si-{card_id:04x}{i:04x}",
                    "instructionText": text,
                    "aiSummary": "Delivered" if delivered else "Not delivered",
                    "overrideByName": None,
                    "overrideReason": None,
                    "isCritical": i == 0,
                    "delivered": delivered,
                    "score": 1 if delivered else 0,
                    "deliveredSegment": segment if delivered else None,
                    "scoring": {
                        "instructionWeight": 2 - i,
                        "percentContribution": 66.7 - 33.4 * i,
                        "pointValue": 2 - i,
                    },
                    "overrideBy": None,
                    "overrideAt": None,
                }
            )
        delivered_critical = int(bool(instructions[0]["delivered"]))
        delivered_other = int(bool(instructions[1]["delivered"]))
        questions_score = round(100 * breakdown["earnedWeight"] / 5, 1)
        pre_arrival_score = round(100 * (2 * delivered_critical + delivered_other) / 3, 1)
        selection_score = 100 if correct else 0
        edited = rng.random() < 0.1
        contexts = [self._context(segment, media_id, k) for k, segment in enumerate(transcript[:3])]
        return {
            "id": result_id,
            "percentScore": round((selection_score + questions_score + pre_arrival_score) / 3, 1),
            "guideCardName": card_name,
            "isEdited": edited,
            "overrideBy": 2 + self.base if edited else None,
            "overrideByName": reviewer if edited else None,
            "overrideReason": "Caller hung up early" if edited else None,
            "overrideAt": _ts(BASE - timedelta(days=1)) if edited else None,
            "evaluationData": {
                "protocolName": "Emergency Medical Dispatch",
                "knowledgeId": card_id,
                "knowledgeVersionId": card_id * 10 + 2,
                "knowledgeSectionId": card_id * 100 + 1,
                "allCallersKnowledgeId": 599,
                "allCallersKnowledgeVersionId": 5991,
                "allCallersKnowledgeSectionId": 59901,
                "finalScore": round((selection_score + questions_score + pre_arrival_score) / 3, 1),
                "selectionScore": selection_score,
                "questionsScore": questions_score,
                "preArrivalScore": pre_arrival_score,
                "allCallersScore": 100,
                "selection": {
                    "selectedGuidecardId": card_id,
                    "selectedKnowledgeId": card_id,
                    "aiRecommendedGuidecardId": ai_card,
                    "aiRecommendedKnowledgeId": ai_card,
                    "overrideBy": None,
                    "isCorrect": correct,
                    "score": selection_score,
                    "confidence": round(0.6 + rng.random() * 0.4, 2),
                    "justification": f"Chief complaint matches {card_name}",
                    "feedback": None if correct else "Consider the chief complaint first",
                    "overrideByName": None,
                    "overrideReason": None,
                    "overrideAt": None,
                    "scoringBreakdown": {
                        "isCorrect": correct,
                        "aiRecommendedGuidecardId": ai_card,
                        "selectedGuidecardId": card_id,
                        "justification": f"Chief complaint matches {card_name}",
                    },
                },
                "questions": {
                    "questions": questions,
                    "aiExplanation": "Key questions asked in order",
                    "contextSources": contexts,
                    "summary": f"{critical_answered} of 2 critical questions answered",
                    "scoringBreakdown": breakdown,
                },
                "allCallers": {
                    "questions": questions[:1],
                    "aiExplanation": "Address and callback verified",
                    "contextSources": contexts[:1],
                    "summary": "All-callers questions asked",
                    "scoringBreakdown": {**breakdown, "totalQuestions": 1},
                },
                "preArrival": {
                    "instructions": instructions,
                    "aiExplanation": "Pre-arrival instructions given after dispatch",
                    "contextSources": contexts[1:],
                    "scoringBreakdown": {
                        "totalInstructions": 2,
                        "criticalInstructions": 1,
                        "nonCriticalInstructions": 1,
                        "criticalDelivered": delivered_critical,
                        "nonCriticalDelivered": delivered_other,
                        "criticalWeight": 2,
                        "nonCriticalWeight": 1,
                        "totalPossibleWeight": 3,
                        "earnedWeight": 2 * delivered_critical + delivered_other,
                    },
                },
                "assist": {
                    "requestedKnowledgeSectionId": card_id * 100 + 1,
                    "requestedKnowledgeId": card_id,
                    "assistantIdentifier": "ai-assist-v2",
                    "requestedGuidecardName": card_name,
                    "diverged": not correct,
                },
            },
        }

    def evaluation(
        self,
        evaluation_id: int,
        user: dict[str, Any],
        reviewer: dict[str, Any],
        *,
        created_at: datetime,
        event: dict[str, Any] | None,
        enrollments: list[dict[str, Any]],
        transcript: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        rng = self.rng
        transcript = transcript or self.transcript(12, int(user["id"]))
        segments = len(transcript)
        template_id, template_name, color, identifier = rng.choice(EVALUATION_TEMPLATES)
        event_id = event["id"] if event else self.base + 6001
        personnel_id = event["personnel"][0]["id"] if event else None
        media_id = event["media"][0]["id"] if event else 1
        results = []
        for c, (description, skill) in enumerate(CRITERIA[: 3 + evaluation_id % 3]):
            passing = rng.random() < 0.8
            result_id = evaluation_id * 10 + c
            answers = [
                self._answer(transcript[k], media_id, k) for k in range(c, min(segments, c + 3))
            ]
            results.append(
                {
                    "id": result_id,
                    "eventId": event_id,
                    "userId": user["id"],
                    "evaluationTemplateCriteria": {
                        "id": template_id * 100 + c,
                        "description": description,
                        "orderIndex": c,
                        "score": 10,
                        "scoringCriteriaCriticalityLevelId": 1 if c < 2 else 2,
                        "parentCriteriaId": None,
                        "type": "SMART_TASK" if c != 4 else "MANUAL",
                        "taskId": 900 + c,
                        "skillArea": {
                            "id": 40 + c,
                            "refId": skill,
                            "name": skill.replace("_", " ").title(),
                            "description": description,
                        },
                        "smartTask": {
                            "id": 600 + c,
                            "prompt": f"Did the call taker: {description.lower()}?",
                            "contextSources": ["TRANSCRIPT", "CAD"],
                            "additionalInstructions": None,
                            "overrideGeneratedInstructions": None,
                            "type": "YES_NO",
                        },
                    },
                    "score": 10 if passing else rng.choice((0, 5)),
                    "totalPossibleScore": 10,
                    "manualInputValue": None,
                    "speedSeconds": round(rng.uniform(3, 40), 1) if c < 2 else None,
                    "isPassing": passing,
                    "overrideAiOriginalResult": rng.random() < 0.05,
                    "classification": "STRENGTH" if passing else "OPPORTUNITY",
                    "comment": None if passing else "Review the address verification SOP",
                    "explanation": f"{description}: {'yes' if passing else 'not clearly'}",
                    "overrideReason": None,
                    "overrideBy": None,
                    "qaResponse": {
                        "smartTaskId": 600 + c,
                        "standardCriteriaId": f"STD-{skill}",
                        "passing": passing,
                        "explanation": f"Evidence at {answers[0]['start'] if answers else 0} s",
                        "answer": answers,
                    },
                    "protocolResults": [
                        self._protocol_result(
                            result_id * 10,
                            transcript,
                            media_id,
                            reviewer=f"{reviewer['firstName']} {reviewer['lastName']}",
                        )
                    ]
                    # Guide-card protocols are scored on medical calls.
                    if c == 2 and template_id == EVALUATION_TEMPLATES[0][0]
                    else [],
                }
            )
        earned = sum(float(result["score"]) for result in results)
        possible = 10.0 * len(results)
        status = rng.choice(
            (
                EvaluationStatus.COMPLETED,
                EvaluationStatus.COMPLETED,
                EvaluationStatus.ACKNOWLEDGED,
                EvaluationStatus.PENDING,
                EvaluationStatus.IN_PROGRESS,
                EvaluationStatus.CLEARED,
            )
        )
        percent = round(100 * earned / possible, 1)
        summaries = [
            {key: enrollment[key] for key in _SUMMARY_KEYS}
            for enrollment in enrollments
            if enrollment["status"] == EnrollmentStatus.IN_PROGRESS.value
        ]
        return {
            "id": evaluation_id,
            "eventId": event_id,
            "userId": user["id"],
            "eventPersonnelId": personnel_id,
            "completedBy": reviewer["id"] if status is not EvaluationStatus.PENDING else None,
            "status": status.value,
            "evaluationTemplate": {
                "id": template_id,
                "name": template_name,
                "color": color,
                "sandboxMode": False,
                "sandboxExpiresAt": None,
                "active": True,
                "templateIdentifier": identifier,
                "version": 4,
                "isPdfTemplate": False,
            },
            "results": results,
            "eventSummary": {
                "summary": f"{user['firstName']} handled a call; caller reported an emergency",
                "variableValues": [
                    {
                        "value": "YES",
                        "variable": "ADDRESS_VERIFIED",
                        "explanation": "Address repeated back to the caller",
                        "originalValue": "NO" if evaluation_id % 13 == 0 else "YES",
                        "overrideReason": "Verified later in the call"
                        if evaluation_id % 13 == 0
                        else None,
                        "index": 0,
                        "overrideBy": reviewer["id"] if evaluation_id % 13 == 0 else None,
                        "overrideAt": _ts(created_at) if evaluation_id % 13 == 0 else None,
                    }
                ],
            },
            "eventTimes": {
                "times": [
                    {
                        "explanation": explanation,
                        "name": name,
                        "seconds": transcript[k]["start"],
                        "segment": self._context(transcript[k], media_id, k),
                    }
                    for k, (name, explanation) in enumerate(
                        (
                            ("CALL_ANSWERED", "First words of the call taker"),
                            ("ADDRESS_VERIFIED", "Address confirmed"),
                            ("DISPATCHED", "Units dispatched"),
                        )
                    )
                    if k < len(transcript)
                ]
            },
            "scaleScoreLevel": "MEETS" if percent >= 80 else "BELOW",
            "clearReason": "Duplicate call" if status is EvaluationStatus.CLEARED else None,
            "rawPercentScore": percent,
            "earnedScore": earned,
            "totalPossibleScore": possible,
            "isPointsOff": evaluation_id % 2 == 0,
            "deleted": evaluation_id % 29 == 0,
            "isTraining": bool(summaries) and evaluation_id % 3 == 0,
            "isSandbox": False,
            "hasOverride": evaluation_id % 13 == 0,
            "lowTranscriptionQuality": evaluation_id % 17 == 0,
            "createdAt": _ts(created_at),
            "phaseEnrollments": summaries,
        }


# The reduced enrollment nested in evaluations: the summary model's fields, by wire name.
_SUMMARY_KEYS = tuple(
    field.alias or name for name, field in PhaseEnrollmentSummary.model_fields.items()
)


def generate(
    seed: int,
    tenant_id: int,
    id_base: int,
    *,
    user_count: int = 50,
    evaluation_count: int = 300,
    incident_count: int = 40,
    domain: str = "psap.example",
) -> TenantDataset:
    """A tenant's data. Ids start above `id_base` (give each tenant its own base so that ids
    never coincide across tenants); the same arguments give the same data."""
    generator = _Generator(seed, tenant_id, id_base, domain=domain)
    users = generator.users(user_count)
    officers = [user for user in users if user["roleId"] == 2] or users[:1]
    people = [user for user in users[8:-1]] or users
    trainees = people[: max(1, len(people) // 2)]
    enrollments = generator.enrollments(users, trainees)
    incidents, events = generator.incidents_and_events(incident_count, people, officers)
    by_user: dict[int, list[dict[str, Any]]] = {}
    for enrollment in enrollments:
        by_user.setdefault(int(enrollment["user"]["id"]), []).append(enrollment)
    evaluations = []
    # The first call taker has many evaluations (paging is visible); the rest share the rest.
    for n in range(evaluation_count):
        user = people[0] if n < evaluation_count // 5 else people[n % len(people)]
        event = events[n % len(events)] if events else None
        created = BASE - timedelta(days=n % 120, hours=n % 24, minutes=n % 60)
        evaluations.append(
            generator.evaluation(
                id_base + 3001 + n,
                user,
                officers[n % len(officers)],
                created_at=created,
                event=event,
                enrollments=by_user.get(int(user["id"]), []),
            )
        )
    return TenantDataset(
        users=[User.model_validate(user) for user in users],
        enrollments=[PhaseEnrollment.model_validate(item) for item in enrollments],
        evaluations=[QaEvaluation.model_validate(item) for item in evaluations],
        incidents=[Incident.model_validate(item) for item in incidents],
        events=[Event.model_validate(item) for item in events],
    )


def large_evaluation(
    evaluation_id: int, user_id: int, segments: int, *, seed: int = 7
) -> QaEvaluation:
    """One evaluation whose results carry a transcript of `segments` speaker segments (the
    2 000-segment test and the benchmark)."""
    generator = _Generator(seed, 1, 0, domain="psap.example")
    user = {"id": user_id, "firstName": "Long", "lastName": "Call", "personnelId": "P1"}
    transcript = generator.transcript(max(segments, 8), user_id)
    evaluation = generator.evaluation(
        evaluation_id,
        user,
        user,
        created_at=BASE,
        event=None,
        enrollments=[],
        transcript=transcript,
    )
    evaluation["results"][0]["qaResponse"]["answer"] = [
        generator._answer(segment, 1, k) for k, segment in enumerate(transcript)
    ]
    evaluation["deleted"] = False
    return QaEvaluation.model_validate(evaluation)


def evaluations_for(
    user_id: int, count: int, first_id: int, *, seed: int = 11
) -> Iterator[QaEvaluation]:
    """`count` ordinary evaluations of one user (benchmarks), newest first."""
    generator = _Generator(seed, 1, 0, domain="psap.example")
    user = {"id": user_id, "firstName": "Bench", "lastName": "User", "personnelId": "P2"}
    for n in range(count):
        created = BASE - timedelta(minutes=37 * n)
        evaluation = generator.evaluation(
            first_id + n, user, user, created_at=created, event=None, enrollments=[]
        )
        evaluation["deleted"] = False
        yield QaEvaluation.model_validate(evaluation)


def load(dataset: TenantDataset, tenant_id: int, now: datetime = BASE) -> None:
    """Writes the dataset into an EMPTY tenant with the stores' bulk loaders."""
    bulk_load_users(tenant_id, dataset.users)
    bulk_load_enrollments(tenant_id, dataset.enrollments)
    bulk_load_evaluations(tenant_id, dataset.evaluations)
    bulk_load_incidents(tenant_id, dataset.incidents, now)
    bulk_load_events(tenant_id, dataset.events, now)


def facts(dataset: TenantDataset) -> dict[str, Any]:
    """What stack.json publishes about the demo data (the e2e tests read it)."""
    enrolled = {enrollment.user.id for enrollment in dataset.enrollments if enrollment.user}
    evaluated: dict[int, int] = {}
    for evaluation in dataset.evaluations:
        if not evaluation.deleted and evaluation.user_id is not None:
            evaluated[evaluation.user_id] = evaluated.get(evaluation.user_id, 0) + 1
    busiest = max(evaluated, key=lambda user_id: evaluated[user_id])
    return {
        "userIds": [user.id for user in dataset.users],
        "traineeId": min(enrolled),
        "userWithoutEnrollments": min(user.id for user in dataset.users if user.id not in enrolled),
        "evaluatedUserId": busiest,
        "evaluationCount": evaluated[busiest],
        "incidentIds": [incident.id for incident in dataset.incidents],
        "eventIds": [event.id for event in dataset.events],
    }


# Per demo tenant (by position in local.demo): seed, size, email domain.
DEMO_SIZES = (
    (4101, 50, 200, 40, "riverside911.example"),
    (4102, 20, 40, 10, "lakeshore-ecc.example"),
)


def demo_dataset(index: int, tenant_id: int) -> TenantDataset:
    seed, users, evaluations, incidents, domain = DEMO_SIZES[index % len(DEMO_SIZES)]
    return generate(
        seed,
        tenant_id,
        100_000 * (index + 1),
        user_count=users,
        evaluation_count=evaluations,
        incident_count=incidents,
        domain=domain,
    )


def seed_tenant_data(tenant_id: int, index: int) -> dict[str, Any]:
    """Loads demo tenant `index` (0, 1, ...) into `tenant_id`; returns its stack.json facts."""
    dataset = demo_dataset(index, tenant_id)
    load(dataset, tenant_id)
    return facts(dataset)


def write_jsonl(dataset: TenantDataset, directory: Path) -> list[Path]:
    """One JSON Lines file per kind, in import order (the admin `import` command's input)."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for kind, records in dataset.records().items():
        path = directory / f"{kind}.jsonl"
        with path.open("w", encoding="utf-8") as stream:
            for record in records:
                stream.write(json.dumps(record.model_dump(mode="json", by_alias=True)) + "\n")
        written.append(path)
    return written


def main(arguments: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="psap-demo-data", description="Write demo tenant data as JSONL."
    )
    parser.add_argument("--out", required=True, type=Path, help="directory for the files")
    parser.add_argument("--seed", type=int, default=DEMO_SIZES[0][0])
    parser.add_argument("--tenant", type=int, default=1, help="tenantId written in records")
    parser.add_argument("--id-base", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--evaluations", type=int, default=200)
    parser.add_argument("--incidents", type=int, default=40)
    options = parser.parse_args(arguments)
    dataset = generate(
        options.seed,
        options.tenant,
        options.id_base,
        user_count=options.users,
        evaluation_count=options.evaluations,
        incident_count=options.incidents,
    )
    for path in write_jsonl(dataset, options.out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
