"""Lambda REQUEST authorizer for both directions; CREDENTIAL_KIND says which one.

Kept light on purpose (it sits on every request): no resolver, no pydantic, no X-Ray SDK
and no boto3 — one signed GetItem over the standard library.
"""

from typing import Any

from psap.auth.authorizer import Unauthorized, authorize
from psap.auth.credentials import (
    Credential,
    CredentialKind,
    credential_from_attributes,
    lookup_key,
)
from psap.clock import utc_now
from psap.config import auth_table, settings
from psap.observability import logger
from psap.storage.attributes import from_item
from psap.storage.signed_http import SignedDynamoDB

KIND = CredentialKind(settings().credential_kind)
TABLE = auth_table()
store = SignedDynamoDB()


def find_credential(hashed_token: str) -> Credential | None:
    item = store.get_item(TABLE, lookup_key(hashed_token))
    return credential_from_attributes(from_item(item)) if item else None


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    try:
        credential, answer = authorize(event, KIND, find_credential, utc_now())
    except Unauthorized as refusal:
        logger.info("credential refused", extra={"why": refusal.why, "interface": KIND.value})
        raise
    logger.append_keys(tenant_id=credential.tenant_id, credential_id=credential.credential_id)
    logger.info("credential accepted", extra={"interface": KIND.value})
    return answer
