"""Lambda REQUEST authorizer for both directions; CREDENTIAL_KIND says which one.

Kept light on purpose (it sits on every request): no resolver, no pydantic, no X-Ray SDK
and no boto3 — one signed GetItem over the standard library.
"""

from typing import Any

from psap.audit.refusals import audit_refusal
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
# The last lookup (token hash, credential): a refusal's audit record names the credential the
# token matched without reading it again.
last_lookup: tuple[str, Credential | None] = ("", None)


def find_credential(hashed_token: str) -> Credential | None:
    global last_lookup  # noqa: PLW0603 - one request at a time per Lambda environment
    item = store.get_item(TABLE, lookup_key(hashed_token))
    last_lookup = (hashed_token, credential_from_attributes(from_item(item)) if item else None)
    return last_lookup[1]


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    try:
        credential, answer = authorize(event, KIND, find_credential, utc_now())
    except Unauthorized as refusal:
        logger.info("credential refused", extra={"why": refusal.why, "interface": KIND.value})
        audit_refusal(event, KIND.value, last_lookup, utc_now())
        raise
    logger.append_keys(tenant_id=credential.tenant_id, credential_id=credential.credential_id)
    logger.info("credential accepted", extra={"interface": KIND.value})
    return answer
