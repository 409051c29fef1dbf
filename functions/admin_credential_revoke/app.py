"""POST /api/v1/external/admin/credentials/{credentialId}/revoke: revoke a credential."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from psap.audit.changes import note_change
from psap.auth import openapi_text as text
from psap.auth.issuing import RevokedCredentialView, revoke
from psap.http.resolver import create_resolver, current_principal, lambda_handler

app = create_resolver()


@app.post(
    "/api/v1/external/admin/credentials/<credentialId>/revoke",
    summary="Revoke a credential",
    description=text.REVOKE,
    operation_id="revokeCredential",
    tags=[text.TAG_CREDENTIALS],
)
def revoke_credential(
    credential_id: Annotated[str, Path(alias="credentialId", max_length=64)],
) -> RevokedCredentialView:
    revocation = revoke(current_principal(app).tenant_id, credential_id)
    for revoked in (revocation.credential, *revocation.cascaded):
        note_change("credential", revoked.credential_id, "UPDATED")
    return RevokedCredentialView.of(revocation)


handler = lambda_handler(app)
