"""GET /api/v1/external/admin/connectors/{connectorId}/stats: the console's charts."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from psap.clock import utc_now
from psap.http.resolver import create_resolver, current_principal, lambda_handler
from psap.webhooks import openapi_text as text
from psap.webhooks.connector_stats import ConnectorStats, StatsWindow, connector_stats

app = create_resolver()


@app.get(
    "/api/v1/external/admin/connectors/<connectorId>/stats",
    summary="A connector's deliveries per hour and attempt latency",
    description=text.CONNECTOR_STATS,
    operation_id="getConnectorStats",
    tags=[text.TAG_DELIVERIES],
)
def get_connector_stats(
    connector_id: Annotated[str, Path(alias="connectorId", max_length=64)],
    window: Annotated[StatsWindow, Query(description="24h or 7d")] = StatsWindow.DAY,
) -> ConnectorStats:
    return connector_stats(
        current_principal(app).tenant_id, connector_id, window=window, now=utc_now()
    )


handler = lambda_handler(app)
