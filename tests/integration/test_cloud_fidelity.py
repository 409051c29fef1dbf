"""Cloud fidelity: the embedded AWS refuses what AWS refuses.

Each function acts under its role from the SAM-translated template, enforced by moto with
the gaps closed by local.iam_enforcement (per-item transaction actions, table and secret
resources, presigned URLs). Given / When / Then in each test.
"""

import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from local import iam, iam_enforcement
from local.template import TemplateError
from psap.storage.s3 import s3
from tests.conftest import TEMPLATE

ROOT = Path(__file__).resolve().parents[2]
ROLES = iam.default_function_roles()
TABLES = TEMPLATE.physical_resources()
KEY = {"pk": {"S": "T#1#PROBE"}, "sk": {"S": "probe"}}


def _client(
    service: str, endpoint: str | None, credentials: iam.RoleCredentials, **extra: Any
) -> Any:
    return boto3.client(  # type: ignore[call-overload]
        service,
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id=credentials.access_key_id,
        aws_secret_access_key=credentials.secret_access_key,
        aws_session_token=credentials.session_token,
        **extra,
    )


def _role(
    function_id: str, endpoint: str | None, without: tuple[str, ...] = ()
) -> iam.RoleCredentials:
    role = ROLES[function_id]
    if without:
        # A second role of the same function, with the actions taken out.
        role = iam.FunctionRole(
            function_id=role.function_id,
            role_name=f"{role.role_name[:50]}-without",
            trust_policy=role.trust_policy,
            policies=role.policies,
            managed_policy_arns=role.managed_policy_arns,
        )
    with iam_enforcement.paused():
        return iam.create_role(role, endpoint, without=without)


def _code(error: pytest.ExceptionInfo[ClientError]) -> str:
    return str(error.value.response["Error"]["Code"])


# ---------------------------------------------------------------------------- enforcement is on


def test_a_role_with_one_action_removed_fails_that_operation_locally(aws: None) -> None:
    # Given the knowledge-get function's role, and the same role without dynamodb:GetItem
    whole = _client("dynamodb", None, _role("KnowledgeGetFunction", None))
    lacking = _client(
        "dynamodb", None, _role("KnowledgeGetFunction", None, without=("dynamodb:GetItem",))
    )
    table = TABLES["KnowledgeTable"]
    # When each reads an item
    whole.get_item(TableName=table, Key=KEY)
    with pytest.raises(ClientError) as refused:
        lacking.get_item(TableName=table, Key=KEY)
    # Then the one without the action is refused, as AWS would refuse it
    assert _code(refused) == "AccessDeniedException"
    assert "dynamodb:GetItem" in str(refused.value)


def test_a_role_reaches_only_its_own_tables(aws: None) -> None:
    # Given the knowledge-get function, which has no business with the credential table
    client = _client("dynamodb", None, _role("KnowledgeGetFunction", None))
    # When it reads the credential table
    with pytest.raises(ClientError) as refused:
        client.get_item(TableName=TABLES["AuthTable"], Key=KEY)
    # Then it is refused: a policy scoped to one table matches no other
    assert _code(refused) == "AccessDeniedException"


def test_each_transaction_item_needs_its_own_action_on_its_table(aws: None) -> None:
    # Given a role that may put and update but not check conditions
    client = _client(
        "dynamodb",
        None,
        _role("MediaRadioTrafficUploadFunction", None, without=("dynamodb:ConditionCheckItem",)),
    )
    table = TABLES["TenantDataTable"]
    item = {**KEY, "n": {"N": "1"}}
    # When a transaction puts one item and checks another
    with pytest.raises(ClientError) as refused:
        client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": table, "Item": item}},
                {
                    "ConditionCheck": {
                        "TableName": table,
                        "Key": {"pk": {"S": "T#1#OTHER"}, "sk": {"S": "x"}},
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
            ]
        )
    # Then AWS's rule applies: every item's own action, not "TransactWriteItems"
    assert _code(refused) == "AccessDeniedException"
    assert "dynamodb:ConditionCheckItem" in str(refused.value)


def test_requests_signed_with_an_unknown_key_are_refused(aws: None) -> None:
    # Given a client with keys the embedded AWS never issued
    stranger = boto3.client(
        "dynamodb",
        region_name="us-east-1",
        aws_access_key_id="UNKNOWNKEYUNKNOWN000",
        aws_secret_access_key="nothing",
    )
    # Then its requests fail authentication
    with pytest.raises(ClientError) as refused:
        stranger.list_tables()
    assert _code(refused) == "UnrecognizedClientException"


# ---------------------------------------------------------------------------- least privilege


def _resources(statement: Mapping[str, Any]) -> list[str]:
    value = statement.get("Resource", [])
    return [str(item) for item in (value if isinstance(value, list) else [value])]


# Every API entrypoint and authorizer sends its audit records (docs/security.md, "Audit"):
# that one statement is not a write of the function's own data.
AUDIT_SEND = {
    "Effect": "Allow",
    "Action": ["sqs:SendMessage"],
    "Resource": f"arn:aws:sqs:us-east-1:123456789012:{TEMPLATE.queues['AuditQueue'].name}",
}


def _own_statements(function_id: str) -> list[Mapping[str, Any]]:
    return [s for s in ROLES[function_id].statements() if s != AUDIT_SEND]


def test_authorizers_may_only_get_items_of_the_credential_table() -> None:
    table_arn = f"arn:aws:dynamodb:us-east-1:123456789012:table/{TABLES['AuthTable']}"
    for function_id in ("PartnerAuthorizerFunction", "CadAuthorizerFunction"):
        # Besides the use of the table's key (template.yaml's TenantDataKeyUsers).
        statements = [s for s in _own_statements(function_id) if not str(s["Action"]).count("kms:")]
        assert AUDIT_SEND in ROLES[function_id].statements(), function_id
        assert {a for s in statements for a in _listed_actions(s)} == {"dynamodb:GetItem"}
        assert {resource for s in statements for resource in _resources(s)} == {table_arn}


def _listed_actions(statement: Mapping[str, Any]) -> list[str]:
    actions = statement.get("Action", [])
    return [str(action) for action in (actions if isinstance(actions, list) else [actions])]


def test_no_function_holds_a_wildcard_action_or_resource() -> None:
    for function_id, role in ROLES.items():
        for statement in role.statements():
            actions = statement.get("Action", [])
            for action in actions if isinstance(actions, list) else [actions]:
                assert "*" not in str(action), f"{function_id}: {action}"
            for resource in _resources(statement):
                # A table's indexes or a bucket's keys may be a pattern; everything is not.
                assert resource != "*", f"{function_id}: Resource *"
                assert resource.count("*") <= 1 and not resource.endswith(":*"), (
                    f"{function_id}: {resource}"
                )


_WRITES = ("Put", "Update", "Delete", "BatchWrite", "Send", "Create", "Abort", "Write")
# The one reader that writes, and what: the console's session authorizer moves its session's
# last-seen time (the idle limit, docs/console.md), at most once a minute.
_READER_WRITES = {"ConsoleAuthorizerFunction": {"dynamodb:UpdateItem"}}


def test_functions_that_only_read_hold_no_write_action() -> None:
    # Given every function whose events are all GET routes (or that is an authorizer)
    readers = [
        function.logical_id
        for function in TEMPLATE.functions.values()
        if (function.api_events and all(e.method == "GET" for e in function.api_events))
        or function.logical_id.endswith("AuthorizerFunction")
    ]
    assert "KnowledgeGetFunction" in readers
    for function_id in readers:
        # Then none of them may write: no put, update, delete, send or create (but its
        # audit records)
        writes = {
            action
            for statement in _own_statements(function_id)
            for action in _listed_actions(statement)
            if any(action.split(":")[1].startswith(verb) for verb in _WRITES)
        }
        allowed = _READER_WRITES.get(function_id, set())
        assert writes == allowed, f"{function_id} may write: {sorted(writes)}"


def test_a_template_with_an_unknown_policy_template_stops_naming_the_function(
    tmp_path: Path,
) -> None:
    # Given the template with a policy template SAM does not know
    text = (ROOT / "template.yaml").read_text()
    broken = text.replace(
        "      Policies:\n", "      Policies:\n        - NoSuchPolicyTemplate: {}\n", 1
    )
    path = tmp_path / "template.yaml"
    path.write_text(broken)
    # Then roles cannot be built, and the message names the function
    with pytest.raises(TemplateError) as stopped:
        iam.function_roles(path)
    assert "PartnerAuthorizerFunction" in str(stopped.value)
    assert "Policies" in str(stopped.value)


# ---------------------------------------------------------------------------- presigned URLs


def _fetch(
    url: str, method: str = "GET", data: bytes | None = None, content_type: str | None = None
) -> tuple[int, bytes]:
    headers = {"Content-Type": content_type} if content_type else {}
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_a_tampered_or_sigv2_presigned_url_is_refused(aws_server: str) -> None:
    # Given an object and the export-get function's role, which may read export files
    bucket = TABLES["AuditExportBucket"]
    s3().put_object(Bucket=bucket, Key="tenants/1/exports/a.ndjson", Body=b"{}\n")
    credentials = _role("AuditExportGetFunction", aws_server)
    sigv4 = _client("s3", aws_server, credentials, config=Config(signature_version="s3v4"))
    sigv2 = _client("s3", aws_server, credentials, config=Config(signature_version="s3"))
    params = {"Bucket": bucket, "Key": "tenants/1/exports/a.ndjson"}
    good = sigv4.generate_presigned_url("get_object", Params=params, ExpiresIn=60)
    old = sigv2.generate_presigned_url("get_object", Params=params, ExpiresIn=60)
    # When each is fetched, and the good one with its key changed
    results = {
        "sigv4": _fetch(good)[0],
        "sigv2": _fetch(old)[0],
        "tampered": _fetch(good.replace("a.ndjson", "b.ndjson"))[0],
        "anonymous": _fetch(good.split("?")[0])[0],
    }
    # Then only the valid SigV4 URL reads the object
    assert results == {"sigv4": 200, "sigv2": 400, "tampered": 403, "anonymous": 403}


def test_a_presigned_url_grants_no_more_than_its_signers_role(aws_server: str) -> None:
    # Given a URL signed by the partner authorizer, whose role has no S3 access at all
    bucket = TABLES["AuditExportBucket"]
    s3().put_object(Bucket=bucket, Key="tenants/1/exports/b.ndjson", Body=b"{}\n")
    credentials = _role("PartnerAuthorizerFunction", aws_server)
    client = _client("s3", aws_server, credentials, config=Config(signature_version="s3v4"))
    url = client.generate_presigned_url(
        "get_object", Params={"Bucket": bucket, "Key": "tenants/1/exports/b.ndjson"}, ExpiresIn=60
    )
    # Then S3 refuses it
    assert _fetch(url)[0] == 403


def test_every_presigning_path_signs_sigv4_in_us_east_1(aws_server: str) -> None:
    # Given the two presigning helpers (incident upload POST form, audit export GET)
    from psap.storage.s3 import presigned_get_url, presigned_post

    bucket = TABLES["AuditExportBucket"]
    url = presigned_get_url(bucket, "tenants/1/exports/c.ndjson", 60, filename="c.ndjson")
    form = presigned_post(
        bucket, "tenants/1/uploads/c.jsonl", max_bytes=100, expires_in_seconds=60
    ).fields
    # Then both are SigV4 with a us-east-1 credential scope
    assert "X-Amz-Algorithm=AWS4-HMAC-SHA256" in url
    assert "%2Fus-east-1%2Fs3%2Faws4_request" in url
    assert form["x-amz-algorithm"] == "AWS4-HMAC-SHA256"
    assert "/us-east-1/s3/aws4_request" in form["x-amz-credential"]
