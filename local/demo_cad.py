"""Demo CAD connection for the local stack: one connector per demo tenant, pointing at the
sample CAD receiver (local/cad_receiver.py) that the stack runs on its own loopback port.

The connector is in local-dev mode (http on loopback), which only the local stack's
deployment parameter (WebhookLocalDev=true) lets the dispatcher use.
"""

import os
import secrets
from typing import Any

from psap.clock import utc_now

RECEIVER_URL_VARIABLE = "CAD_RECEIVER_URL"


def receiver_path(tenant_id: int) -> str:
    return f"/cad/{tenant_id}/webhooks"


def seed_cad_connector(tenant_id: int, name: str) -> dict[str, Any] | None:
    """Creates the tenant's demo connector; None when the stack runs no sample receiver."""
    base_url = os.environ.get(RECEIVER_URL_VARIABLE)
    if not base_url:
        return None
    # Imported here: the stack imports this module for RECEIVER_URL_VARIABLE before it sets
    # the functions' environment, and psap's logger reads its level once, on import.
    from psap.webhooks.connectors import NewConnector, create_connector  # noqa: PLC0415
    from psap.webhooks.signing import SigningProfile  # noqa: PLC0415

    # What the CAD vendor would issue to the service for calling its endpoint.
    bearer = f"demo-cad-{secrets.token_urlsafe(16)}"
    created = create_connector(
        tenant_id,
        NewConnector(
            name=f"{name} CAD (sample receiver)",
            url=base_url + receiver_path(tenant_id),
            profile=SigningProfile.BASELINE,
            event_types=None,
            bearer_credential=bearer,
            local_dev=True,
        ),
        now=utc_now(),
    )
    return {
        "connectorId": created.connector.connector_id,
        "url": created.connector.url,
        "path": receiver_path(tenant_id),
        # Demo values, like the demo tokens: stack.json is local and git-ignored.
        "signingSecret": created.signing_secret,
        "bearerCredential": bearer,
    }
