"""Records the sample events in events/ act on, made for the first demo tenant.

Most sample events name demo data by its ids, which are the same in every fresh `make run`
(tenant 1, knowledge card 14, incident 105001...). What is random (a delivery id, an upload
id, an export id, a credential to revoke, a connector to disable) is made here and published
in stack.json under the tenant's `sampleEvents`; `psap-local invoke` fills `${NAME}`
placeholders from it (docs/local-development.md).
"""

import os
import secrets
from datetime import timedelta
from typing import Any

from local.demo_cad import RECEIVER_URL_VARIABLE
from psap.audit.exports import AuditExportRequest, create_export
from psap.auth import store as credentials
from psap.auth.credentials import OPERATOR, CredentialKind
from psap.auth.permissions import Permission
from psap.clock import format_timestamp, utc_now
from psap.config import auth_table, incident_upload_bucket
from psap.console import sessions as console
from psap.incidents.upload.models import UploadFormat
from psap.incidents.upload.service import create_upload
from psap.offboarding import exports as tenant_exports
from psap.offboarding.export_models import TenantExportRequest
from psap.storage import s3
from psap.storage.dynamodb import dynamodb
from psap.webhooks.administration import send_test
from psap.webhooks.connectors import NewConnector, create_connector
from psap.webhooks.signing import SigningProfile

# One incident, in the upload file's CSV form (events/incident_upload.json has the same).
UPLOAD_FILE = (
    b"number,priority,incidentType,location,incidentDate,callReceivedTime\n"
    b"2026-000901,2,Traffic Collision,Highway 9 at Mile 12,2026-11-23T04:10:00Z,"
    b"2026-11-23T04:09:12Z\n"
)


def seed_sample_event_records(
    tenant_id: int, admin_credential_id: str, connector_id: str | None
) -> dict[str, Any]:
    """Makes the records and returns the placeholder values, by placeholder name."""
    now = utc_now()
    spare = credentials.issue_credential(
        tenant_id,
        CredentialKind.PARTNER,
        frozenset({Permission.VIEW_KNOWLEDGE}),
        label="demo spare (events/admin_credential_revoke.json revokes it)",
        expires_at=now + timedelta(days=30),
        issued_by=OPERATOR,
    )
    # An upload whose file is in place, as if the client had POSTed it to the upload URL:
    # events/incident_upload_start.json starts it.
    ticket = create_upload(tenant_id, UploadFormat.CSV)
    s3.put_object(
        incident_upload_bucket(), ticket.upload_fields["key"], UPLOAD_FILE, content_type="text/csv"
    )
    export = create_export(
        tenant_id,
        AuditExportRequest.model_validate(
            {"from": (now - timedelta(days=1)).isoformat(), "to": now.isoformat()}
        ),
        admin_credential_id,
    )
    # The stack's export worker finishes it in seconds: events/admin_tenant_export_get.json
    # reads it, and events/admin_tenant_export_create.json may start the next one.
    tenant_export = tenant_exports.create_export(
        tenant_id, TenantExportRequest(), admin_credential_id
    )
    values: dict[str, Any] = {
        **_console_sign_in(tenant_id, admin_credential_id),
        "CREDENTIAL_ID": admin_credential_id,
        "REVOCABLE_CREDENTIAL_ID": spare.credential.credential_id,
        "UPLOAD_ID": ticket.upload_id,
        "AUDIT_EXPORT_ID": export.export_id,
        "TENANT_EXPORT_ID": tenant_export.export_id,
    }
    if connector_id is not None:
        values["DELIVERY_ID"] = send_test(tenant_id, connector_id, now)
        # The events that disable, rotate or change a connector act on this one, so the
        # demo connector keeps delivering to the sample receiver with the secret it knows.
        spare_connector = create_connector(
            tenant_id,
            NewConnector(
                name="Spare connector (for the sample events)",
                url=os.environ[RECEIVER_URL_VARIABLE] + f"/cad/{tenant_id}/spare",
                profile=SigningProfile.BASELINE,
                event_types=None,
                bearer_credential=f"demo-spare-{secrets.token_urlsafe(16)}",
                local_dev=True,
            ),
            now=now,
        )
        values["SPARE_CONNECTOR"] = spare_connector.connector.connector_id
    return values


# The demo's console link and session stay usable for a working day: a sample event is
# invoked whenever a developer gets to it, not within a link's five minutes.
_DEMO_CONSOLE_HOURS = 12


def _console_sign_in(tenant_id: int, admin_credential_id: str) -> dict[str, str]:
    """A sign-in code for events/console_session.json, and an open session (its cookie and
    CSRF value) for events/console_authorizer.json. The code is single use, as every code is:
    the second invoke of that event answers 401."""
    now = utc_now()
    opened = console.exchange(console.create_link(tenant_id, admin_credential_id, now).code, now)
    link = console.create_link(tenant_id, admin_credential_id, now)
    hours = timedelta(hours=_DEMO_CONSOLE_HOURS)
    for key, expression, value in (
        (console.link_key(link.code), "SET expiresAt = :v", format_timestamp(now + hours)),
        (console.session_key(opened.token), "SET idleSeconds = :v", int(hours.total_seconds())),
    ):
        typed = {"S": value} if isinstance(value, str) else {"N": str(value)}
        dynamodb().update_item(
            TableName=auth_table(),
            Key=key,
            UpdateExpression=expression,
            ExpressionAttributeValues={":v": typed},
        )
    return {
        "CONSOLE_CODE": link.code,
        "CONSOLE_SESSION": opened.token,
        "CONSOLE_CSRF": console.csrf_token(opened.token),
    }
