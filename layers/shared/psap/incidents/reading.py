"""Get one incident (mcp resource)."""

from psap.errors import NotFound
from psap.incidents import store
from psap.incidents.models import Incident


def get_incident(tenant_id: int, incident_id: int) -> Incident:
    incident = store.get_incident(tenant_id, incident_id)
    if incident is None:
        raise NotFound(f"incident {incident_id} not found")
    return incident
