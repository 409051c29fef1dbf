"""One JSON example per table of the spec's "Resources and their fields", with every field
present and not null, transcribed from the spec field by field (name, nesting and type).

The tests import them through the same models the import command uses and read them back
through the API: the response must equal the example exactly (5 and 5.0 differ), so a field
renamed, dropped, retyped or renested fails.
"""

from typing import Any

TS = "2026-01-05T14:00:00.123Z"
TS2 = "2026-01-06T09:30:00.000Z"

USER: dict[str, Any] = {
    "id": 7001,
    "tenantId": 21,
    "email": "maria.alvarez@riverside911.example",
    "firstName": "Maria",
    "lastName": "Alvarez",
    "notificationEmail": "alerts+maria@riverside911.example",
    "loginEnabled": True,
    "idpSub": "auth0|65f0c0ffee",
    "personnelId": "P04001",
    "roleId": 3,
    "isSuperAdmin": False,
    "isSystemUser": False,
    "mfaEnabled": True,
    "lastLoginAt": TS,
    "isSupervisor": False,
    "isTemplatePublishingAllowed": False,
    "vlrIdentifier": "VLR-0001",
    "passwordExpiresAt": TS2,
    "isPasswordExpired": False,
    "isSupportUser": False,
    "investmentTrainingPipeline": True,
}

OFFICER: dict[str, Any] = {
    **USER,
    "id": 7002,
    "email": "james.brooks@riverside911.example",
    "firstName": "James",
    "lastName": "Brooks",
    "notificationEmail": "alerts+james@riverside911.example",
    "idpSub": "auth0|65f0c0ffef",
    "personnelId": "P04002",
    "roleId": 2,
    "isSupervisor": True,
}


def person(user: dict[str, Any]) -> dict[str, Any]:
    """Person reference: id, firstName, lastName, email, notificationEmail."""
    return {key: user[key] for key in ("id", "firstName", "lastName", "email", "notificationEmail")}


ENROLLMENT_SUMMARY: dict[str, Any] = {
    "id": 8001,
    "tenantId": 21,
    "phaseId": 101,
    "phaseName": "Call Taker Phase I",
    "user": USER,
    "primaryTrainingOfficer": OFFICER,
    "startDate": "2025-11-03",
    "originalPlannedEndDate": "2025-12-15",
    "projectedEndDate": "2025-12-22",
    "actualEndDate": "2025-12-20",
    "status": "WAITING_SIGNOFF",
    "statusReason": "All task list items proficient",
    "signoffId": 58001,
}

TEMPLATE_ITEM: dict[str, Any] = {
    "id": 9101,
    "identifier": "T01",
    "name": "Verify location with ANI/ALI",
    "orderIndex": 1,
    "parentId": 9100,
}
TEMPLATE_GROUP: dict[str, Any] = {
    "id": 9100,
    "identifier": "G1",
    "name": "Call processing",
    "orderIndex": 0,
    "parentId": 9000,
}

AUDIT_ENTRY: dict[str, Any] = {
    "id": 9301,
    "user": person(OFFICER),
    "positionType": "TRAINER",
    "oldPosition": 1,
    "newPosition": 2,
    "checkedAt": TS,
    "createdAt": TS,
    "updatedAt": TS2,
}

TASK_LIST: dict[str, Any] = {
    "id": 9001,
    "subject": person(USER),
    "primaryTrainingOfficer": person(OFFICER),
    "endDate": TS2,
    "startDate": TS,
    "enrollmentDate": TS,
    "status": "IN_PROGRESS",
    "taskListTemplateVersion": {
        "id": 9000,
        "active": True,
        "version": 3,
        "columnCount": 3,
        "trainingOfficerOnly": False,
        "name": "Call Taker Phase I Task List",
        "hasObservations": True,
        "items": [TEMPLATE_ITEM],
        "groups": [TEMPLATE_GROUP],
        "columnLabels": [
            {"id": 9091, "columnPosition": 1, "columnName": "Explained"},
            {"id": 9092, "columnPosition": 2, "columnName": "Demonstrated"},
            {"id": 9093, "columnPosition": 3, "columnName": "Proficient"},
        ],
    },
    "items": [
        {
            "id": 9201,
            "taskListTemplateVersionItem": TEMPLATE_ITEM,
            "isComplete": False,
            "traineeColumnPosition": 3,
            "trainerColumnPosition": 2,
            "trainerId": 7002,
            "auditHistory": [AUDIT_ENTRY],
        },
        {
            "id": 9202,
            "taskListTemplateVersionItem": {**TEMPLATE_ITEM, "id": 9102, "identifier": "T02"},
            "isComplete": True,
            "traineeColumnPosition": 3,
            "trainerColumnPosition": 3,
            "trainerId": 7002,
            "auditHistory": [{**AUDIT_ENTRY, "id": 9302, "oldPosition": 2, "newPosition": 3}],
        },
        {
            "id": 9203,
            "taskListTemplateVersionItem": {**TEMPLATE_ITEM, "id": 9103, "identifier": "T03"},
            "isComplete": False,
            "traineeColumnPosition": 1,
            "trainerColumnPosition": 1,
            "trainerId": 7002,
            "auditHistory": [{**AUDIT_ENTRY, "id": 9303, "oldPosition": 0, "newPosition": 1}],
        },
        {
            "id": 9204,
            "taskListTemplateVersionItem": {**TEMPLATE_ITEM, "id": 9104, "identifier": "T04"},
            "isComplete": False,
            "traineeColumnPosition": 0,
            "trainerColumnPosition": 0,
            "trainerId": 7002,
            "auditHistory": [],
        },
    ],
    "groups": [
        {"id": 9401, "taskListTemplateVersionItemGroup": TEMPLATE_GROUP, "isComplete": False}
    ],
    # Consistent with the items: trainer positions 2, 3, 1, 0.
    "totalItems": 4,
    "notStartedItemCount": 1,
    "explainedItemCount": 1,
    "demonstratedItemCount": 1,
    "proficientItemCount": 1,
    "phaseNames": ["Call Taker Phase I"],
    "phaseEnrollments": [ENROLLMENT_SUMMARY],
    "primaryPhaseEnrollmentId": 8001,
    "primaryPhaseId": 101,
    "primaryPhaseName": "Call Taker Phase I",
}

ENROLLMENT: dict[str, Any] = {
    **ENROLLMENT_SUMMARY,
    "hasSignoffFlow": True,
    "taskLists": [TASK_LIST],
    "minTrainingHours": 80,
    "hasIncompleteTrainingReports": False,
    "hasIncompleteTaskLists": True,
    "canStartSignoff": True,
    "isProgressionDisabled": False,
    "existingInProgressEnrollmentId": 8000,
    "totalTrainingHours": 76.5,
    "signoffCreatedAt": TS2,
}

WORD: dict[str, Any] = {"word": "address", "start": 1.25, "end": 1.61, "score": 0.982}
SMOOTHED_WORD: dict[str, Any] = {"wordIndex": 0, "original": "nine", "smoothed": "Nine"}

SPEAKER_SEGMENT: dict[str, Any] = {
    "id": "seg-00001",
    "start": 0.5,
    "end": 3.75,
    "sentimentScore": -0.25,
    "speakerIdx": 0,
    "channel": 1,
    "audioOffset": 0.5,
    "transcriptionText": "Nine one one, what is the address of your emergency?",
    "sentiment": "NEUTRAL",
    "speaker": "Call taker",
    "segmentKind": "SPEECH",
    "objectKey": "media/21/calls/0001.wav",
    "originalText": "nine one one what is the address of your emergency",
    "words": [WORD],
    "smoothedWords": [SMOOTHED_WORD],
    "identifiedUserId": 7001,
}

CONTEXT_SOURCE: dict[str, Any] = {
    "speakerSegment": SPEAKER_SEGMENT,
    "mediaId": 61,
    "identifiedSpeaker": True,
    "identifiedUserId": 7001,
    "id": 1,
    "type": "TRANSCRIPT",
    "content": "nine one one what is the address of your emergency",
    "start": 0.5,
    "order": 0,
    "contentWithSpeaker": "Call taker: nine one one what is the address of your emergency",
}

ANSWER_ITEM: dict[str, Any] = {
    "id": 1,
    "mediaId": 61,
    "identifiedUserId": 7001,
    "start": 0.5,
    "order": 0,
    "type": "TRANSCRIPT",
    "content": "nine one one what is the address of your emergency",
    "contentWithSpeaker": "Call taker: nine one one what is the address of your emergency",
    "identifiedSpeaker": True,
    "timestamp": TS,
    "speakerSegment": SPEAKER_SEGMENT,
}

QUESTIONS_BREAKDOWN: dict[str, Any] = {
    "totalQuestions": 4,
    "criticalQuestions": 2,
    "nonCriticalQuestions": 2,
    "criticalAnswered": 2,
    "nonCriticalAnswered": 1,
    "criticalWeight": 4,
    "nonCriticalWeight": 1,
    "totalPossibleWeight": 5,
    "earnedWeight": 4.5,
    "optionalQuestions": 1,
    "conditionNotMetQuestions": 0,
}

QUESTION_ITEM: dict[str, Any] = {
    "questionId": 7000,
    "parentQuestionId": 6999,
    "askedAtSeconds": 12.5,
    "answeredAtSeconds": 15,
    "aiScore": 0.9,
    "overrideBy": 7002,
    "referenceId": "q-1a2b3c4d",
    "questionText": "Is the patient breathing normally?",
    "answer": "yes but fast",
    "displayCriteria": "patient is conscious",
    "lowQualityCriteria": "Paraphrased",
    "highQualityCriteria": "Asked verbatim",
    "aiSummary": "Asked and answered",
    "source": "GUIDE_CARD",
    "overrideByName": "James Brooks",
    "overrideReason": "Answer was implied",
    "isCritical": True,
    "isOptional": False,
    "answered": True,
    "conditionMet": True,
    "answeredUnprompted": False,
    "scoring": {
        "includesInScore": True,
        "exclusionReason": "none",
        "questionWeight": 2,
        "percentContribution": 40.5,
        "pointValue": 2,
    },
    "askedSegment": SPEAKER_SEGMENT,
    "answerSegment": {**SPEAKER_SEGMENT, "id": "seg-00002", "speaker": "Caller"},
    "overrideAt": TS2,
}

QUESTION_GROUP: dict[str, Any] = {
    "questions": [QUESTION_ITEM],
    "aiExplanation": "Key questions asked in order",
    "contextSources": [CONTEXT_SOURCE],
    "summary": "2 of 2 critical questions answered",
    "scoringBreakdown": QUESTIONS_BREAKDOWN,
}

INSTRUCTION_ITEM: dict[str, Any] = {
    "instructionId": 8000,
    "referenceId": "si-1a2b3c4d",
    "instructionText": "Unlock the front door",
    "aiSummary": "Delivered",
    "overrideByName": "James Brooks",
    "overrideReason": "Delivered by a second call taker",
    "isCritical": True,
    "delivered": True,
    "score": 1,
    "deliveredSegment": SPEAKER_SEGMENT,
    "scoring": {"instructionWeight": 2, "percentContribution": 66.7, "pointValue": 2},
    "overrideBy": 7002,
    "overrideAt": TS2,
}

PROTOCOL_RESULT: dict[str, Any] = {
    "id": 5101,
    "percentScore": 88.9,
    "guideCardName": "Chest Pain",
    "isEdited": True,
    "overrideBy": 7002,
    "overrideByName": "James Brooks",
    "overrideReason": "Caller hung up early",
    "overrideAt": TS2,
    "evaluationData": {
        "protocolName": "Emergency Medical Dispatch",
        "knowledgeId": 501,
        "knowledgeVersionId": 5012,
        "knowledgeSectionId": 50101,
        "allCallersKnowledgeId": 599,
        "allCallersKnowledgeVersionId": 5991,
        "allCallersKnowledgeSectionId": 59901,
        "finalScore": 88.9,
        "selectionScore": 100,
        "questionsScore": 90,
        "preArrivalScore": 66.7,
        "allCallersScore": 100,
        "selection": {
            "selectedGuidecardId": 501,
            "selectedKnowledgeId": 501,
            "aiRecommendedGuidecardId": 502,
            "aiRecommendedKnowledgeId": 502,
            "overrideBy": 7002,
            "isCorrect": True,
            "score": 100,
            "confidence": 0.93,
            "justification": "Chief complaint matches Chest Pain",
            "feedback": "Good selection",
            "overrideByName": "James Brooks",
            "overrideReason": "AI misheard the complaint",
            "overrideAt": TS2,
            "scoringBreakdown": {
                "isCorrect": True,
                "aiRecommendedGuidecardId": 502,
                "selectedGuidecardId": 501,
                "justification": "Chief complaint matches Chest Pain",
            },
        },
        "questions": QUESTION_GROUP,
        "allCallers": {**QUESTION_GROUP, "summary": "Address and callback verified"},
        "preArrival": {
            "instructions": [INSTRUCTION_ITEM],
            "aiExplanation": "Given after dispatch",
            "contextSources": [CONTEXT_SOURCE],
            "scoringBreakdown": {
                "totalInstructions": 2,
                "criticalInstructions": 1,
                "nonCriticalInstructions": 1,
                "criticalDelivered": 1,
                "nonCriticalDelivered": 0,
                "criticalWeight": 2,
                "nonCriticalWeight": 1,
                "totalPossibleWeight": 3,
                "earnedWeight": 2,
            },
        },
        "assist": {
            "requestedKnowledgeSectionId": 50101,
            "requestedKnowledgeId": 501,
            "assistantIdentifier": "ai-assist-v2",
            "requestedGuidecardName": "Chest Pain",
            "diverged": False,
        },
    },
}

RESULT: dict[str, Any] = {
    "id": 4101,
    "eventId": 6101,
    "userId": 7001,
    "evaluationTemplateCriteria": {
        "id": 1100,
        "description": "Verified the incident address",
        "orderIndex": 0,
        "score": 10,
        "scoringCriteriaCriticalityLevelId": 1,
        "parentCriteriaId": 1000,
        "type": "SMART_TASK",
        "taskId": 900,
        "skillArea": {
            "id": 40,
            "refId": "LOCATION",
            "name": "Location",
            "description": "Address verification",
        },
        "smartTask": {
            "id": 600,
            "prompt": "Did the call taker verify the address?",
            "contextSources": ["TRANSCRIPT", "CAD"],
            "additionalInstructions": "Count a repeated-back address",
            "overrideGeneratedInstructions": "Use the CAD address as truth",
            "type": "YES_NO",
        },
    },
    "score": 10,
    "totalPossibleScore": 10,
    "manualInputValue": 1,
    "speedSeconds": 8.4,
    "isPassing": True,
    "overrideAiOriginalResult": False,
    "classification": "STRENGTH",
    "comment": "Repeated the address back",
    "explanation": "Address verified at 3.1 s",
    "overrideReason": "Reviewed by supervisor",
    "overrideBy": 7002,
    "qaResponse": {
        "smartTaskId": 600,
        "standardCriteriaId": "STD-LOCATION",
        "passing": True,
        "explanation": "Evidence at 0.5 s",
        "answer": [ANSWER_ITEM],
    },
    "protocolResults": [PROTOCOL_RESULT],
}

EVALUATION: dict[str, Any] = {
    "id": 3101,
    "eventId": 6101,
    "userId": 7001,
    "eventPersonnelId": 61011,
    "completedBy": 7002,
    "status": "PENDING",
    "evaluationTemplate": {
        "id": 11,
        "name": "Medical Call Review",
        "color": "#D9534F",
        "sandboxMode": False,
        "sandboxExpiresAt": TS2,
        "active": True,
        "templateIdentifier": "QA-MED",
        "version": 4,
        "isPdfTemplate": False,
    },
    "results": [RESULT],
    "eventSummary": {
        "summary": "Caller reported chest pain; units dispatched",
        "variableValues": [
            {
                "value": "YES",
                "variable": "ADDRESS_VERIFIED",
                "explanation": "Address repeated back",
                "originalValue": "NO",
                "overrideReason": "Verified later in the call",
                "index": 0,
                "overrideBy": 7002,
                "overrideAt": TS2,
            }
        ],
    },
    "eventTimes": {
        "times": [
            {
                "explanation": "First words of the call taker",
                "name": "CALL_ANSWERED",
                "seconds": 0.5,
                "segment": CONTEXT_SOURCE,
            }
        ]
    },
    "scaleScoreLevel": "MEETS",
    "clearReason": "Not cleared",
    "rawPercentScore": 92.5,
    "earnedScore": 37,
    "totalPossibleScore": 40,
    "isPointsOff": False,
    "deleted": False,
    "isTraining": True,
    "isSandbox": False,
    "hasOverride": True,
    "lowTranscriptionQuality": False,
    "createdAt": TS,
    "phaseEnrollments": [ENROLLMENT_SUMMARY],
}

INCIDENT: dict[str, Any] = {
    "id": 5001,
    "number": "26-0100001",
    "sysId": "9d5f0c2e8a4b4c1e9f3a7b6c5d4e3f21",
    "caseNumber": "C2026-000001",
    "priority": "P1",
    "incidentType": "CHEST PAIN",
    "initialIncidentType": "UNKNOWN PROBLEM",
    "initialLocation": "1200 Main St",
    "callerNumber": "+15555550123",
    "callerName": "Linda Reyes",
    "agency": "EMS District 1",
    "agencyType": "EMS",
    "location": "1200 Main St, Apt 4",
    "responseArea": "RA-01",
    "disposition": "TRANSPORTED",
    "additionalContext": "Gate code 4411",
    "latitude": "33.953349",
    "longitude": "-117.396156",
    "callPosition": "CT-03",
    "callTakerId": "P04001",
    "callTakerName": "Maria Alvarez",
    "callSource": "911",
    "radioChannel": "EMS-DISPATCH-1",
    "incidentDate": TS,
    "dispatchQueueAt": TS,
    "callReceivedTime": TS,
    "callPickupTime": TS,
    "callHangupTime": TS2,
    "closedAt": TS2,
    "createdAt": TS,
    "notes": [
        {"noteId": "N1", "note": "Caller on scene", "noteBy": "P04001", "noteAt": TS},
    ],
    "responders": [
        {
            "personnelId": "U123",
            "personnelFirstName": "Kwame",
            "personnelLastName": "Usman",
            "unitName": "M12",
            "dispatchedBy": "Maria Alvarez",
            "dispatchedAt": TS,
            "enrouteAt": TS,
            "arrivedAt": TS2,
            "clearedAt": TS2,
        }
    ],
    "event": {"id": 6101, "number": "EV-2026-0100001"},
}

EVENT: dict[str, Any] = {
    "id": 6101,
    "number": "EV-2026-0100001",
    "eventType": "911_CALL",
    "summary": "Chest pain at 1200 Main St",
    "location": "1200 Main St, Apt 4",
    "eventDate": TS,
    "createdAt": TS,
    "personnel": [
        {
            "id": 61011,
            "userId": 7001,
            "firstName": "Maria",
            "lastName": "Alvarez",
            "personnelId": "P04001",
            "type": "CALL_TAKER",
        }
    ],
    "incident": {"id": 5001, "number": "26-0100001"},
    "media": [{"id": 61, "type": "AUDIO"}],
}

# The spec's field lists, for the key-set checks (a second transcription, kept independent
# of the examples above on purpose).
SPEC_FIELDS: dict[str, set[str]] = {
    "user": set(
        [
            "id",
            "tenantId",
            "email",
            "firstName",
            "lastName",
            "notificationEmail",
            "loginEnabled",
            "idpSub",
            "personnelId",
            "roleId",
            "isSuperAdmin",
            "isSystemUser",
            "mfaEnabled",
            "lastLoginAt",
            "isSupervisor",
            "isTemplatePublishingAllowed",
            "vlrIdentifier",
            "passwordExpiresAt",
            "isPasswordExpired",
            "isSupportUser",
            "investmentTrainingPipeline",
        ]
    ),
    "person": {"id", "firstName", "lastName", "email", "notificationEmail"},
    "page": set(
        [
            "totalElements",
            "totalPages",
            "first",
            "last",
            "size",
            "content",
            "number",
            "numberOfElements",
            "empty",
            "sort",
            "pageable",
        ]
    ),
    "sort": {"empty", "sorted", "unsorted"},
    "pageable": {"offset", "sort", "pageNumber", "pageSize", "paged", "unpaged"},
    "enrollmentSummary": set(
        [
            "id",
            "tenantId",
            "phaseId",
            "phaseName",
            "user",
            "primaryTrainingOfficer",
            "startDate",
            "originalPlannedEndDate",
            "projectedEndDate",
            "actualEndDate",
            "status",
            "statusReason",
            "signoffId",
        ]
    ),
    "enrollment": set(
        [
            "id",
            "tenantId",
            "phaseId",
            "phaseName",
            "user",
            "primaryTrainingOfficer",
            "startDate",
            "originalPlannedEndDate",
            "projectedEndDate",
            "actualEndDate",
            "status",
            "statusReason",
            "signoffId",
            "hasSignoffFlow",
            "taskLists",
            "minTrainingHours",
            "hasIncompleteTrainingReports",
            "hasIncompleteTaskLists",
            "canStartSignoff",
            "isProgressionDisabled",
            "existingInProgressEnrollmentId",
            "totalTrainingHours",
            "signoffCreatedAt",
        ]
    ),
    "taskList": set(
        [
            "id",
            "subject",
            "primaryTrainingOfficer",
            "endDate",
            "startDate",
            "enrollmentDate",
            "status",
            "taskListTemplateVersion",
            "items",
            "groups",
            "totalItems",
            "notStartedItemCount",
            "explainedItemCount",
            "demonstratedItemCount",
            "proficientItemCount",
            "phaseNames",
            "phaseEnrollments",
            "primaryPhaseEnrollmentId",
            "primaryPhaseId",
            "primaryPhaseName",
        ]
    ),
    "templateVersion": set(
        [
            "id",
            "active",
            "version",
            "columnCount",
            "trainingOfficerOnly",
            "name",
            "hasObservations",
            "items",
            "groups",
            "columnLabels",
        ]
    ),
    "templateEntry": {"id", "identifier", "name", "orderIndex", "parentId"},
    "columnLabel": {"id", "columnPosition", "columnName"},
    "taskListItem": set(
        [
            "id",
            "taskListTemplateVersionItem",
            "isComplete",
            "traineeColumnPosition",
            "trainerColumnPosition",
            "trainerId",
            "auditHistory",
        ]
    ),
    "auditHistory": set(
        [
            "id",
            "user",
            "positionType",
            "oldPosition",
            "newPosition",
            "checkedAt",
            "createdAt",
            "updatedAt",
        ]
    ),
    "taskListGroup": {"id", "taskListTemplateVersionItemGroup", "isComplete"},
    "incident": set(
        [
            "id",
            "number",
            "sysId",
            "caseNumber",
            "priority",
            "incidentType",
            "initialIncidentType",
            "initialLocation",
            "callerNumber",
            "callerName",
            "agency",
            "agencyType",
            "location",
            "responseArea",
            "disposition",
            "additionalContext",
            "latitude",
            "longitude",
            "callPosition",
            "callTakerId",
            "callTakerName",
            "callSource",
            "radioChannel",
            "incidentDate",
            "dispatchQueueAt",
            "callReceivedTime",
            "callPickupTime",
            "callHangupTime",
            "closedAt",
            "createdAt",
            "notes",
            "responders",
            "event",
        ]
    ),
    "note": {"noteId", "note", "noteBy", "noteAt"},
    "responder": set(
        [
            "personnelId",
            "personnelFirstName",
            "personnelLastName",
            "unitName",
            "dispatchedBy",
            "dispatchedAt",
            "enrouteAt",
            "arrivedAt",
            "clearedAt",
        ]
    ),
    "reference": {"id", "number"},
    "event": set(
        [
            "id",
            "number",
            "eventType",
            "summary",
            "location",
            "eventDate",
            "createdAt",
            "personnel",
            "incident",
            "media",
        ]
    ),
    "personnel": {"id", "userId", "firstName", "lastName", "personnelId", "type"},
    "media": {"id", "type"},
    "evaluation": set(
        [
            "id",
            "eventId",
            "userId",
            "eventPersonnelId",
            "completedBy",
            "status",
            "evaluationTemplate",
            "results",
            "eventSummary",
            "eventTimes",
            "scaleScoreLevel",
            "clearReason",
            "rawPercentScore",
            "earnedScore",
            "totalPossibleScore",
            "isPointsOff",
            "deleted",
            "isTraining",
            "isSandbox",
            "hasOverride",
            "lowTranscriptionQuality",
            "createdAt",
            "phaseEnrollments",
        ]
    ),
    "evaluationTemplate": set(
        [
            "id",
            "name",
            "color",
            "sandboxMode",
            "sandboxExpiresAt",
            "active",
            "templateIdentifier",
            "version",
            "isPdfTemplate",
        ]
    ),
    "result": set(
        [
            "id",
            "eventId",
            "userId",
            "evaluationTemplateCriteria",
            "score",
            "totalPossibleScore",
            "manualInputValue",
            "speedSeconds",
            "isPassing",
            "overrideAiOriginalResult",
            "classification",
            "comment",
            "explanation",
            "overrideReason",
            "overrideBy",
            "qaResponse",
            "protocolResults",
        ]
    ),
    "criteria": set(
        [
            "id",
            "description",
            "orderIndex",
            "score",
            "scoringCriteriaCriticalityLevelId",
            "parentCriteriaId",
            "type",
            "taskId",
            "skillArea",
            "smartTask",
        ]
    ),
    "skillArea": {"id", "refId", "name", "description"},
    "smartTask": set(
        [
            "id",
            "prompt",
            "contextSources",
            "additionalInstructions",
            "overrideGeneratedInstructions",
            "type",
        ]
    ),
    "qaResponse": {"smartTaskId", "standardCriteriaId", "passing", "explanation", "answer"},
    "answerItem": set(
        [
            "id",
            "mediaId",
            "identifiedUserId",
            "start",
            "order",
            "type",
            "content",
            "contentWithSpeaker",
            "identifiedSpeaker",
            "timestamp",
            "speakerSegment",
        ]
    ),
    "contextSource": set(
        [
            "speakerSegment",
            "mediaId",
            "identifiedSpeaker",
            "identifiedUserId",
            "id",
            "type",
            "content",
            "start",
            "order",
            "contentWithSpeaker",
        ]
    ),
    "speakerSegment": set(
        [
            "id",
            "start",
            "end",
            "sentimentScore",
            "speakerIdx",
            "channel",
            "audioOffset",
            "transcriptionText",
            "sentiment",
            "speaker",
            "segmentKind",
            "objectKey",
            "originalText",
            "words",
            "smoothedWords",
            "identifiedUserId",
        ]
    ),
    "word": {"word", "start", "end", "score"},
    "smoothedWord": {"wordIndex", "original", "smoothed"},
    "protocolResult": set(
        [
            "id",
            "percentScore",
            "guideCardName",
            "isEdited",
            "overrideBy",
            "overrideByName",
            "overrideReason",
            "overrideAt",
            "evaluationData",
        ]
    ),
    "evaluationData": set(
        [
            "protocolName",
            "knowledgeId",
            "knowledgeVersionId",
            "knowledgeSectionId",
            "allCallersKnowledgeId",
            "allCallersKnowledgeVersionId",
            "allCallersKnowledgeSectionId",
            "finalScore",
            "selectionScore",
            "questionsScore",
            "preArrivalScore",
            "allCallersScore",
            "selection",
            "questions",
            "allCallers",
            "preArrival",
            "assist",
        ]
    ),
    "selection": set(
        [
            "selectedGuidecardId",
            "selectedKnowledgeId",
            "aiRecommendedGuidecardId",
            "aiRecommendedKnowledgeId",
            "overrideBy",
            "isCorrect",
            "score",
            "confidence",
            "justification",
            "feedback",
            "overrideByName",
            "overrideReason",
            "overrideAt",
            "scoringBreakdown",
        ]
    ),
    "selectionBreakdown": {
        "isCorrect",
        "aiRecommendedGuidecardId",
        "selectedGuidecardId",
        "justification",
    },
    "questionGroup": {
        "questions",
        "aiExplanation",
        "contextSources",
        "summary",
        "scoringBreakdown",
    },
    "instructionGroup": {"instructions", "aiExplanation", "contextSources", "scoringBreakdown"},
    "assist": set(
        [
            "requestedKnowledgeSectionId",
            "requestedKnowledgeId",
            "assistantIdentifier",
            "requestedGuidecardName",
            "diverged",
        ]
    ),
    "question": set(
        [
            "questionId",
            "parentQuestionId",
            "askedAtSeconds",
            "answeredAtSeconds",
            "aiScore",
            "overrideBy",
            "referenceId",
            "questionText",
            "answer",
            "displayCriteria",
            "lowQualityCriteria",
            "highQualityCriteria",
            "aiSummary",
            "source",
            "overrideByName",
            "overrideReason",
            "isCritical",
            "isOptional",
            "answered",
            "conditionMet",
            "answeredUnprompted",
            "scoring",
            "askedSegment",
            "answerSegment",
            "overrideAt",
        ]
    ),
    "questionScoring": {
        "includesInScore",
        "exclusionReason",
        "questionWeight",
        "percentContribution",
        "pointValue",
    },
    "questionsBreakdown": set(
        [
            "totalQuestions",
            "criticalQuestions",
            "nonCriticalQuestions",
            "criticalAnswered",
            "nonCriticalAnswered",
            "criticalWeight",
            "nonCriticalWeight",
            "totalPossibleWeight",
            "earnedWeight",
            "optionalQuestions",
            "conditionNotMetQuestions",
        ]
    ),
    "instruction": set(
        [
            "instructionId",
            "referenceId",
            "instructionText",
            "aiSummary",
            "overrideByName",
            "overrideReason",
            "isCritical",
            "delivered",
            "score",
            "deliveredSegment",
            "scoring",
            "overrideBy",
            "overrideAt",
        ]
    ),
    "instructionScoring": {"instructionWeight", "percentContribution", "pointValue"},
    "instructionsBreakdown": set(
        [
            "totalInstructions",
            "criticalInstructions",
            "nonCriticalInstructions",
            "criticalDelivered",
            "nonCriticalDelivered",
            "criticalWeight",
            "nonCriticalWeight",
            "totalPossibleWeight",
            "earnedWeight",
        ]
    ),
    "variableValue": set(
        [
            "value",
            "variable",
            "explanation",
            "originalValue",
            "overrideReason",
            "index",
            "overrideBy",
            "overrideAt",
        ]
    ),
    "eventTime": {"explanation", "name", "seconds", "segment"},
}


def for_tenant(example: Any, tenant: int) -> Any:
    """The example as a tenant reads it: every `tenantId` is that tenant's id."""
    if isinstance(example, dict):
        return {
            key: tenant if key == "tenantId" else for_tenant(value, tenant)
            for key, value in example.items()
        }
    if isinstance(example, list):
        return [for_tenant(value, tenant) for value in example]
    return example
