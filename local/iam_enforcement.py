"""The embedded AWS refuses what the caller's IAM policies do not allow, as AWS does.

moto can check a request's SigV4 signature and its caller's policies (its IAM
authentication mode), but it leaves gaps that would let code pass here and fail on AWS:

- DynamoDB is authorized against resource "*", so a policy scoped to a table (every SAM
  policy template) matches nothing; and a transaction is authorized as one action,
  `TransactWriteItems`, where AWS checks each item's own action (PutItem, UpdateItem,
  DeleteItem, ConditionCheckItem) on its table. Batch calls are likewise checked per table.
- Secrets Manager is authorized against "*" instead of the secret's ARN, and SNS's
  Publish against "*" instead of the topic's ARN.
- SQS's batch calls are authorized as SendMessageBatch/DeleteMessageBatch, which are not IAM
  actions: AWS checks sqs:SendMessage and sqs:DeleteMessage.
- A presigned S3 URL has no Authorization header, which moto's check cannot read. Here its
  SigV4 query signature and expiry are verified and the signer's policies applied; a
  SigV2 URL is refused, as S3 refuses it for buckets created since June 2020.
- A browser-form upload (a presigned POST) is stored by moto whatever its policy says. Here
  its signature, expiry and conditions, `content-length-range` included, are judged as S3
  judges them (local.s3_post_policy), then the signer's policies applied.
- A store's customer-managed key is not checked at all: here the caller's right to use it
  is (local.key_enforcement), and CloudWatch Logs' own right to a log group's key, whoever
  calls, even before enforcement is on (AWS checks it for the service, not the caller).

`install()` patches these in (idempotent); `enforcing()` turns enforcement on for a block,
`paused()` off (for setup that acts as the Lambda service, such as assuming roles).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from werkzeug.exceptions import HTTPException

from local import key_enforcement, s3_post_policy
from local.template import ACCOUNT_ID, REGION, log_group_arn

_TRANSACTION_ACTIONS: Final = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}
_SQS_ACTIONS: Final = {
    "SendMessageBatch": "SendMessage",
    "DeleteMessageBatch": "DeleteMessage",
    "ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
}
_state = threading.Lock()


def install() -> None:
    from moto.core.authorization import ActionAuthenticatorMixin  # noqa: PLC0415 - lazy moto

    if getattr(ActionAuthenticatorMixin, "_psap_enforcement", False):
        return
    normal = ActionAuthenticatorMixin._authenticate_and_authorize_normal_action
    for_s3 = ActionAuthenticatorMixin._authenticate_and_authorize_s3_action

    def authorize_normal(self: Any, resource: str = "*") -> None:
        service = type(self).__module__.split(".")[1]
        if service == "logs":
            _authorize_log_group_key(self)
        if not _enforced():
            _count_unauthenticated()
            return
        if service == "dynamodb":
            _authorize_each(self, _dynamodb_checks(self))
        elif service == "secretsmanager":
            _authorize_each(self, [(self._get_action(), _secret_arn(self))])
        elif service == "sqs":
            action = self._get_action()
            _authorize_each(self, [(_SQS_ACTIONS.get(action, action), resource)])
        elif service == "sns" and self._get_action() in {"Publish", "PublishBatch"}:
            topic = self._get_param("TopicArn") or self._get_param("TargetArn") or "*"
            _authorize_each(self, [("Publish", str(topic))])
        elif service == "apigateway":
            # API Gateway's management API (usage plans and keys: the operator's) is authorized
            # by HTTP method on its path. moto cannot recompute botocore's signature for this
            # REST protocol, so here the caller's key and policies are checked, not the
            # signature (docs/cloud-fidelity.md).
            _authorize_each(
                self,
                [(self.method, f"arn:aws:apigateway:{REGION}::{self.path}")],
                verify_signature=False,
            )
        else:
            normal(self, resource)

    def authorize_s3(
        self: Any, bucket_name: str | None = None, key_name: str | None = None
    ) -> None:
        if _enforced() and "Authorization" not in self.headers:
            if _is_form_upload(self, key_name):
                _authorize_form_upload(self, bucket_name)
            else:
                _authorize_presigned(self, bucket_name, key_name)
            return
        if _enforced() and str(self.headers.get("Authorization", "")).startswith("AWS "):
            _refuse_sigv2()
        for_s3(self, bucket_name, key_name)
        if _enforced():
            _authorize_s3_key(self, _signer(self), bucket_name)

    ActionAuthenticatorMixin._authenticate_and_authorize_normal_action = authorize_normal  # type: ignore[method-assign]
    ActionAuthenticatorMixin._authenticate_and_authorize_s3_action = authorize_s3  # type: ignore[method-assign]
    ActionAuthenticatorMixin._psap_enforcement = True  # type: ignore[attr-defined]


def _enforced() -> bool:
    from moto import settings  # noqa: PLC0415
    from moto.core.authorization import ActionAuthenticatorMixin  # noqa: PLC0415

    return bool(ActionAuthenticatorMixin.request_count >= settings.INITIAL_NO_AUTH_ACTION_COUNT)


def _count_unauthenticated() -> None:
    from moto.core.authorization import ActionAuthenticatorMixin  # noqa: PLC0415

    ActionAuthenticatorMixin.request_count += 1


def set_enforced(on: bool) -> None:
    """Turns enforcement on or off for every request from now on (both moto modes)."""
    from moto import settings  # noqa: PLC0415
    from moto.core.authorization import ActionAuthenticatorMixin  # noqa: PLC0415

    install()
    with _state:
        settings.INITIAL_NO_AUTH_ACTION_COUNT = 0 if on else float("inf")
        ActionAuthenticatorMixin.request_count = 0


@contextlib.contextmanager
def enforcing() -> Iterator[None]:
    set_enforced(True)
    try:
        yield
    finally:
        set_enforced(False)


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Enforcement off for a block (the Lambda service's own calls), then as it was."""
    was = _enforced()
    set_enforced(False)
    try:
        yield
    finally:
        set_enforced(was)


# ---------------------------------------------------------------------------- decisions

Decision = Callable[[str, str, str, bool], None]
# Told of every decision: (caller ARN, action, resource, allowed). The local stack prints
# refusals with the role and action, so a missing permission is found in seconds.
_listeners: list[Decision] = []


def listen(listener: Decision) -> Callable[[], None]:
    """Adds a listener of decisions; returns the function that removes it."""
    _listeners.append(listener)
    return lambda: _listeners.remove(listener)


def _check(request: Any, resource: str) -> None:
    caller = str(request._access_key.arn)
    action = str(request._action)
    try:
        request.check_action_permitted(resource)
    except Exception:
        for listener in list(_listeners):
            listener(caller, action, resource, False)
        raise
    for listener in list(_listeners):
        listener(caller, action, resource, True)


# ---------------------------------------------------------------------------- normal actions


# What the JSON-protocol services answer for a refused request (moto answers these in
# XML, which their clients cannot read: the error code would be lost).
_JSON_ERRORS: Final = {
    "dynamodb": "com.amazonaws.dynamodb.v20120810#",
    "logs": "",
    "secretsmanager": "",
    "sqs": "com.amazonaws.sqs#",
}
_JSON_CODES: Final = {
    "AccessDenied": ("AccessDeniedException", 400),
    "InvalidClientTokenId": ("UnrecognizedClientException", 400),
    "SignatureDoesNotMatch": ("InvalidSignatureException", 400),
}


class _JsonRefusal(HTTPException):
    def __init__(self, service: str, code: str, message: str) -> None:
        kind, status = _JSON_CODES.get(code, (code, 400))
        if service == "sqs" and kind == "AccessDeniedException":
            status = 403  # SQS says 403 where DynamoDB and Secrets Manager say 400
        body = {"__type": _JSON_ERRORS[service] + kind, "message": message}
        super().__init__(description=json.dumps(body))
        self.code = status


def _authorize_each(
    response: Any, checks: list[tuple[str, str]], *, verify_signature: bool = True
) -> None:
    """One signature check, then every (action, resource) the request needs."""
    from moto.core.exceptions import _RESTError  # noqa: PLC0415
    from moto.iam.access_control import IAMRequest  # noqa: PLC0415

    service = type(response).__module__.split(".")[1]
    path = response.raw_path
    query = response.uri.partition("?")[2]
    resource = "*"
    try:
        request = IAMRequest(
            account_id=response.current_account,
            method=response.method,
            path=f"{path}?{query}" if query else path,
            data=response.data,
            body=response.raw_body,
            headers=response.headers,
            action=checks[0][0],
        )
        if verify_signature:
            request.check_signature()
        for action, resource in checks:
            # moto checks one action per request; AWS checks each one this request needs.
            request._action = f"{service}:{action}"
            _check(request, resource)
        needs, context = _key_needs(response, service, checks)
        _authorize_key_use(request._access_key, service, needs, encryption_context=context)
    except key_enforcement.KeyRefusal as refusal:
        _refuse_key_use(service, refusal)
    except _RESTError as refusal:
        if service not in _JSON_ERRORS:
            raise
        message = refusal.message
        if refusal.error_type == "AccessDenied":
            message = f"{message} on resource: {resource}"
        raise _JsonRefusal(service, refusal.error_type, message) from refusal


def _key_needs(
    response: Any, service: str, checks: list[tuple[str, str]]
) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """The (kms action, key ARN) pairs of one request, and the encryption context the
    service would give KMS."""
    if service == "dynamodb":
        return key_enforcement.dynamodb_needs(checks), {}
    if service == "sqs":
        return key_enforcement.sqs_needs(*checks[0]), {}
    if service == "secretsmanager":
        action, secret = checks[0]
        needs = key_enforcement.secretsmanager_needs(action, _json_body(response))
        return needs, {"SecretARN": secret}
    if service == "sns":
        action, topic = checks[0]
        return key_enforcement.sns_needs(action, topic), {"aws:sns:topicArn": topic}
    return [], {}


def _refuse_key_use(service: str, refusal: key_enforcement.KeyRefusal) -> None:
    """Each service's own answer when the caller may not use the key (AWS's words)."""
    from moto.core.exceptions import _RESTError  # noqa: PLC0415

    if service == "sns":  # a query-protocol service: moto's XML error, status 400
        raise _RESTError("KMSAccessDenied", str(refusal)) from refusal
    if service == "secretsmanager":
        raise _JsonRefusal(service, "AccessDenied", "Access to KMS is not allowed") from refusal
    # DynamoDB answers AccessDeniedException; SQS its own KmsAccessDenied.
    code = "KmsAccessDenied" if service == "sqs" else "AccessDenied"
    raise _JsonRefusal(service, code, str(refusal)) from refusal


def _authorize_key_use(
    access_key: Any,
    service: str,
    needs: list[tuple[str, str]],
    *,
    encryption_context: Mapping[str, str] | None = None,
) -> None:
    """The caller's right to use the keys of the stores it touches (local.key_enforcement),
    told to the listeners like any other decision."""
    caller = str(access_key.arn)
    try:
        key_enforcement.authorize(access_key, service, needs, encryption_context=encryption_context)
    except key_enforcement.KeyRefusal as refusal:
        for listener in list(_listeners):
            listener(caller, refusal.action, refusal.key_arn, False)
        raise


def _authorize_log_group_key(response: Any) -> None:
    """CloudWatch Logs' own right to a log group's key, under the group's encryption
    context; what the caller may do is not asked (local.key_enforcement)."""
    body = _json_body(response)
    needs = key_enforcement.logs_needs(str(response._get_action()), body)
    if not needs:
        return
    group = log_group_arn(str(body.get("logGroupName") or ""))
    try:
        key_enforcement.service_authorize(
            key_enforcement.LOGS_PRINCIPAL,
            needs,
            encryption_context={"aws:logs:arn": group},
            source={"aws:SourceAccount": ACCOUNT_ID, "aws:SourceArn": group},
        )
    except key_enforcement.KeyRefusal as refusal:
        for listener in list(_listeners):
            listener(refusal.caller, refusal.action, refusal.key_arn, False)
        raise _JsonRefusal(
            "logs",
            "AccessDenied",
            f"The specified KMS key does not exist or is not allowed to be used with Arn '{group}'",
        ) from refusal


def _signer(response: Any) -> Any:
    """The access key of a request signed in its Authorization header (SigV4)."""
    from moto.iam.access_control import create_access_key  # noqa: PLC0415

    authorization = str(response.headers.get("Authorization", ""))
    access_key_id = authorization.partition("Credential=")[2].partition("/")[0]
    return create_access_key(
        account_id=response.current_account,
        partition="aws",
        access_key_id=access_key_id,
        headers=response.headers,
    )


def _authorize_s3_key(response: Any, access_key: Any, bucket_name: str | None) -> None:
    from moto.s3.exceptions import S3ClientError  # noqa: PLC0415

    needs = key_enforcement.s3_needs(str(response._get_action()), bucket_name)
    try:
        _authorize_key_use(access_key, "s3", needs)
    except key_enforcement.KeyRefusal as refusal:
        raise S3ClientError("AccessDenied", str(refusal), status_code=403) from refusal


def _table_arn(name: str) -> str:
    if name.startswith("arn:"):
        return name
    return f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/{name}"


def _json_body(response: Any) -> dict[str, Any]:
    body = response.body
    if isinstance(body, dict):  # some moto handlers parse the JSON body themselves
        return body
    try:
        parsed = json.loads(body or b"{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _dynamodb_checks(response: Any) -> list[tuple[str, str]]:
    """What AWS authorizes for one DynamoDB request: (action, table or index ARN) pairs."""
    action = str(response._get_action())
    body = _json_body(response)
    if action == "TransactWriteItems":
        checks = []
        for entry in body.get("TransactItems", []):
            kind, operation = next(iter(entry.items()))
            checks.append(
                (_TRANSACTION_ACTIONS.get(kind, kind), _table_arn(operation.get("TableName", "")))
            )
        return checks or [(action, "*")]
    if action == "TransactGetItems":
        return [
            ("GetItem", _table_arn(entry.get("Get", {}).get("TableName", "")))
            for entry in body.get("TransactItems", [])
        ] or [(action, "*")]
    if action in {"BatchGetItem", "BatchWriteItem"}:
        return [(action, _table_arn(name)) for name in body.get("RequestItems", {})] or [
            (action, "*")
        ]
    table = body.get("TableName")
    if not table:
        return [(action, "*")]
    index = body.get("IndexName")
    return [(action, f"{_table_arn(table)}/index/{index}" if index else _table_arn(table))]


def _secret_arn(response: Any) -> str:
    from moto.secretsmanager.models import secretsmanager_backends  # noqa: PLC0415

    body = _json_body(response)
    secret_id = str(body.get("SecretId") or body.get("Name") or "")
    if secret_id.startswith("arn:"):
        return secret_id
    secrets = secretsmanager_backends[response.current_account][response.region].secrets
    if secret_id in secrets:
        return str(secrets[secret_id].arn)
    # A secret being created: its ARN will be the name plus a random six-character suffix.
    return f"arn:aws:secretsmanager:{REGION}:{ACCOUNT_ID}:secret:{secret_id}-??????"


# ---------------------------------------------------------------------------- S3 presigned URLs


def _refuse_sigv2() -> None:
    from moto.s3.exceptions import S3ClientError  # noqa: PLC0415

    raise S3ClientError(
        "InvalidRequest",
        "The authorization mechanism you have provided is not supported."
        " Please use AWS4-HMAC-SHA256.",
    )


def _authorize_presigned(response: Any, bucket_name: str | None, key_name: str | None) -> None:
    """A request without an Authorization header: a presigned URL, or anonymous."""
    from botocore.auth import S3SigV4QueryAuth  # noqa: PLC0415
    from botocore.awsrequest import AWSRequest  # noqa: PLC0415
    from moto.s3.exceptions import S3AccessDeniedError, S3ClientError  # noqa: PLC0415

    raw_query = response.uri.partition("?")[2]
    pairs = [pair.partition("=") for pair in raw_query.split("&") if pair]
    parameters = {key: _unquote(value) for key, _, value in pairs}
    if "Signature" in parameters and "AWSAccessKeyId" in parameters:
        _refuse_sigv2()
    if parameters.get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256":
        raise S3AccessDeniedError()  # anonymous: the buckets are private
    try:
        access_key_id, _day, region, service, _ = parameters["X-Amz-Credential"].split("/")
        signed_at = datetime.strptime(parameters["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(
            tzinfo=UTC
        )
        expires = int(parameters["X-Amz-Expires"])
        signature = parameters["X-Amz-Signature"]
        signed_headers = parameters["X-Amz-SignedHeaders"].split(";")
    except (KeyError, ValueError) as error:
        raise S3ClientError(
            "AuthorizationQueryParametersError", "Query-string authentication is malformed."
        ) from error
    if datetime.now(UTC) > signed_at + timedelta(seconds=expires):
        raise S3ClientError("AccessDenied", "Request has expired", status_code=403)
    access_key = _signers_key(response, access_key_id, parameters.get("X-Amz-Security-Token"))
    unsigned_query = "&".join(
        pair for pair in raw_query.split("&") if pair and not pair.startswith("X-Amz-Signature=")
    )
    host = str(response.headers.get("Host", ""))
    headers = {name: str(response.headers.get(name, "")) for name in signed_headers}
    headers["host"] = host
    request = AWSRequest(
        method=response.method,
        url=f"http://{host}{response.raw_path}?{unsigned_query}",
        headers=headers,
    )
    request.context["timestamp"] = parameters["X-Amz-Date"]
    signer = S3SigV4QueryAuth(access_key.create_credentials(), service, region, expires=expires)
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    if expected != signature:
        raise S3ClientError(
            "SignatureDoesNotMatch",
            "The request signature we calculated does not match the signature you provided.",
            status_code=403,
        )
    _check_signer(response, access_key, region, bucket_name=bucket_name, key_name=key_name)


def _signers_key(response: Any, access_key_id: str, token: str | None) -> Any:
    """moto's access key of the signer (a user's key or an assumed role's session)."""
    from moto.iam.access_control import CreateAccessKeyFailure, create_access_key  # noqa: PLC0415
    from moto.s3.exceptions import S3ClientError  # noqa: PLC0415

    try:
        return create_access_key(
            account_id=response.current_account,
            partition="aws",
            access_key_id=access_key_id,
            headers={"X-Amz-Security-Token": token} if token else {},
        )
    except CreateAccessKeyFailure as error:
        raise S3ClientError(
            "InvalidAccessKeyId",
            "The AWS Access Key Id you provided does not exist in our records.",
            status_code=403,
        ) from error


def _check_signer(
    response: Any, access_key: Any, region: str, *, bucket_name: str | None, key_name: str | None
) -> None:
    """The signer's own policies decide, as for a request it sent itself."""
    from moto.iam.access_control import S3IAMRequest  # noqa: PLC0415

    checker = S3IAMRequest.__new__(S3IAMRequest)
    checker.account_id = response.current_account
    checker._region = region
    checker._service = "s3"
    checker._data = response.data
    checker._action = f"s3:{response._get_action()}"
    checker._access_key = access_key
    target = f"{bucket_name or '*'}/{key_name}" if key_name else (bucket_name or "*")
    _check(checker, f"arn:aws:s3:::{target}")
    _authorize_s3_key(response, access_key, bucket_name)


def _is_form_upload(response: Any, key_name: str | None) -> bool:
    content_type = str(response.headers.get("Content-Type", ""))
    return (
        response.method == "POST"
        and key_name is None
        and content_type.lower().startswith("multipart/form-data")
    )


def _authorize_form_upload(response: Any, bucket_name: str | None) -> None:
    """A POST Object without an Authorization header: the form's policy is its credential."""
    from moto.s3.exceptions import S3ClientError  # noqa: PLC0415

    request = response.normalized_request
    fields = {name: value for name, value in request.form.items() if name.lower() != "file"}
    files = len(request.files) + sum(1 for name in request.form if name.lower() == "file")
    body = response.raw_body
    size = len(body.encode() if isinstance(body, str) else body or b"")
    form = s3_post_policy.PostForm(
        bucket=bucket_name or "", fields=fields, file_size=size if files == 1 else None
    )
    access_keys: list[Any] = []

    def secret_of(signer: s3_post_policy.SignedBy) -> str:
        access_keys.append(_signers_key(response, signer.access_key_id, signer.session_token))
        return str(access_keys[-1].create_credentials().secret_key)

    try:
        signer = s3_post_policy.check_form(form, secret_of)
    except s3_post_policy.PostRefusal as refusal:
        raise S3ClientError(refusal.code, refusal.message) from refusal
    key = response.querystring.get("key", [""])[0]  # ${filename} already put in by moto
    _check_signer(response, access_keys[-1], signer.region, bucket_name=bucket_name, key_name=key)


def _unquote(value: str) -> str:
    from urllib.parse import unquote  # noqa: PLC0415

    return unquote(value)
