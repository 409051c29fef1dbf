"""GET /api/v1/external/mcp/resources/media/{mediaId}: one media record with its segments."""

from psap.config import media_bucket
from psap.errors import NotFound
from psap.media import store
from psap.media.models import RadioTrafficMedia


def get_media(tenant_id: int, media_id: int) -> RadioTrafficMedia:
    media = store.get_radio_traffic(media_bucket(), tenant_id, media_id)
    if media is None:
        raise NotFound(f"media {media_id} not found")
    return media
