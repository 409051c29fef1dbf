"""Get one event (mcp resource)."""

from psap.errors import NotFound
from psap.events import store
from psap.events.models import Event


def get_event(tenant_id: int, event_id: int) -> Event:
    event = store.get_event(tenant_id, event_id)
    if event is None:
        raise NotFound(f"event {event_id} not found")
    return event
