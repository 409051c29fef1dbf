"""The authorizer's own SigV4 signing must equal botocore's, header for header."""

from datetime import UTC, datetime

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from psap.storage.signed_http import HttpRequest, SigningKeys, sign_request

ACCESS_KEY = "AKIDEXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"


@pytest.mark.parametrize("session_token", [None, "session-token-value"])
def test_signature_equals_botocore_sigv4(session_token: str | None) -> None:
    # Given a DynamoDB GetItem request that botocore signs
    body = b'{"TableName": "auth", "Key": {"pk": {"S": "TOKEN#abc"}}}'
    headers = {
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810.GetItem",
    }
    request = AWSRequest(
        method="POST",
        url="https://dynamodb.us-east-1.amazonaws.com/",
        data=body,
        headers=dict(headers),
    )
    credentials = Credentials(ACCESS_KEY, SECRET_KEY, session_token)
    SigV4Auth(credentials, "dynamodb", "us-east-1").add_auth(request)
    moment = datetime.strptime(request.headers["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    # When we sign the same request at the same moment
    ours = sign_request(
        HttpRequest("POST", "dynamodb.us-east-1.amazonaws.com", "/", headers, body),
        SigningKeys(ACCESS_KEY, SECRET_KEY, session_token),
        region="us-east-1",
        service="dynamodb",
        moment=moment,
    )
    # Then the signatures are identical
    assert ours["Authorization"] == request.headers["Authorization"]
    assert ours.get("X-Amz-Security-Token") == request.headers.get("X-Amz-Security-Token")
