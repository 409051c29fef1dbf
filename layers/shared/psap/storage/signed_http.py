"""A minimal DynamoDB client over the standard library, signed with AWS Signature V4.

The authorizer runs on every request's cold path and needs one GetItem. Importing botocore
costs more than the whole budget the authorizer has (see `make bench`), so it signs that
one call itself. It reads the same credentials and endpoint variables that botocore does.
"""

import hashlib
import hmac
import http.client
import json
import os
import time
import urllib.parse
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from psap.errors import StoreUnavailable

_RETRYABLE_TYPES = (
    "ThrottlingException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "InternalServerError",
)


def _hmac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode(), hashlib.sha256).digest()


@dataclass(frozen=True)
class HttpRequest:
    """What SigV4 signs of a request."""

    method: str
    host: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class SigningKeys:
    """The caller's AWS credentials, as the Lambda runtime hands them over."""

    access_key: str
    secret_key: str
    session_token: str | None = None

    @classmethod
    def from_environment(cls) -> "SigningKeys":
        return cls(
            os.environ.get("AWS_ACCESS_KEY_ID", ""),
            os.environ.get("AWS_SECRET_ACCESS_KEY", ""),
            os.environ.get("AWS_SESSION_TOKEN"),
        )


def sign_request(
    request: HttpRequest, keys: SigningKeys, *, region: str, service: str, moment: datetime
) -> dict[str, str]:
    """Returns the request's headers plus the SigV4 headers (X-Amz-Date, token,
    Authorization)."""
    method, host, path, headers, body = (
        request.method,
        request.host,
        request.path,
        request.headers,
        request.body,
    )
    access_key, secret_key, session_token = keys.access_key, keys.secret_key, keys.session_token
    amz_date = moment.strftime("%Y%m%dT%H%M%SZ")
    day = moment.strftime("%Y%m%d")
    signed = {key.lower(): value.strip() for key, value in headers.items()}
    signed["host"] = host
    signed["x-amz-date"] = amz_date
    if session_token:
        signed["x-amz-security-token"] = session_token
    names = sorted(signed)
    canonical = "\n".join(
        [
            method,
            urllib.parse.quote(path, safe="/-_.~"),
            "",
            "".join(f"{name}:{signed[name]}\n" for name in names),
            ";".join(names),
            hashlib.sha256(body).hexdigest(),
        ]
    )
    scope = f"{day}/{region}/{service}/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = _hmac(("AWS4" + secret_key).encode(), day)
    for part in (region, service, "aws4_request"):
        key = _hmac(key, part)
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    result = dict(headers)
    result["X-Amz-Date"] = amz_date
    if session_token:
        result["X-Amz-Security-Token"] = session_token
    result["Authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={access_key}/{scope}, "
        f"SignedHeaders={';'.join(names)}, Signature={signature}"
    )
    return result


class _SignedJsonService:
    """One AWS JSON-protocol service over one kept-alive connection per warm container."""

    service = ""
    target_prefix = ""
    endpoint_variable = ""

    def __init__(self) -> None:
        self.region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION", "")
        endpoint = (
            os.environ.get(self.endpoint_variable)
            or os.environ.get("AWS_ENDPOINT_URL")
            or f"https://{self.service}.{self.region}.amazonaws.com"
        )
        parsed = urllib.parse.urlsplit(endpoint)
        self.secure = parsed.scheme == "https"
        self.host = parsed.netloc
        self._connection: http.client.HTTPConnection | None = None

    def _call(self, operation: str, body: bytes) -> dict[str, Any]:
        last_problem = ""
        for attempt in range(3):
            if attempt:
                time.sleep(0.05 * 2**attempt)
            unsigned = HttpRequest(
                method="POST",
                host=self.host,
                path="/",
                headers={
                    "Content-Type": "application/x-amz-json-1.0",
                    "X-Amz-Target": f"{self.target_prefix}.{operation}",
                },
                body=body,
            )
            headers = sign_request(
                unsigned,
                SigningKeys.from_environment(),
                region=self.region,
                service=self.service,
                moment=datetime.now(UTC),
            )
            try:
                connection = self._connect()
                connection.request("POST", "/", body=body, headers=headers)
                response = connection.getresponse()
                payload = response.read()
            except (OSError, http.client.HTTPException) as error:
                self._close()
                last_problem = f"{type(error).__name__}: {error}"
                continue
            answer: dict[str, Any] = json.loads(payload or b"{}")
            if response.status == 200:
                return answer
            error_type = str(answer.get("__type", "")).rsplit("#", 1)[-1]
            last_problem = f"HTTP {response.status} {error_type}"
            if response.status < 500 and error_type not in _RETRYABLE_TYPES:
                break
        raise StoreUnavailable(f"{self.service} {operation} failed: {last_problem}")

    def _connect(self) -> http.client.HTTPConnection:
        if self._connection is None:
            connection_type = (
                http.client.HTTPSConnection if self.secure else http.client.HTTPConnection
            )
            self._connection = connection_type(self.host, timeout=3)
        return self._connection

    def _close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


class SignedDynamoDB(_SignedJsonService):
    """GetItem: the authorizer's credential lookup."""

    service = "dynamodb"
    target_prefix = "DynamoDB_20120810"
    endpoint_variable = "AWS_ENDPOINT_URL_DYNAMODB"

    def get_item(
        self, table: str, key: dict[str, Any], consistent: bool = False
    ) -> dict[str, Any] | None:
        body = json.dumps({"TableName": table, "Key": key, "ConsistentRead": consistent})
        answer = self._call("GetItem", body.encode())
        item: dict[str, Any] | None = answer.get("Item")
        return item


class SignedQueue(_SignedJsonService):
    """SendMessage: the authorizer's audit records of refused credentials."""

    service = "sqs"
    target_prefix = "AmazonSQS"
    endpoint_variable = "AWS_ENDPOINT_URL_SQS"

    def send_message(self, queue_url: str, body: str) -> None:
        self._call("SendMessage", json.dumps({"QueueUrl": queue_url, "MessageBody": body}).encode())
