"""The OpenAPI descriptions of the knowledge operations: where the spec says "not shown",
these texts say what this service does (the README has the same choices in short)."""

from typing import Any

PAYLOAD = """\
Payload (ours; the spec does not show it): metadata (`name`, `description`, `provider`,
`knowledgeType`, `externalId`), `apiControl`, and the content sections `questionList`,
`spokenInstructions`, `actions.cadActions`, `actions.smsMessages`,
`actions.dispatchTriggers`, `actions.links` and `media`. Unknown fields are refused with 400
naming them. The body limit is {limit} bytes (413 above it, before parsing).

`apiControl` has one boolean flag per section (`questionList`, `spokenInstructions`,
`cadActions`, `smsMessages`, `dispatchTriggers`, `links`, `media`; a flag left out is true):
true = the API owns the section and every append replaces it whole (a section left out is
then empty); false = the service owns it: it is edited inside the service and carried
forward by every append, and an append that sends it is refused with 400 naming it. The
flags are set by the create and immutable: an append whose flags differ is refused (400).

referenceIds: every item of every list gets one, `q-` (questions, grouped ones included),
`si-`, `ca-`, `sms-`, `dt-`, `lk-`, `md-` + 8 lowercase hex, unique within the entry. On
create, supplied ids are ignored. On append, a supplied id updates that item in place, an
omitted one adds a new item with a fresh id, and an id the previous version does not have
(in that section) is refused with 400 naming it.

Questions: a root question may carry `displayCriteria`; its `relatedQuestions` groups carry
their own `displayCriteria` and questions. `effectiveDisplayCriteria` (read-only) is the
condition that really applies: a grouped question's stacked on its group's,
`(group) AND (own)`.

Links (`actions.links`): `targetExternalId` is the target's own `externalId` under the same
`provider` in this tenant, published or not, loaded before. It is resolved on every write;
one unresolved id refuses the whole request with 400 and nothing is written. The read-only
`targetKnowledgeId`, `targetDocumentName`, `targetKnowledgeType` and `targetProvider` are
stored at write time and read back unchanged, even after the target is renamed or deleted.
A service-owned links section carried forward keeps the targets it was stored with.

Media: on create, a media item's supplied `referenceId` (or `clientId`, on create and
append) is a client id; a question's or spoken instruction's `referenceMedia` or an SMS
message's `mediaRef` naming it is repointed at the assigned `md-` id. A reference that names
no media item of the resulting version is refused with 400.

`publish: true` publishes the version written at once; otherwise it is a draft until
`POST .../versions/{{version}}/publish`.
"""

CREATE_DESCRIPTION = (
    "Creates an entry (source API_IMPORT) and its version 1, and answers 201 with the full "
    "entry as GET returns it: the new `id`, version 1 and every assigned referenceId. "
    "`externalId` is unique per (tenant, provider): a second create with the same pair is 409 "
    "naming the existing id. `name`, `provider` and `knowledgeType` are required. On create "
    "a service-owned section may carry initial content; from then on the service owns it.\n\n"
    + PAYLOAD
)

APPEND_DESCRIPTION = (
    "Appends an immutable version (number latest + 1) and answers 201 with the full entry at "
    "that version. Concurrent appends are serialized: each gets its own number, 2..N with no "
    "gap. `apiControl` is required and must equal the create's. `name` and `description` may "
    "change (omit to keep); `provider`, `knowledgeType` and `externalId` cannot. An entry "
    "adopted outside the API (no version yet) gets its version 1 and its flags this way.\n\n"
    + PAYLOAD
)

GET_DESCRIPTION = (
    "The full content of the latest version, exactly as stored at write time (link target "
    "fields are not re-resolved), with the entry's `publishedVersion`; `?version=N` reads an "
    "older version. `published` says whether the version shown is the published one. "
    "Service-side edits of service-owned sections show on the card at once and here from the "
    "next appended version on. An entry adopted outside the API that has no version yet "
    "answers with `version` null and empty sections. A deleted entry answers 404."
)

PUBLISH_DESCRIPTION = (
    "Makes this version the published one (exactly one at a time: the previous one is no "
    "longer published). `publishedVersion` and `updatedAt` change; publishing the version "
    "already published changes nothing. Any version 1..latest may be published, so a "
    "partner can load drafts first and publish later, or roll back. Answers the entry "
    "summary; an unknown version is 404."
)

UNPUBLISH_DESCRIPTION = (
    "Leaves the entry with no published version: `publishedVersion` becomes null and "
    "`updatedAt` changes (nothing changes when none was published). Answers the summary."
)

DELETE_DESCRIPTION = (
    "Soft delete, answering 204: the entry leaves the list (its counters are adjusted in the "
    "same transaction), GET, append and the card answer 404, and its externalId is free for a "
    "new entry. Links other entries stored to it still read as stored. A second delete is 404."
)

CARD_DESCRIPTION = (
    "The card of the latest version: `version` (its number), `versionId` (the version record's "
    "own id), `active` (whether it is the published one) and one digest per section, "
    "preferring the service-side (user) edit of a section where one exists. Section items: "
    "`section` (apiControl flag name), `owner` (API or SERVICE), `edited`, `editedAt`, "
    "`itemCount`, `digest` (plain text for an assistant, with referenceIds and effective "
    "display conditions, about 6 000 characters at most) and `contentHash` (sha256 of the "
    "items). Digests are made asynchronously after every write: `processingStatus` is PENDING "
    "until then (sections are those of the last digest made), then READY, or FAILED with "
    "`processingReason`."
)

_ERROR_INFO = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorInfo"}}}
CREATE_RESPONSES: dict[int, Any] = {
    201: {"description": "The full entry at version 1, as GET returns it"},
    409: {"description": "externalId already used under the provider", "content": _ERROR_INFO},
    413: {"description": "Request body over the limit", "content": _ERROR_INFO},
}
APPEND_RESPONSES: dict[int, Any] = {
    201: {"description": "The full entry at the new version, as GET returns it"},
    413: {"description": "Request body over the limit", "content": _ERROR_INFO},
}
