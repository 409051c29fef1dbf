"""Demo media: one radio-traffic transcript (local/sample_radio_traffic.srt) uploaded for
the first demo event of a tenant, through the same ingest logic as the API."""

from datetime import timedelta
from pathlib import Path
from typing import Any

from psap.events.store import get_event
from psap.media.ingest import RadioTrafficTarget, ingest

SAMPLE = Path(__file__).with_name("sample_radio_traffic.srt")


def seed_media(tenant_id: int, event_ids: list[int]) -> dict[str, Any]:
    """Returns the stack.json facts: the event and the media id (none without an event)."""
    event = get_event(tenant_id, event_ids[0]) if event_ids else None
    if event is None or event.id is None:
        return {}
    started = event.event_date + timedelta(seconds=60) if event.event_date else None
    outcome = ingest(
        tenant_id,
        RadioTrafficTarget(
            event_id=event.id, channel="FIRE-DISPATCH-1", recording_started_at=started
        ),
        SAMPLE.read_bytes(),
    )
    return {"eventId": event.id, "radioTrafficMediaId": outcome.media.id}
