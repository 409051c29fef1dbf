"""The audit trail nobody can rewrite: who may send records, who may write the table and how,
the writer's conditional appends, refused logins and operator commands in the trail.

Roles are read from the SAM-translated template, as the local stack and AWS enforce them; the
writer, the authorizer and the CLI run against moto with those roles enforced.
"""

import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatchcase
from types import ModuleType
from typing import Any

import pytest
from botocore.exceptions import ClientError

from local.iam import default_function_roles
from local.template import load_yaml, table_arn
from psap.audit import store as audit_store
from psap.audit.chain import verify_lines
from psap.audit.recording import AuditRecord
from psap.audit.store import Appended, ForgedRecord, RecordAppender, chains_between
from psap.auth import store as auth_store
from psap.auth.credentials import OPERATOR, CredentialKind
from psap.auth.permissions import Permission
from psap.auth.tokens import new_token
from psap.clock import utc_now
from psap.config import audit_queue_url, audit_table
from psap.http.operations import operation_for
from psap.storage.dynamodb import dynamodb
from psap.storage.sqs import sqs
from tests.support.audit import (
    TEMPLATE,
    audit_queue_event,
    audit_record,
    queued_messages,
    queued_records,
    set_function_environment,
)
from tools.admin import main as admin_cli
from tools.lint_template import TEMPLATE as TEMPLATE_PATH
from tools.lint_template import translated_template

AUTHORIZERS = {"PartnerAuthorizerFunction", "CadAuthorizerFunction"}
# A public route that audits a tenant's act itself: the console's sign-in (docs/console.md).
SIGN_IN = {"ConsoleSessionFunction"}
READS = {"dynamodb:GetItem", "dynamodb:Query", "dynamodb:BatchGetItem", "dynamodb:DescribeTable"}
NOW = datetime.now(UTC).replace(microsecond=0)


@pytest.fixture(autouse=True)
def _audit_functions_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    set_function_environment(monkeypatch)


def _listed(statement: Mapping[str, Any], key: str) -> list[str]:
    value = statement.get(key, [])
    return [str(item) for item in (value if isinstance(value, list) else [value])]


def _granted(arn: str, service: str) -> dict[str, set[str]]:
    """Function id -> the actions of `service` its role allows on `arn` (wildcards too)."""
    granted: dict[str, set[str]] = {}
    for function_id, role in default_function_roles().items():
        for statement in role.statements(managed=True):
            if statement.get("Effect") != "Allow":
                continue
            if not any(fnmatchcase(arn, pattern) for pattern in _listed(statement, "Resource")):
                continue
            for action in _listed(statement, "Action"):
                if action == "*" or action.startswith(f"{service}:"):
                    granted.setdefault(function_id, set()).add(action)
    return granted


def _chain_lines(tenant: int) -> list[str]:
    """The tenant's chains of today as an export writes them (psap.audit.exports)."""
    from psap.audit.chain import head_line, record_line

    lines: list[dict[str, Any]] = []
    last = None
    for page in chains_between(tenant, NOW - timedelta(minutes=1), NOW + timedelta(minutes=1)):
        for entry in page:
            if last is not None and last.chain != entry.link.chain:
                lines.append(head_line(last))
            lines.append(record_line(entry.record, entry.link))
            last = entry.link
    if last is not None:
        lines.append(head_line(last))
    return [json.dumps(line) for line in lines]


# ---------------------------------------------------------------- the roles


def test_no_role_may_batch_write_update_or_delete_audit_records() -> None:
    # Given every function's role as SAM translates it (managed policies included)
    audit_arn = table_arn(TEMPLATE.physical_resources()["AuditTable"])
    # When the actions each role allows on the audit table are listed
    granted = _granted(audit_arn, "dynamodb")
    # Then the writer alone may put (and read a chain's head); the sealer reads the markers
    # and the heads, the archiver and the export worker read the chains; no role has
    # anything else: no BatchWriteItem, UpdateItem, DeleteItem, PartiQL or wildcard
    assert granted == {
        "AuditWriterFunction": {"dynamodb:PutItem", "dynamodb:Query", "dynamodb:GetItem"},
        "AuditSealerFunction": {"dynamodb:Query", "dynamodb:GetItem"},
        "AuditArchiverFunction": {"dynamodb:Query", "dynamodb:GetItem"},
        "AuditExportWorkerFunction": {"dynamodb:Query"},
    }
    assert {function_id for function_id, actions in granted.items() if actions - READS} == {
        "AuditWriterFunction"
    }
    # And no other IAM resource of the translated template grants on the audit table
    translated = translated_template()["Resources"]
    for logical_id, resource in translated.items():
        if resource["Type"] in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy", "AWS::IAM::User"):
            assert "AuditTable" not in json.dumps(resource), logical_id


def test_only_the_sealer_writes_the_seal_table_and_the_readers_only_read() -> None:
    # Given every function's role as SAM translates it
    seal_arn = table_arn(TEMPLATE.physical_resources()["AuditSealTable"])
    # When the actions each role allows on the seal table are listed
    granted = _granted(seal_arn, "dynamodb")
    # Then the sealer puts its digests, seals and positions (and reads them back), the
    # archiver gets a digest and a seal, the export worker queries a tenant's seals and the
    # digests: nothing else, and no other role
    assert granted == {
        "AuditSealerFunction": {
            "dynamodb:PutItem",
            "dynamodb:ConditionCheckItem",
            "dynamodb:Query",
            "dynamodb:GetItem",
        },
        "AuditArchiverFunction": {"dynamodb:GetItem"},
        "AuditExportWorkerFunction": {"dynamodb:Query"},
    }


def test_only_the_api_entrypoints_and_the_authorizers_may_send_audit_records() -> None:
    # Given the functions that serve a tenant's API route (the shared entrypoint) and the
    # authorizers
    entrypoints = {
        function_id
        for function_id, function in TEMPLATE.functions.items()
        if any(
            (operation := operation_for(event.method, event.path)) is not None
            and not operation.public
            for event in function.api_events
        )
    }
    queue_arn = f"arn:aws:sqs:us-east-1:123456789012:{TEMPLATE.queues['AuditQueue'].name}"
    # When the roles that may send to the audit queue are listed
    senders = {
        function_id
        for function_id, actions in _granted(queue_arn, "sqs").items()
        if actions & {"sqs:SendMessage", "sqs:*", "*"}
    }
    # Then they are exactly those: no worker, no writer, no documentation function
    assert entrypoints, "the template has API routes"
    assert senders == entrypoints | AUTHORIZERS | SIGN_IN
    # And the writer reads the audit queue only: no log subscription (log groups take lines
    # from every function's basic execution role)
    writer = TEMPLATE.functions["AuditWriterFunction"]
    assert [event.queue_id for event in writer.sqs_events] == ["AuditQueue"]
    document = load_yaml(TEMPLATE_PATH)
    events = document["Resources"]["AuditWriterFunction"]["Properties"]["Events"]
    assert {event["Type"] for event in events.values()} == {"SQS"}


def test_audit_records_are_kept_a_year_at_least() -> None:
    document = load_yaml(TEMPLATE_PATH)
    retention = document["Parameters"]["AuditRetentionDays"]
    assert retention["MinValue"] >= 365
    assert retention["Default"] >= retention["MinValue"]


def test_a_worker_role_cannot_send_an_audit_record(
    aws: None, call_as_function: Callable[..., Any]
) -> None:
    # Given the CAD worker's code running under its own role (a function that is no API
    # entrypoint, whatever its code or layers do)
    forged = audit_record(1, NOW, "req-from-a-worker").model_dump_json(by_alias=True)

    def send() -> None:
        sqs().send_message(QueueUrl=audit_queue_url(), MessageBody=forged)

    # When it sends a record to the audit queue, Then the queue refuses it
    with pytest.raises(ClientError) as refused:
        call_as_function("CadWorkerFunction", send)
    assert "AccessDenied" in str(refused.value)
    assert queued_messages() == []


# ---------------------------------------------------------------- the writer


def test_a_replayed_record_is_not_stored_twice_and_a_forged_one_is_refused(
    aws: None, import_function: Callable[[str], ModuleType], lambda_context: Any
) -> None:
    # Given a record appended by the writer
    writer = import_function("audit_writer")
    original = audit_record(21, NOW, "req-1").model_dump_json(by_alias=True)
    assert writer.handler(audit_queue_event([original]), lambda_context) == {
        "batchItemFailures": []
    }
    # When the same record arrives again, and then one with its request id saying otherwise
    replay = audit_queue_event([original])
    forged = audit_queue_event(
        [audit_record(21, NOW, "req-1", status=404).model_dump_json(by_alias=True)]
    )
    replayed = writer.handler(replay, lambda_context)
    refused = writer.handler(forged, lambda_context)
    # Then the replay writes nothing, the forgery is failed (to the dead-letter queue after
    # the retries), and the stored record is still the first one, alone in its chain
    assert replayed == {"batchItemFailures": []}
    assert refused == {"batchItemFailures": [{"itemIdentifier": forged["Records"][0]["messageId"]}]}
    lines = _chain_lines(21)
    assert len(lines) == 2  # the record and its chain's head
    assert json.loads(lines[0])["status"] == 200
    assert verify_lines(lines).records == 1


def test_the_store_never_replaces_a_record_even_when_asked_directly(aws: None) -> None:
    # Given a stored record
    appender = RecordAppender(365)
    assert appender.append(audit_record(22, NOW, "req-1")) is Appended.APPENDED
    # When the store is asked to append the same request with other content
    # Then it refuses, whatever chain position it would take
    with pytest.raises(ForgedRecord):
        RecordAppender(365).append(audit_record(22, NOW, "req-1", status=500))
    assert appender.append(audit_record(22, NOW, "req-1")) is Appended.REPLAYED
    (only,) = [json.loads(line) for line in _chain_lines(22) if "chainHead" not in line]
    assert only["status"] == 200


def test_writers_racing_for_a_chain_keep_it_whole(aws: None, monkeypatch: Any) -> None:
    # Given two writers and a single shard, so that every record lands in one chain
    monkeypatch.setattr(audit_store, "shard_of", lambda _request_id: 0)
    first, second = RecordAppender(365), RecordAppender(365)
    # When they append in turns, each with a stale idea of the chain's head
    for index in range(6):
        writer = first if index % 2 == 0 else second
        assert writer.append(audit_record(23, NOW, f"req-{index}")) is Appended.APPENDED
    # Then the chain holds the six records at positions 1..6, linked, and verifies
    lines = _chain_lines(23)
    assert [json.loads(line)["chain"]["seq"] for line in lines[:-1]] == [1, 2, 3, 4, 5, 6]
    assert verify_lines(lines).records == 6
    items = dynamodb().scan(TableName=audit_table())["Items"]
    assert sum(item["pk"]["S"].startswith("T#23#DAY#") for item in items) == 6


# ---------------------------------------------------------------- completeness


@pytest.fixture
def authorizer(
    aws_server: str, import_function: Callable[[str], ModuleType], monkeypatch: pytest.MonkeyPatch
) -> ModuleType:
    monkeypatch.setenv("CREDENTIAL_KIND", "partner")
    return import_function("authorizer")


def test_a_refused_credential_is_in_its_tenants_audit_trail_without_its_token(
    authorizer: ModuleType, load_event: Callable[[str], dict[str, Any]], lambda_context: Any
) -> None:
    # Given a tenant's revoked credential and a token that matches no credential
    tenant = auth_store.create_tenant("Riverside County 911").tenant_id
    issued = auth_store.issue_credential(
        tenant,
        CredentialKind.PARTNER,
        frozenset({Permission.VIEW_KNOWLEDGE}),
        label="old sync",
        expires_at=utc_now() + timedelta(days=30),
        issued_by=OPERATOR,
    )
    auth_store.revoke_credential(tenant, issued.credential.credential_id)
    # When each calls the data interface, and so does a malformed token (refused unread)
    for token in (issued.token, new_token("partner"), "psap_partner_not-a-real-token"):
        event = load_event("partner_authorizer")
        event["headers"]["Authorization"] = f"Bearer {token}"
        with pytest.raises(Exception, match=r"^Unauthorized$"):
            authorizer.handler(event, lambda_context)
    # Then the audit queue holds one refusal each of the two that were read: the revoked one
    # in its tenant, with the credential id; the unknown one in the platform's trail (tenant
    # 0); never a token. The malformed one is a metric of the authorizer's log line only.
    revoked, unknown = queued_records()
    assert (revoked["tenantId"], revoked["credentialId"], revoked["status"]) == (
        tenant,
        issued.credential.credential_id,
        401,
    )
    assert (revoked["operation"], revoked["principal"]) == ("authenticate", "old sync")
    assert (unknown["tenantId"], unknown["credentialId"], unknown["status"]) == (0, "", 401)
    assert issued.token not in json.dumps([revoked, unknown])
    assert AuditRecord.model_validate(revoked).request_id


def test_operator_commands_that_change_something_are_audited(
    aws: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the operator's CLI on the stack's tables
    from psap.config import auth_table, knowledge_table

    tables = ["--auth-table", auth_table(), "--knowledge-table", knowledge_table()]
    # When the operator creates a tenant, issues a credential, lists them, and revokes one
    assert admin_cli([*tables, "tenant", "create", "--name", "Riverside County 911"]) == 0
    issue = ["credential", "issue", "--tenant", "1", "--kind", "partner", "--label", "sync"]
    issue += ["--expires-in-days", "30"]
    assert admin_cli([*tables, *issue, "--permissions", "VIEW_KNOWLEDGE"]) == 0
    credential_id = capsys.readouterr().out.split("issued ")[1].split()[0]
    assert admin_cli([*tables, "credential", "list", "--tenant", "1"]) == 0
    revoke = ["credential", "revoke", "--tenant", "1", "--credential", credential_id]
    assert admin_cli([*tables, *revoke]) == 0
    printed = capsys.readouterr()
    # Then each change left one record (the listing none), naming the command, the tenant and
    # the credential acted on, the operator's identity, and never the token
    records = queued_records()
    assert [record["operation"] for record in records] == [
        "psap-admin tenant create",
        "psap-admin credential issue",
        "psap-admin credential revoke",
    ]
    assert [record["tenantId"] for record in records] == [0, 1, 1]
    assert records[2]["resourceIds"] == {"tenant": "1", "credential": credential_id}
    assert {record["credentialKind"] for record in records} == {"operator"}
    assert all(record["credentialId"].startswith("arn:aws:") for record in records)
    assert {record["status"] for record in records} == {200}
    assert "psap_partner_" not in json.dumps(records) + printed.err
