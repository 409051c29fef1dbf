"""Wire shapes of the console's sign-in link and session answers."""

from pydantic import Field

from psap.models import RequestModel, Timestamp, WireModel


class ConsoleLinkView(WireModel):
    """A single-use sign-in link (the code in its fragment is spent by the first load)."""

    url: str
    expires_at: Timestamp


class ConsoleSessionView(WireModel):
    """The open session, as the console page learns it (never the session token)."""

    tenant_id: int
    credential_id: str
    label: str
    permissions: list[str]
    csrf_token: str  # sent back in X-Console-Csrf on every console API call
    expires_at: Timestamp
    idle_minutes: int


class OpenSessionBody(RequestModel):
    """The sign-in link's code, spent by this request."""

    code: str = Field(min_length=1, max_length=100)
