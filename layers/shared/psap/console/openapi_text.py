"""Descriptions of the console's sign-in operation (OpenAPI)."""

from psap.console.sessions import DEFAULT_ABSOLUTE, DEFAULT_IDLE, LINK_LIFETIME

TAG_CONSOLE = "Admin: console"

CREATE_LINK = f"""\
Answers a link to the administrators' console at `{{base_url}}/console`, for the calling
Admin credential. The link holds a single-use code, valid {int(LINK_LIFETIME.total_seconds() // 60)}
minutes: the first load of the console exchanges it for a session cookie (HttpOnly,
SameSite=Strict, Secure over https) bound to this tenant and this credential, whose
permissions it has and as which every console action is audited. A session ends after
{int(DEFAULT_IDLE.total_seconds() // 60)} minutes without a request and after
{int(DEFAULT_ABSOLUTE.total_seconds() // 3600)} hours in all (the operator may set other limits per
tenant), and at once when the credential is revoked or expires. See docs/console.md."""
